package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.OnSlurmTestbed;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;
import org.runjob.testbed.Testbed;

import tools.jackson.databind.json.JsonMapper;

/**
 * The job's environment on real sshd hosts, with venvs made by {@code python3 -m venv
 * --system-site-packages} (Debian's python3 and torch inside): each node runs the interpreter of
 * its own venv and preflight names that one; sourced scripts and modules reach the workers; a
 * node whose torch differs stops the launch; setup runs once per node per content.
 */
// on the Slurm cluster's SSH hosts: it needs only SSH hosts, and that stream is the shorter
@OnSlurmTestbed
class EnvironmentTest {

    static final String PYTHON = "/usr/bin/python3";

    @TempDir
    Path tmp;

    ClusterJobs jobs;

    @BeforeEach
    void setUp() throws Exception {
        jobs = ClusterJobs.onSlurmHosts(tmp);
        Testbed.require(Testbed.runs(PYTHON, "-c", "import torch, venv"), "PyTorch and venv for " + PYTHON
                + " (Debian: python3-torch, python3-venv)");
    }

    /** A venv of Debian's python3 that sees its torch. */
    private Path venv(String name) throws Exception {
        Path dir = tmp.resolve("envs").resolve(name);
        Process p = new ProcessBuilder(PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", dir.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0).as(out).isTrue();
        return dir;
    }

    /** What Debian's python3 and torch say they are: "3.11.2 1.13.0a0". */
    private static String[] versions() throws Exception {
        Process p = new ProcessBuilder(PYTHON, "-c", "import sys, torch; print('%d.%d.%d' % sys.version_info[:3], torch.__version__)").start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor()).isZero();
        return out.split(" ");
    }

    private static String node(ClusterJobs jobs, int host, int workers, String environment) {
        String line = jobs.node(jobs.bed.host(host), workers);
        return environment.isEmpty() ? line : line.replace("}\n", ", environment: " + environment + "}\n");
    }

    @Test
    void eachNodeRunsItsOwnVenvWithTheScriptAndModulesAndPreflightNamesThatInterpreter() throws Exception {
        Path t1 = venv("t1");
        Path t2 = venv("t2");
        Path modules = Files.createDirectories(tmp.resolve("modules/init"));
        // a stand-in module system, found through MODULESHOME as Lmod and Environment Modules are
        Files.writeString(modules.resolve("bash"), "module() { [ \"$1\" = load ] || return 1; export LOADEDMODULES=\"${LOADEDMODULES:+$LOADEDMODULES:}$2\"; }\n");
        Path script = Files.writeString(tmp.resolve("env.sh"), "echo 'this goes to the activation log, not the run'\nexport FROM_SCRIPT=\"sourced-on-$RUNJOB_NODE\"\n");
        Path job = jobs.job("venvs", node(jobs, 1, 2, "{venv: " + t1 + "}") + node(jobs, 2, 1, "{venv: " + t2 + "}") + node(jobs, 3, 1, ""),
                List.of(ClusterJobs.WORKERS.resolve("whoami.py"), script), List.of("python3", "whoami.py"),
                "environment: {modules: [cuda/12.1, nccl/2.18], source: [env.sh]}\n", Map.of("MODULESHOME", tmp.resolve("modules").toString()));

        Cli r = jobs.run(job);
        assertThat(r.code()).as(r.err()).isZero();
        String tail = " script sourced-on-%s modules cuda/12.1:nccl/2.18 container False";
        assertThat(r.out().lines().filter(l -> l.contains("] rank ")).sorted().toList()).containsExactly(
                "[h1/0] rank 0 python " + t1 + "/bin/python3" + tail.formatted("h1"),
                "[h1/1] rank 1 python " + t1 + "/bin/python3" + tail.formatted("h1"),
                "[h2/2] rank 2 python " + t2 + "/bin/python3" + tail.formatted("h2"),
                "[h3/3] rank 3 python " + PYTHON + tail.formatted("h3"));
        String[] v = versions();
        String facts = " (Python " + v[0] + ", torch " + v[1] + ")";
        // not on a terminal the table cuts no cell: each node's program cell names the interpreter its ranks ran
        assertThat(r.err()).contains("ok python3 -> " + t1 + "/bin/python3" + facts + "  ")
                .contains("ok python3 -> " + t2 + "/bin/python3" + facts + "  ")
                .contains("ok python3 -> " + PYTHON + facts + "  ")
                .contains("ok venv " + t1 + ", modules cuda/12.1,nccl/2.18, source env.sh  ")
                .doesNotContain("this goes to the activation log");
    }

    @Test
    void aNodeWhoseTorchDiffersStopsTheLaunchNamingItUnlessOnSkewWarns() throws Exception {
        Path odd = venv("odd");
        // a package that shadows Debian's torch in one node's venv, reporting another version
        Path torch = Files.createDirectories(odd.resolve("lib/python" + versions()[0].replaceFirst("\\.\\d+$", "") + "/site-packages/torch"));
        Files.writeString(torch.resolve("__init__.py"), "");
        Files.writeString(torch.resolve("version.py"), "__version__ = '2.1.0'\ncuda = None\n");
        Path job = jobs.job("skew", node(jobs, 1, 1, "") + node(jobs, 2, 1, "{venv: " + odd + "}") + node(jobs, 3, 1, ""),
                jobs.worker("whoami.py"), List.of("python3", "whoami.py"), "", Map.of());

        Cli refused = jobs.run(job);
        assertThat(refused.code()).as(refused.err()).isEqualTo(3);
        assertThat(refused.err()).contains("FAIL h2 env: torch 2.1.0 here, " + versions()[1] + " on h1, h3: every node must run the same"
                + " (on_skew: warn lets the run start)\n").contains("preflight failed: nothing was started")
                .doesNotContain("FAIL h1").doesNotContain("FAIL h3");
        assertThat(refused.out()).doesNotContain("] rank ");

        Cli warned = jobs.run(job, "--set", "environment.on_skew=warn");
        assertThat(warned.code()).as(warned.err()).isZero();
        assertThat(warned.err()).contains("warn h2 env: torch 2.1.0 here, " + versions()[1] + " on h1, h3");
        assertThat(warned.out().lines().filter(l -> l.contains("] rank ")).count()).isEqualTo(3);
    }

    private long marks(Path marks, String node) throws Exception {
        Path f = marks.resolve(node);
        return Files.exists(f) ? Files.readAllLines(f).size() : 0;
    }

    @Test
    void setupRunsOncePerNodePerContentAndAFailingOneStartsNoWorkerAnywhere() throws Exception {
        Path marks = Files.createDirectories(tmp.resolve("marks"));
        Path pkg = Files.writeString(tmp.resolve("pkg.txt"), "v1\n");
        String setup = "environment: {setup: ['echo \"setting up $RUNJOB_NODE\"; cat pkg.txt >> " + marks + "/$RUNJOB_NODE']}\n";
        Path job = jobs.job("setup", node(jobs, 1, 1, "") + node(jobs, 2, 1, ""), List.of(ClusterJobs.WORKERS.resolve("whoami.py"), pkg),
                List.of("python3", "whoami.py"), setup, Map.of());

        Cli first = jobs.run(job);
        assertThat(first.code()).as(first.err()).isZero();
        assertThat(first.err()).contains("[h1/setup] setting up h1\n").contains("[h2/setup] setting up h2\n");
        assertThat(List.of(marks(marks, "h1"), marks(marks, "h2"))).containsExactly(1L, 1L);
        Path folder = NodeSideTest.runFolder("setup", jobs.logs);
        assertThat(Files.readString(folder.resolve("setup/h1.log"))).isEqualTo("setting up h1\n");

        Cli second = jobs.run(job);
        assertThat(second.code()).as(second.err()).isZero();
        assertThat(second.err()).doesNotContain("/setup]").contains("setup up to date");
        assertThat(List.of(marks(marks, "h1"), marks(marks, "h2"))).containsExactly(1L, 1L);

        Files.writeString(pkg, "v2\n");
        Cli changed = jobs.run(job);
        assertThat(changed.code()).as(changed.err()).isZero();
        assertThat(List.of(marks(marks, "h1"), marks(marks, "h2"))).as(changed.err()).containsExactly(2L, 2L);
        assertThat(Files.readAllLines(marks.resolve("h1"))).containsExactly("v1", "v2");

        Cli forced = jobs.run(job, "--force-setup");
        assertThat(forced.code()).as(forced.err()).isZero();
        assertThat(List.of(marks(marks, "h1"), marks(marks, "h2"))).containsExactly(3L, 3L);

        Path failing = jobs.job("setupfails", node(jobs, 1, 1, "") + node(jobs, 2, 1, "{setup: ['echo preparing; echo cannot build >&2; exit 4']}"),
                jobs.worker("whoami.py"), List.of("python3", "whoami.py"), "", Map.of());
        Cli failed = jobs.run(failing);
        assertThat(failed.code()).as(failed.err()).isEqualTo(3);
        assertThat(failed.err()).contains("FAIL h2 env: setup command 'echo preparing; echo cannot build >&2; exit 4' failed with exit"
                + " code 4:\npreparing\ncannot build\n").contains("preflight failed: nothing was started");
        assertThat(failed.out()).doesNotContain("] rank ");

        // two nodes on one workdir (an NFS home): setup runs on one of them, the other finds it done
        Path shared = tmp.resolve("shared-work");
        Path sharing = jobs.job("sharedsetup", node(jobs, 1, 1, "").replace(tmp.resolve("work-h1").toString(), shared.toString())
                + node(jobs, 3, 1, "").replace(tmp.resolve("work-h3").toString(), shared.toString()),
                List.of(ClusterJobs.WORKERS.resolve("whoami.py"), pkg), List.of("python3", "whoami.py"),
                setup.replace(marks + "/$RUNJOB_NODE", marks + "/shared"), Map.of());
        Cli once = jobs.run(sharing);
        assertThat(once.code()).as(once.err()).isZero();
        assertThat(marks(marks, "shared")).isEqualTo(1);
    }

    @Test
    void twoRunsStartedAtOnceRunOneNodesSetupOnce() throws Exception {
        Path marks = Files.createDirectories(tmp.resolve("marks"));
        String setup = "environment: {setup: ['sleep 2; echo once >> " + marks + "/$RUNJOB_NODE']}\n";
        List<Path> twins = new ArrayList<>();
        for (String name : List.of("twin-a", "twin-b")) {
            twins.add(jobs.job(name, node(jobs, 1, 1, ""), jobs.worker("whoami.py"), List.of("python3", "whoami.py"), setup, Map.of()));
        }
        List<Process> runs = List.of(jobs.start(twins.get(0)), jobs.start(twins.get(1)));
        for (int i = 0; i < 2; i++) {
            assertThat(runs.get(i).waitFor(90, TimeUnit.SECONDS)).isTrue();
            assertThat(runs.get(i).exitValue()).as(jobs.stderrOf(twins.get(i))).isZero();
        }
        // one ran it, the other waited for its lock and found it done
        assertThat(Files.readAllLines(marks.resolve("h1"))).containsExactly("once");
        String both = jobs.stderrOf(twins.get(0)) + jobs.stderrOf(twins.get(1));
        assertThat(both.lines().filter(l -> l.equals("[h1/setup] once")).count()).isZero();
        assertThat(both).contains("setup up to date");
    }

    @Test
    void eachNodesOutputsComeBackAfterASuccessAndAFailFastAndPullFetchesThemAgain() throws Exception {
        Path job = jobs.job("outputs", node(jobs, 1, 2, "") + node(jobs, 2, 1, ""), jobs.worker("outputs.py"), List.of("python3", "outputs.py"),
                "outputs: [results, none.txt, etcdir/passwd]\nfailure: {grace_period_s: 1}\n", Map.of());
        Cli ok = jobs.run(job);
        assertThat(ok.code()).as(ok.err()).isZero();
        Path folder = NodeSideTest.runFolder("outputs", jobs.logs);
        assertThat(Files.readString(folder.resolve("outputs/h1/results/rank-0.txt"))).isEqualTo("rank 0 on h1\n");
        assertThat(Files.readString(folder.resolve("outputs/h1/results/rank-1.txt"))).isEqualTo("rank 1 on h1\n");
        assertThat(Files.readString(folder.resolve("outputs/h2/results/rank-2.txt"))).isEqualTo("rank 2 on h2\n");
        try (var h1 = Files.list(folder.resolve("outputs/h1/results"))) {
            assertThat(h1.map(p -> p.getFileName().toString()).sorted().toList()).containsExactly("rank-0.txt", "rank-1.txt");
        }
        assertThat(folder.resolve("outputs/h1/etcdir")).as("a symlinked directory on the way is never followed").doesNotExist();
        assertThat(ok.err()).contains("runjob: outputs of node h1: none.txt: no such file\n")
                .contains("runjob: outputs of node h1: etcdir: a symlink (never followed)\n")
                .contains("runjob: outputs: 3 files (39 B) from 2 nodes in ");
        var summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
        assertThat(summary.path("outputs").path("h1").path("files").asInt()).isEqualTo(2);
        assertThat(summary.path("outputs").path("h2").path("bytes").asInt()).isEqualTo(13);

        Files.delete(folder.resolve("outputs/h2/results/rank-2.txt"));
        Cli pull = Cli.run(System.getenv(), "pull", folder.toString(), "results/rank-2.txt");
        assertThat(pull.code()).as(pull.err()).isZero();
        assertThat(Files.readString(folder.resolve("outputs/h2/results/rank-2.txt"))).isEqualTo("rank 2 on h2\n");
        Cli etc = Cli.run(System.getenv(), "pull", folder.toString(), "etcdir/passwd");
        assertThat(etc.err()).contains("etcdir: a symlink (never followed)");
        assertThat(etc.code()).as("nothing came").isEqualTo(2);
        assertThat(folder.resolve("outputs/h1/etcdir")).doesNotExist();

        Path logs = tmp.resolve("runs-failed");
        Cli failed = jobs.run(job, "--set", "env.FAIL_RANK=1", "--set", "logs.dir=" + logs);
        assertThat(failed.code()).as(failed.err()).isEqualTo(1);
        Path failedFolder = NodeSideTest.runFolder("outputs", logs);
        for (String f : List.of("h1/results/rank-0.txt", "h1/results/rank-1.txt", "h2/results/rank-2.txt")) {
            assertThat(failedFolder.resolve("outputs").resolve(f)).as("after a fail-fast").exists();
        }
    }

    @Test
    void ctrlCDuringALongSetupStopsItOnItsNodeAndStartsNothing() throws Exception {
        Path job = jobs.job("slowsetup", node(jobs, 2, 1, "{setup: ['echo $$ > " + jobs.pids + "/setup.pid; echo started; exec sleep 300']}"),
                jobs.worker("whoami.py"), List.of("python3", "whoami.py"), "", Map.of());
        Process runjob = jobs.start(job);
        Poll.until(() -> {
            try {
                return jobs.stderrOf(job).contains("[h2/setup] started\n");
            } catch (IOException e) {
                return false;
            }
        }, Duration.ofSeconds(60), "the setup to start");
        long setup = Long.parseLong(Files.readString(jobs.pids.resolve("setup.pid")).strip());
        new ProcessBuilder("kill", "-INT", Long.toString(runjob.pid())).start().waitFor();
        assertThat(runjob.waitFor(20, TimeUnit.SECONDS)).as("runjob ends on Ctrl-C during setup").isTrue();
        assertThat(runjob.exitValue()).as(jobs.stderrOf(job)).isEqualTo(130);
        assertThat(jobs.stderrOf(job)).contains("interrupted during preflight: nothing was started");
        Pids.awaitGone(List.of(setup), Duration.ofSeconds(10), "the setup's sleep, stopped with its agent");
    }
}
