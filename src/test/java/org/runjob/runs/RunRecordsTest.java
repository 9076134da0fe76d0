package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.logs.RunFolder;
import org.runjob.run.Owned;
import org.runjob.testbed.Testbed;

import tools.jackson.databind.json.JsonMapper;

class RunRecordsTest {

    @TempDir
    Path tmp;

    @Test
    void aSummaryBeingWrittenIsNoSummaryYet() throws Exception {
        Path folder = Files.createDirectories(tmp.resolve("job/20261202-120000-abcd"));
        for (String begun : new String[] {"", "{\"result\": \"succ"}) {
            Files.writeString(folder.resolve("summary.json"), begun);
            RunRecords.Run r = RunRecords.read(folder, Map.of());
            assertThat(r.summary()).as("summary.json of '" + begun + "'").isEmpty();
            assertThat(r.exitCode()).isEmpty();
        }
        RunFolder.of(folder).writeJson("summary.json", JsonMapper.builder().build().createObjectNode().put("result", "succeeded")
                .put("exit_code", 0));
        RunRecords.Run done = RunRecords.read(folder, Map.of());
        assertThat(done.state()).isEqualTo("succeeded");
        assertThat(done.exitCode()).isEqualTo(Optional.of(0));
        try (var files = Files.list(folder)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).as("no temporary file left").containsExactly("summary.json");
        }
    }

    @Test
    void aRecordLargerThanRunjobWritesIsNotReadAndTheOtherRunsAreStillListed() throws Exception {
        Path big = Files.createDirectories(tmp.resolve("runs/job/20261202-120000-aaaa"));
        String pad = "x".repeat(17 << 20);
        Files.writeString(big.resolve("status.json"), "{\"state\": \"running\", \"pad\": \"" + pad + "\"}");
        Path fine = Files.createDirectories(tmp.resolve("runs/job/20261202-120001-bbbb"));
        RunFolder.of(fine).writeJson("summary.json", JsonMapper.builder().build().createObjectNode().put("result", "succeeded")
                .put("exit_code", 0));
        Cli runs = Cli.run(Map.of(), "runs", "--logs-dir", tmp.resolve("runs").toString());
        assertThat(runs.code()).as(runs.err()).isZero();
        assertThat(runs.out()).containsPattern("20261202-120000-aaaa +job +unreadable ").containsPattern("20261202-120001-bbbb +job +succeeded ");
        Cli status = Cli.run(Map.of(), "status", "20261202-120000-aaaa", "--logs-dir", tmp.resolve("runs").toString());
        assertThat(status.out()).contains("why: status.json is 17 MiB, more than the 16 MiB runjob reads back: not runjob's\n");
    }

    @Test
    void anAmbiguousIdListsTheNewestEightOneALineAndCountsTheRest() throws Exception {
        for (int i = 0; i < 27; i++) {
            Path f = Files.createDirectories(tmp.resolve(String.format("runs/job/20261202-1200%02d-aaaa", i)));
            RunFolder.of(f).writeJson("summary.json", JsonMapper.builder().build().createObjectNode().put("result", "succeeded")
                    .put("exit_code", 0));
        }
        Cli pull = Cli.run(Map.of(), "status", "2026", "--logs-dir", tmp.resolve("runs").toString());
        assertThat(pull.code()).isEqualTo(2);
        StringBuilder expected = new StringBuilder("runjob: 2026 names 27 runs; give more of the id, or JOB/ID:\n");
        for (int i = 26; i >= 19; i--) {
            expected.append(String.format("  job/20261202-1200%02d-aaaa%n", i));
        }
        expected.append("  ... and 19 older (runjob runs lists them all)\n");
        assertThat(pull.err()).isEqualTo(expected.toString());
    }

    @Test
    void anotherUsersRunFolderOrIndexIsNeitherListedNorResumed() throws Exception {
        Testbed.require(Owned.myUid() == 0, "root, to give files to another uid");
        Path runs = tmp.resolve("runs");
        Path planted = Files.createDirectories(runs.resolve("job/20261202-120000-aaaa"));
        Files.writeString(planted.resolve("job.yaml"), "name: job\nnodes: [{name: n, local: true}]\nentrypoint: {command: [touch, "
                + tmp.resolve("pwned") + "]}\n");
        RunFolder.of(planted).writeJson("summary.json", JsonMapper.builder().build().createObjectNode().put("result", "failed")
                .put("exit_code", 1));
        Files.setAttribute(planted, "unix:uid", 4321);
        Path open = Files.createDirectories(runs.resolve("job/20261202-120001-bbbb"));
        RunFolder.of(open).writeJson("summary.json", JsonMapper.builder().build().createObjectNode().put("result", "failed").put("exit_code", 1));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        // an index directory another user made first, open to all, with an entry naming the planted folder
        Path state = tmp.resolve("state");
        Path index = Files.createDirectories(state.resolve("runjob/runs"));
        Files.writeString(index.resolve("20261202-120000-aaaa.json"), "{\"run_id\": \"20261202-120000-aaaa\", \"job\": \"job\", \"started\": \"x\","
                + " \"folder\": \"" + planted + "\"}");
        Files.setPosixFilePermissions(index, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.setAttribute(index, "unix:uid", 4321);
        Map<String, String> env = Map.of("XDG_STATE_HOME", state.toString(), "HOME", tmp.toString(), "PATH", System.getenv("PATH"));

        Cli list = Cli.run(env, "runs", "--logs-dir", runs.toString());
        assertThat(list.code()).isZero();
        assertThat(list.out().lines().count()).as(list.out()).isEqualTo(1);
        assertThat(list.err()).contains("runjob: note: left out: the run folder " + planted + " is owned by uid 4321, not by you (uid 0) or root")
                .contains("runjob: note: left out: the run folder " + open + " is writable by other users (mode 0777): chmod go-w " + open);
        Cli everywhere = Cli.run(env, "runs");
        assertThat(everywhere.err()).contains("runjob: note: left out: the run index " + index + " is owned by uid 4321");
        assertThat(everywhere.out()).doesNotContain("20261202-120000-aaaa");

        Cli resume = Cli.run(env, "resume", "20261202-120000-aaaa", "--logs-dir", runs.toString());
        assertThat(resume.code()).as(resume.err()).isEqualTo(2);
        assertThat(resume.err()).contains("the run folder " + planted + " is owned by uid 4321");
        Cli byPath = Cli.run(env, "logs", planted.toString());
        assertThat(byPath.code()).isEqualTo(2);
        assertThat(byPath.err()).isEqualTo("runjob: the run folder " + planted + " is owned by uid 4321, not by you (uid 0) or root: another"
                + " user could have planted it\n");
        assertThat(tmp.resolve("pwned")).doesNotExist();
    }

    @Test
    void aSubmittedRunWhoseMasterCannotBeReachedReadsUnreachableAndItsEndOnceKnownIsKept() throws Exception {
        Path state = tmp.resolve("state");
        Path index = Files.createDirectories(state.resolve("runjob/runs"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        // a master node at an address nothing answers, reached with a 1 s connect timeout
        String reach = "{\"name\": \"far\", \"nodes\": [{\"name\": \"h1\", \"host\": \"192.0.2.1\"}], \"entrypoint\": {\"command\": [\"true\"]},"
                + " \"ssh\": {\"connect_timeout_s\": 1, \"known_hosts\": \"" + tmp.resolve("known_hosts") + "\"}}";
        Files.writeString(index.resolve("20261202-120000-aaaa.json"), "{\"run_id\": \"20261202-120000-aaaa\", \"job\": \"far\", \"started\":"
                + " \"2026-12-02T12:00:00Z\", \"folder\": \"/root/.runjob/submitted/far/20261202-120000-aaaa\", \"node\": \"h1\", \"reach\": " + reach + "}");
        Files.writeString(index.resolve("20261202-120001-bbbb.json"), "{\"run_id\": \"20261202-120001-bbbb\", \"job\": \"far\", \"started\":"
                + " \"2026-12-02T12:00:01Z\", \"folder\": \"/x\", \"node\": \"h1\", \"reach\": " + reach + ", \"end\": {\"state\":"
                + " \"succeeded\", \"exit_code\": 0, \"started\": \"2026-12-02T12:00:02Z\", \"ended\": \"2026-12-02T12:00:12.5Z\"}}");
        Map<String, String> env = Map.of("XDG_STATE_HOME", state.toString(), "HOME", tmp.toString(), "PATH", System.getenv("PATH"));
        Cli runs = Cli.run(env, "runs", "-o", "text");
        assertThat(runs.code()).as(runs.err()).isZero();
        assertThat(runs.out()).containsPattern("20261202-120000-aaaa +far +submitted to h1 \\(unreachable\\) ")
                .containsPattern("20261202-120001-bbbb +far +succeeded on h1 +2026-12-02T12:00:02Z +10\\.5s +0 ");
    }
}
