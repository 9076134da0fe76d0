package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.distribute.Sha256;
import org.runjob.session.PinnedJar;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.SshTestbed;
import org.runjob.testbed.Testbed;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Workdirs as real clusters have them, on real sshd hosts: shared by several nodes (one home over
 * NFS), used by two runs at once, holding symlinks, writable by another user, full.
 */
@OnSshTestbed
class WorkdirSafetyTest {

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
    }


    /** A node line with an explicit workdir (several nodes given one path share it: the testbed has one file system). */
    String node(SshTestbed.Host h, Path workdir) {
        return "  - {name: " + h.name() + ", host: " + h.address() + ", port: " + h.port() + ", user: root, workers: 1, workdir: "
                + workdir + "}\n";
    }

    Path data(String name, String text) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("src-" + name));
        return Files.writeString(dir.resolve("data.txt"), text);
    }

    List<Path> files(Path... more) {
        List<Path> files = new ArrayList<>(jobs.worker("show.py"));
        files.addAll(List.of(more));
        return files;
    }

    static JsonNode runFile(Path logs, String job, String file) throws Exception {
        try (Stream<Path> runs = Files.list(logs.resolve(job))) {
            return JsonMapper.builder().build().readTree(Files.readString(runs.findFirst().orElseThrow().resolve(file)));
        }
    }

    /** One directory for every run: these tests are about what runs find in the workdir itself. */
    static final String SHARED = "runs_share_workdir: true\n";

    @Test
    void threeNodesSharingOneWorkdirGetTheFilesOnceRunAfterRun() throws Exception {
        Path data = data("shared", "from the coordinator");
        for (int round = 1; round <= 3; round++) {
            Path shared = tmp.resolve("shared-" + round);
            Path job = jobs.job("shared" + round, node(jobs.bed.host(1), shared) + node(jobs.bed.host(2), shared)
                    + node(jobs.bed.host(3), shared), files(data), List.of("python3", "show.py"), SHARED, Map.of());
            Cli r = jobs.run(job);
            assertThat(r.code()).as("round %d: %s", round, r.err()).isZero();
            assertThat(r.err()).as("an rc file's stderr noise is no error").doesNotContain("rm: cannot remove");
            JsonNode checks = runFile(jobs.logs, "shared" + round, "preflight.json").get("nodes");
            // whichever node is ready first sends; the others find the files there
            List<String> details = new ArrayList<>();
            checks.forEach(n -> details.add(n.get("checks").get("workdir").get("detail").stringValue()));
            assertThat(details).filteredOn(d -> d.matches("3 sent \\(\\d+ B\\), 0 kept; workdir shared by h1, h2, h3: shipped once")).hasSize(1);
            assertThat(details).filteredOn(d -> d.equals("workdir shared by h1, h2, h3: shipped once")).hasSize(2);
            for (int rank = 0; rank < 3; rank++) {
                assertThat(r.out()).contains("[h" + (rank + 1) + "/" + rank + "] rank " + rank + " data from the coordinator\n");
            }
            JsonNode d = runFile(jobs.logs, "shared" + round, "summary.json").get("distribution");
            List<Integer> sent = List.of("h1", "h2", "h3").stream().map(n -> d.get(n).get("files_sent").intValue()).toList();
            List<Integer> unchanged = List.of("h1", "h2", "h3").stream().map(n -> d.get(n).get("files_unchanged").intValue()).toList();
            assertThat(sent).as("one node sends the 3 files").containsExactlyInAnyOrder(3, 0, 0);
            assertThat(unchanged).as("the others find them there").containsExactlyInAnyOrder(0, 3, 3);
            assertThat(sent.indexOf(3)).isEqualTo(unchanged.indexOf(0));
            try (Stream<Path> left = Files.list(shared)) {
                assertThat(left.map(p -> p.getFileName().toString()).filter(n -> !n.equals("__pycache__")).sorted())
                        .containsExactly(".runjob", "common.py", "data.txt", "show.py");
            }
        }
        // h3's login shell printed a banner on stdout: skipped, and noted in runjob.log
        try (Stream<Path> runs = Files.list(jobs.logs.resolve("shared1"))) {
            Path log = runs.findFirst().orElseThrow().resolve("runjob.log");
            assertThat(Files.readString(log)).contains("node h3: the login shell printed: Welcome to h3 (conda base activated)")
                    .contains("node h3: the login shell or bootstrap printed on stderr: rm: cannot remove /tmp/x: No such file");
        }
    }

    @Test
    void aSecondRunOnABusyWorkdirIsRefusedAndTheFirstKeepsItsData() throws Exception {
        Path w = tmp.resolve("busy");
        Path first = jobs.job("first", node(jobs.bed.host(2), w), files(data("a", "data of the first run")),
                List.of("python3", "show.py"), SHARED, Map.of("HOLD", "1"));
        Process running = jobs.start(first);
        toClean.addAll(jobs.awaitPids(1, Duration.ofSeconds(60)));
        Path second = jobs.job("second", node(jobs.bed.host(3), w), files(data("b", "data of the second run")),
                List.of("python3", "show.py"), SHARED, Map.of());
        Cli r = jobs.run(second);
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL h3 workdir: workdir " + w + " is in use by run ").contains(" of job first (user root")
                .contains("runs that share a workdir (runs_share_workdir: true) run one at a time").contains("preflight failed: nothing was started");
        assertThat(Files.readString(w.resolve("data.txt"))).isEqualTo("data of the first run");
        running.destroy();
        assertThat(running.waitFor(30, TimeUnit.SECONDS)).isTrue();
        // once the first run is gone, the second runs, with its own data
        Cli again = jobs.run(second, "--set", "logs.dir=" + tmp.resolve("runs2"));
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.out()).contains("[h3/0] rank 0 data data of the second run\n");
    }

    @Test
    void nothingIsWrittenThroughASymlinkInTheWorkdir() throws Exception {
        Path w = Files.createDirectories(tmp.resolve("links"));
        Path precious = Files.createDirectories(tmp.resolve("precious"));
        Files.writeString(precious.resolve("x.bin"), "checkpoint");
        Files.createSymbolicLink(w.resolve("sub"), precious);
        Path src = Files.createDirectories(tmp.resolve("src-links/sub"));
        Files.writeString(src.resolve("x.bin"), "overwritten?");
        Path job = jobs.job("dirlink", node(jobs.bed.host(2), w), files(data("l", "d"), src), List.of("python3", "show.py"), SHARED, Map.of());
        Cli r = jobs.run(job);
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL h2 workdir: shipping failed: refusing to write sub/x.bin through the symlink " + w.resolve("sub")
                + " -> " + precious + " (in workdir " + w + "); remove the link or ship it elsewhere");
        assertThat(Files.readString(precious.resolve("x.bin"))).isEqualTo("checkpoint");

        // a symlink at a destination is replaced by the file, never written through; old fixed temporary names are never used
        Files.delete(w.resolve("sub"));
        Path victim = Files.writeString(tmp.resolve("victim"), "secret");
        Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
        Path victim2 = Files.writeString(tmp.resolve("victim2"), "secret2");
        Files.createSymbolicLink(w.resolve("data.txt"), victim);
        Files.createSymbolicLink(w.resolve("data.txt.runjob-tmp"), victim2);
        Cli ok = jobs.run(job, "--set", "logs.dir=" + tmp.resolve("runs2"));
        assertThat(ok.code()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("[h2/0] rank 0 data d\n");
        assertThat(Files.isSymbolicLink(w.resolve("data.txt"))).isFalse();
        assertThat(Files.readString(w.resolve("data.txt"))).isEqualTo("d");
        assertThat(Files.readString(victim)).isEqualTo("secret");
        assertThat(Files.getPosixFilePermissions(victim)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(Files.readString(victim2)).isEqualTo("secret2");
    }

    @Test
    void aRunsOwnDirectoryIsMadeInsideTheWorkdirNeverThroughASymlink() throws Exception {
        Path w = Files.createDirectories(tmp.resolve("perrun"));
        Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
        Files.createSymbolicLink(w.resolve("runs"), elsewhere);
        Path job = jobs.job("perrun", node(jobs.bed.host(2), w), files(data("r", "d")), List.of("python3", "show.py"), "", Map.of());
        Cli r = jobs.run(job);
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL h2 workdir: " + w.resolve("runs") + " is a symlink; runjob never writes through one: remove it");
        try (var left = Files.list(elsewhere)) {
            assertThat(left).as("nothing created through the link").isEmpty();
        }
        // without the link, the run works in WORKDIR/runs/RUN and its files are kept once per content beside it
        Files.delete(w.resolve("runs"));
        Cli ok = jobs.run(job, "--set", "logs.dir=" + tmp.resolve("runs2"));
        assertThat(ok.code()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("[h2/0] rank 0 data d\n");
        try (var runs = Files.list(w.resolve("runs")); var stored = Files.list(w.resolve(".runjob/files"))) {
            List<Path> all = runs.toList();
            assertThat(all).hasSize(1);
            Path run = all.get(0);
            assertThat(Files.readString(run.resolve("data.txt"))).isEqualTo("d");
            // at most 755, as the node's umask allows: never writable by others
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(run))).matches("rwx[r-]-[x-][r-]-[x-]");
            assertThat(stored.count()).isEqualTo(3); // data.txt, common.py and show.py
        }
    }

    @Test
    void aWorkdirAnotherUserCanWriteIsRefused() throws Exception {
        Path open = Files.createDirectories(tmp.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path job = jobs.job("open", node(jobs.bed.host(2), open), files(data("o", "d")), List.of("python3", "show.py"), "", Map.of());
        Cli r = jobs.run(job);
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL h2 workdir: " + open + " is writable by other users (mode 0777): they could plant code the job"
                + " runs; chmod go-w " + open);
        assertThat(open.resolve("show.py")).doesNotExist();

        Path theirs = Files.createDirectories(tmp.resolve("theirs"));
        Testbed.require(Testbed.runs("chown", "65534:65534", theirs.toString()), "chown");
        Cli other = jobs.run(job, "--set", "nodes[h2].workdir=" + theirs);
        assertThat(other.code()).isEqualTo(3);
        assertThat(other.err()).contains("FAIL h2 workdir: " + theirs + " is owned by uid 65534, not by you (uid 0)");
        assertThat(theirs.resolve("show.py")).doesNotExist();
    }

    @Test
    void aSymlinkAnotherUserPlantedOnTheWayIsRefusedBeforeAnythingIsCreated() throws Exception {
        // a sticky, world-writable directory (as /tmp) where uid 65534 planted a link to a directory of root's
        Path sticky = Files.createDirectories(tmp.resolve("sticky"));
        Files.setPosixFilePermissions(sticky, PosixFilePermissions.fromString("rwxrwxrwx"));
        Testbed.require(Testbed.runs("chmod", "+t", sticky.toString()), "chmod");
        Path victim = Files.createDirectories(tmp.resolve("roots"));
        Path link = Files.createSymbolicLink(sticky.resolve("scratch"), victim);
        Testbed.require(Testbed.runs("chown", "-h", "65534:65534", link.toString()), "chown");
        Path job = jobs.job("planted-link", node(jobs.bed.host(2), link.resolve("work")), files(data("l", "d")),
                List.of("python3", "show.py"), "", Map.of());
        Cli r = jobs.run(job);
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL h2 workdir: " + link + " (a symlink on the way to the workdir " + link.resolve("work")
                + ") is owned by uid 65534, not by you or root");
        try (var left = Files.list(victim)) {
            assertThat(left).as("nothing created through the link").isEmpty();
        }
    }

    @Test
    void aPlantedAgentJarOfTheRightSizeAndTimeIsReplacedNotRun() throws Exception {
        PinnedJar jar = PinnedJar.agent();
        Path cached = jobs.bed.cache().resolve("runjob/agents/" + jar.sha256() + ".jar");
        Files.createDirectories(cached.getParent());
        Files.write(cached, new byte[(int) jar.size()]);
        Files.setLastModifiedTime(cached, Files.getLastModifiedTime(jar.path()));
        Path job = jobs.job("planted", node(jobs.bed.host(2), tmp.resolve("p")), files(data("p", "d")), List.of("python3", "show.py"), "",
                Map.of());
        Cli r = jobs.run(job);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(Sha256.of(cached)).isEqualTo(jar.sha256());
    }

    @Test
    void aFullDiskIsNamedAndLeavesNothingBehind() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        Path small = Files.createDirectories(tmp.resolve("small"));
        // a 70 MiB file system that only h2 sees (mounted in its sshd's mount namespace): enough for preflight's disk
        // check (64 MiB), too small for an 80 MiB file
        Testbed.require(jobs.bed.inMounts(h2, "mount", "-t", "tmpfs", "-o", "size=70m", "tmpfs", small.toString()).isEmpty(), "mount (tmpfs)");
        try {
            Path big = Files.createDirectories(tmp.resolve("src-big")).resolve("data.txt");
            try (RandomAccessFile f = new RandomAccessFile(big.toFile(), "rw")) {
                f.setLength(80L << 20);
            }
            Path job = jobs.job("full", node(h2, small.resolve("w")), files(big), List.of("python3", "show.py"), SHARED, Map.of());
            Cli r = jobs.run(job);
            assertThat(r.code()).isEqualTo(3);
            assertThat(r.err()).containsPattern("FAIL h2 workdir: shipping failed: no space left in workdir " + small.resolve("w")
                    + ": needs 81 MiB, \\d+ MiB free");
            assertThat(jobs.bed.inMounts(h2, "find", small.toString(), "-not", "-path", "*/.runjob*")).isEqualTo(small + "\n" + small.resolve("w") + "\n");
            try (Stream<Path> here = Files.list(small)) {
                assertThat(here).as("the tmpfs is h2's alone").isEmpty();
            }
        } finally {
            jobs.bed.inMounts(h2, "umount", small.toString());
        }
    }
}
