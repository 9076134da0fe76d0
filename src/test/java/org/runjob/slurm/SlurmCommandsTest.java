package org.runjob.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.Relay;

/** The allocation a job's layout needs, and what runjob reads from sinfo and hands to Slurm's commands. */
class SlurmCommandsTest {

    @TempDir
    Path tmp;

    static NodeSpec node(String name, int workers, List<Integer> gpus) {
        return new NodeSpec(name, new SlurmAddress(name), new NodeSpec.GpuRequest.Listed(gpus), OptionalInt.of(workers),
                Optional.empty(), Map.of());
    }

    static JobSpec job(SlurmSettings slurm, NodeSpec... nodes) {
        return job(slurm, false, nodes);
    }

    static JobSpec job(SlurmSettings slurm, boolean counted, NodeSpec... nodes) {
        return new JobSpec("j", List.of(nodes), new JobSpec.RendezvousSpec(nodes[0].name(), Optional.empty(), new JobSpec.MasterPort.Auto()),
                new EntrypointSpec.Command(List.of("true"), false), "w", false, List.of(), Map.of(),
                new JobSpec.SshSpec(Optional.empty(), JobSpec.SshSpec.DEFAULT_KNOWN_HOSTS, JobSpec.HostKeyPolicy.STRICT, 10, Optional.empty()),
                new JobSpec.FailureSpec(10, 0), "runs", Optional.empty(), new JobSpec.BackendUse("slurm", slurm, counted), false, Relay.AUTO, Path.of("j.yaml"));
    }

    static final SlurmSettings PLAIN = new SlurmSettings(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
            List.of(), List.of());

    static SlurmCommands commands(JobSpec spec) {
        return new SlurmCommands(spec, SlurmCommands.shapesOf(spec, Map.of()));
    }

    @Test
    void equalNodesAreOneComponentWithTasksPerNode() {
        SlurmCommands c = commands(job(new SlurmSettings(Optional.of("gpu"), Optional.of("lab"), Optional.of("2:00:00"),
                Optional.of("high"), List.of("--mem=0"), List.of("--mpi=none")), node("a", 2, List.of(0, 1)), node("b", 2, List.of(2, 3))));
        assertThat(c.salloc("runjob-j")).containsExactly("salloc", "--job-name=runjob-j", "--partition=gpu", "--account=lab",
                "--qos=high", "--time=2:00:00", "--nodelist=a,b", "--nodes=2", "--ntasks-per-node=2", "--gpus-per-node=2", "--mem=0",
                "sh", "-c", "read -r code || code=1; exit \"$code\"");
        assertThat(c.hostfile()).isEmpty();
        assertThat(c.step("41", "b", List.of("sh", "-c", "x"))).containsExactly("srun", "--jobid=41", "--job-name=runjob-agent", "--nodelist=b", "--nodes=1",
                "--ntasks=1", "--whole", "--unbuffered", "--quiet", "--kill-on-bad-exit=1", "--cpu-bind=none", "--mpi=none", "sh", "-c", "x");
    }

    @Test
    void aJobThatRequeuesItselfAtItsTimeLimitIsSubmittedRequeueable() {
        SlurmSettings slurm = new SlurmSettings(Optional.empty(), Optional.empty(), Optional.of("10"), Optional.empty(), List.of(), List.of(),
                45, Optional.empty(), true, 3);
        SlurmCommands c = commands(job(slurm, node("a", 2, List.of())));
        assertThat(c.sbatch("runjob-r", "runjob:r/1", Path.of("/runs/r/1"), Path.of("/runs/r/1/submit.sh"), List.of("java", "run"), List.of()))
                .containsExactly("sbatch", "--parsable", "--job-name=runjob-r", "--comment=runjob:r/1", "--output=/runs/r/1/slurm-%j.out", "--open-mode=append",
                        "--requeue", "--signal=B:USR1@45", "--time=10", "--nodelist=a", "--nodes=1", "--ntasks-per-node=2", "/runs/r/1/submit.sh",
                        "java", "run");
    }

    @Test
    void aRunInALaneIsASingletonOfItsLanesJobNameAndKeepsItsOwnDependency() {
        Path script = Path.of("/runs/r/1/submit.sh");
        List<String> plain = List.of("env", "SLURM_HOSTFILE=/runs/r/1/hostfile", "sbatch", "--parsable", "--job-name=runjob-r",
                "--comment=runjob:r/1", "--nodes=1", "/runs/r/1/submit.sh", "java", "--job-name=x", "--dependency=y");
        assertThat(SlurmQueue.INSTANCE.inLane(plain, script, "sweep-1.lane0")).contains(List.of("env", "SLURM_HOSTFILE=/runs/r/1/hostfile",
                "sbatch", "--parsable", "--job-name=runjob-r.sweep-1.lane0", "--dependency=singleton", "--comment=runjob:r/1", "--nodes=1",
                "/runs/r/1/submit.sh", "java", "--job-name=x", "--dependency=y"));
        // a heterogeneous job repeats slurm.alloc_args in each component: each copy holds both
        List<String> own = List.of("sbatch", "--parsable", "--job-name=runjob-r", "--nodes=1", "--dependency=afterok:7", ":", "--nodes=1",
                "--dependency=afterok:7", "/runs/r/1/submit.sh");
        assertThat(SlurmQueue.INSTANCE.inLane(own, script, "s.lane1")).contains(List.of("sbatch", "--parsable", "--job-name=runjob-r.s.lane1",
                "--nodes=1", "--dependency=afterok:7,singleton", ":", "--nodes=1", "--dependency=afterok:7,singleton", "/runs/r/1/submit.sh"));
        assertThatThrownBy(() -> SlurmQueue.INSTANCE.inLane(List.of("sbatch", "--job-name=runjob-r", "--dependency=afterok:7?afterok:8",
                "/runs/r/1/submit.sh"), script, "s.lane0")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--max-parallel holds each run back with --dependency=singleton, which cannot join afterok:7?afterok:8 (any of, '?')");
        assertThatThrownBy(() -> SlurmQueue.INSTANCE.inLane(List.of("sbatch", "--job-name=runjob-r", "-d", "afterok:7", "/runs/r/1/submit.sh"),
                script, "s.lane0")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("slurm.alloc_args gives a dependency as '-d': write it --dependency=..., which --max-parallel joins with its own"
                        + " (singleton)");
        assertThat(SlurmQueue.INSTANCE.lanes()).isTrue();
    }

    @Test
    void aJobRequeuedAsOftenAsItsCapAllowsIsNotRequeuedAgainAndSaysWhatToDo() {
        SlurmSettings slurm = new SlurmSettings(Optional.empty(), Optional.empty(), Optional.of("10"), Optional.empty(), List.of(), List.of(),
                45, Optional.empty(), true, 3);
        SlurmCluster inside = new SlurmCluster(job(slurm, node("a", 2, List.of())), Map.of("SLURM_JOB_ID", "12", "SLURM_RESTART_COUNT", "3"),
                line -> { }, () -> false);
        assertThat(inside.requeueAfterTimeLimit()).contains("Slurm job 12 is not requeued again: it was requeued 3 times already"
                + " (slurm.max_time_limit_requeues 3); give it a longer time limit, or resume it with runjob submit --resume");
        SlurmSettings never = new SlurmSettings(Optional.empty(), Optional.empty(), Optional.of("10"), Optional.empty(), List.of(), List.of(),
                45, Optional.empty(), false, 3);
        assertThat(new SlurmCluster(job(never, node("a", 2, List.of())), Map.of("SLURM_JOB_ID", "12"), line -> { }, () -> false)
                .requeueAfterTimeLimit()).isEmpty();
    }

    @Test
    void cpusPerWorkerAreAskedForAndTheTimeLimitWarningIsSubmitted() {
        SlurmSettings slurm = new SlurmSettings(Optional.empty(), Optional.empty(), Optional.of("10"), Optional.empty(), List.of(), List.of(),
                45, Optional.of(6));
        SlurmCommands c = commands(job(slurm, node("a", 2, List.of()), node("b", 2, List.of())));
        assertThat(c.salloc("r")).containsExactly("salloc", "--job-name=r", "--time=10", "--nodelist=a,b", "--nodes=2", "--ntasks-per-node=2",
                "--cpus-per-task=6", "sh", "-c", "read -r code || code=1; exit \"$code\"");
        assertThat(c.sbatch("runjob-r", "runjob:r/1", Path.of("/runs/r/1"), Path.of("/runs/r/1/submit.sh"), List.of("java", "run"), List.of("gpu09")))
                .containsExactly("sbatch", "--parsable", "--job-name=runjob-r", "--comment=runjob:r/1", "--output=/runs/r/1/slurm-%j.out", "--open-mode=append",
                        "--signal=B:USR1@45", "--time=10", "--nodelist=a,b", "--nodes=2", "--ntasks-per-node=2", "--cpus-per-task=6", "/runs/r/1/submit.sh",
                        "java", "run");
    }

    @Test
    void nodesGivenAsACountAreAskedForByNumberAndNamedFromTheAllocation() {
        SlurmSettings counted = new SlurmSettings(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), List.of(),
                List.of(), 90, Optional.empty());
        NodeSpec each = new NodeSpec(JobSpec.countedNodeName(0), new SlurmAddress(JobSpec.countedNodeName(0)),
                new NodeSpec.GpuRequest.Count(4, 500), OptionalInt.empty(), Optional.empty(), Map.of("A", "1"));
        NodeSpec second = new NodeSpec(JobSpec.countedNodeName(1), new SlurmAddress(JobSpec.countedNodeName(1)), each.gpus(),
                OptionalInt.empty(), Optional.empty(), Map.of("A", "1"));
        JobSpec spec = job(counted, true, each, second);
        assertThat(spec.nodesUnnamed()).isTrue();
        assertThat(commands(spec).sbatch("runjob-j", "runjob:j/r", Path.of("/r"), Path.of("/r/submit.sh"), List.of("java"), List.of()))
                .containsExactly("sbatch", "--parsable", "--job-name=runjob-j", "--comment=runjob:j/r", "--output=/r/slurm-%j.out", "--open-mode=append",
                        "--signal=B:USR1@90", "--nodes=2", "--ntasks-per-node=4", "--gpus-per-node=4", "/r/submit.sh", "java");
        // quarantined nodes: Slurm picks the counted nodes among the others
        assertThat(commands(spec).sbatch("runjob-j", "runjob:j/r", Path.of("/r"), Path.of("/r/submit.sh"), List.of("java"), List.of("gpu02", "gpu05")))
                .containsExactly("sbatch", "--parsable", "--job-name=runjob-j", "--comment=runjob:j/r", "--output=/r/slurm-%j.out", "--open-mode=append",
                        "--signal=B:USR1@90", "--nodes=2", "--ntasks-per-node=4", "--gpus-per-node=4", "--exclude=gpu02,gpu05", "/r/submit.sh",
                        "java");
        assertThat(SlurmCommands.notes(spec)).containsExactly("the 2 nodes are given as a count: Slurm picks them, and runjob names them"
                + " from the allocation at start (NODE0, ... stand for them until then)");
        JobSpec named = spec.withNodes(List.of("gpu07", "gpu03"), SlurmAddress::new);
        assertThat(SlurmCommands.notes(named)).isEmpty();
        assertThat(named.nodesUnnamed()).isFalse();
        assertThat(named.nodes()).extracting(NodeSpec::name).containsExactly("gpu07", "gpu03");
        assertThat(named.nodes()).extracting(NodeSpec::address).containsExactly(new SlurmAddress("gpu07"), new SlurmAddress("gpu03"));
        assertThat(named.nodes().get(1).env()).isEqualTo(Map.of("A", "1"));
        assertThat(named.rendezvous().master()).isEqualTo("gpu07");
        assertThat(commands(named).salloc("r")).contains("--nodelist=gpu07,gpu03");
    }

    @Test
    void aCommandQueuedAgainKeepsOffTheNodesQuarantinedNowAndLeavesTheCoordinatorsArgumentsAlone() {
        Path script = Path.of("/runs/j/1/submit.sh");
        List<String> counted = List.of("sbatch", "--parsable", "--job-name=runjob-j", "--nodes=2", "--exclude=h2", script.toString(),
                "java", "run", "--", "--exclude=mine");
        SlurmQueue slurm = SlurmQueue.INSTANCE;
        assertThat(slurm.again(counted, script, Set.of("slurm:h3", "slurm:h1", "h9:22")))
                .containsExactly("sbatch", "--parsable", "--job-name=runjob-j", "--nodes=2", "--exclude=h1,h3", script.toString(),
                        "java", "run", "--", "--exclude=mine");
        assertThat(slurm.again(counted, script, Set.of()))
                .containsExactly("sbatch", "--parsable", "--job-name=runjob-j", "--nodes=2", script.toString(), "java", "run", "--", "--exclude=mine");
        List<String> named = List.of("sbatch", "--parsable", "--nodelist=h1,h2", "--nodes=2", script.toString(), "java");
        assertThat(slurm.again(named, script, Set.of("slurm:h3"))).isEqualTo(named);
        List<String> hostfile = List.of("env", "SLURM_HOSTFILE=/runs/j/1/hostfile", "sbatch", "--parsable", "--nodes=2", script.toString(), "java");
        assertThat(slurm.again(hostfile, script, Set.of("slurm:h3"))).containsExactly("env", "SLURM_HOSTFILE=/runs/j/1/hostfile", "sbatch",
                "--parsable", "--nodes=2", "--exclude=h3", script.toString(), "java");
    }

    @Test
    void aSweepOfOneAllocationIsOneJobArrayThrottledByMaxParallel() {
        NodeSpec a = new NodeSpec("a", new SlurmAddress("a"), new NodeSpec.GpuRequest.Count(1, 0), OptionalInt.empty(), Optional.empty(), Map.of());
        List<String> argv = commands(job(PLAIN, a)).sbatchArray("runjob-j", "runjob:j/sweep-1", Path.of("/runs/j/sweep-1"), Path.of("/runs/j/sweep-1/submit.sh"),
                List.of("java"), List.of(), 6, Optional.of(2));
        assertThat(argv).startsWith("sbatch", "--parsable", "--job-name=runjob-j", "--comment=runjob:j/sweep-1", "--array=0-5%2", "--output=/runs/j/sweep-1/slurm-%A_%a.out",
                "--open-mode=append").endsWith("/runs/j/sweep-1/submit.sh", "java");
        assertThat(commands(job(PLAIN, a)).sbatchArray("r", "runjob:r/s", Path.of("/s"), Path.of("/s/submit.sh"), List.of("java"), List.of(), 3, Optional.empty()))
                .contains("--array=0-2").noneMatch(w -> w.startsWith("--array=0-2%"));
    }

    @Test
    void sbatchRefusesGpusAllNotCountedYetForSlurmNeedsTheCountFirst() {
        NodeSpec all = new NodeSpec("a", new SlurmAddress("a"), new NodeSpec.GpuRequest.All(), OptionalInt.empty(), Optional.empty(), Map.of());
        assertThatThrownBy(() -> commands(job(PLAIN, all)).sbatch("r", "runjob:r/r", Path.of("/r"), Path.of("/r/s.sh"), List.of("java"), List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gpus: all of nodes given as a count is known only once Slurm has picked them");
    }

    @Test
    void unequalWorkersWithEqualGpusAreLaidOutByAHostfile() {
        SlurmCommands c = commands(job(PLAIN, node("a", 2, List.of()), node("b", 1, List.of()), node("c", 3, List.of())));
        assertThat(c.salloc("r")).containsExactly("salloc", "--no-shell", "--job-name=r", "--nodelist=a,b,c", "--nodes=3", "--ntasks=6",
                "--distribution=arbitrary");
        assertThat(c.hostfile()).contains(List.of("a", "a", "b", "c", "c", "c"));
        assertThat(c.hetGroup("b")).isEmpty();
    }

    @Test
    void unequalGpuCountsMakeAHeterogeneousJob() {
        SlurmCommands c = commands(job(PLAIN, node("a", 2, List.of(0, 1)), node("b", 1, List.of(5)), node("c", 2, List.of(0, 1))));
        assertThat(c.salloc("r")).containsExactly("salloc", "--job-name=r",
                "--nodelist=a,c", "--nodes=2", "--ntasks-per-node=2", "--gpus-per-node=2", ":",
                "--nodelist=b", "--nodes=1", "--ntasks-per-node=1", "--gpus-per-node=1", "sh", "-c", "read -r code || code=1; exit \"$code\"");
        assertThat(c.hostfile()).isEmpty();
        assertThat(List.of(c.hetGroup("a"), c.hetGroup("b"), c.hetGroup("c"))).containsExactly(OptionalInt.of(0), OptionalInt.of(1),
                OptionalInt.of(0));
        assertThat(c.step("7", "b", List.of("x"))).startsWith("srun", "--jobid=7", "--job-name=runjob-agent", "--het-group=1", "--nodelist=b");
        assertThat(c.step("7", "b", List.of("x"), true)).as("in the user's allocation").doesNotContain("--het-group=1");
    }

    @Test
    void submitQueuesSeveralGpuCountsAsAHeterogeneousJobAndUnequalWorkersByAHostfile() throws Exception {
        SlurmCommands het = commands(job(PLAIN, node("a", 2, List.of(0, 1)), node("b", 1, List.of(5))));
        assertThat(het.sbatch("r", "runjob:r/f", Path.of("/f"), Path.of("/f/submit.sh"), List.of("java"), List.of()))
                .containsExactly("sbatch", "--parsable", "--job-name=r", "--comment=runjob:r/f", "--output=/f/slurm-%j.out", "--open-mode=append", "--signal=B:USR1@90",
                        "--nodelist=a", "--nodes=1", "--ntasks-per-node=2", "--gpus-per-node=2", ":",
                        "--nodelist=b", "--nodes=1", "--ntasks-per-node=1", "--gpus-per-node=1", "/f/submit.sh", "java");
        assertThat(het.step("7", "b", List.of("x"), OptionalInt.of(1))).startsWith("srun", "--jobid=7", "--job-name=runjob-agent", "--het-group=1");

        Path folder = tmp;
        JobSpec unequal = job(PLAIN, node("a", 2, List.of()), node("b", 1, List.of()));
        List<String> queue = SlurmQueue.INSTANCE.submit(unequal, folder, folder.resolve("submit.sh"), List.of("java"), Set.of("slurm:gpu01"), Map.of());
        assertThat(queue).startsWith("env", "SLURM_HOSTFILE=" + folder.resolve("hostfile"), "sbatch")
                .contains("--nodelist=a,b", "--nodes=2", "--ntasks=3", "--distribution=arbitrary");
        assertThat(Files.readAllLines(folder.resolve("hostfile"))).containsExactly("a", "a", "b");
    }

    @Test
    void gpuListsBecomeCountsAndSaySo() {
        JobSpec spec = job(PLAIN, node("a", 1, List.of(3)));
        assertThat(SlurmCommands.notes(spec)).containsExactly(
                "node a: Slurm chooses the GPUs, so gpus [3] asks for 1; the ones given are recorded in the run folder");
        assertThat(commands(spec).salloc("r")).contains("--gpus-per-node=1");
    }

    @Test
    void sinfoLinesGiveAddressGpusAndState() {
        Map<String, SlurmNodeInfo> nodes = SlurmNodeInfo.parse("n1|10.0.0.1|gpu:a100:4(S:0-1)|idle\nn2|10.0.0.2|(null)|down*\n"
                + "n1|10.0.0.1|gpu:a100:4(S:0-1)|idle\nn3|n3|gpu:a100:2,gpu:v100:1|mixed\n");
        assertThat(nodes.keySet()).containsExactly("n1", "n2", "n3");
        assertThat(nodes.get("n1")).isEqualTo(new SlurmNodeInfo("n1", "10.0.0.1", 4, "idle"));
        assertThat(nodes.get("n2").gpus()).isZero();
        assertThat(nodes.get("n2").unusable()).isTrue();
        assertThat(nodes.get("n3").gpus()).isEqualTo(3);
        assertThat(nodes.get("n3").unusable()).isFalse();
    }

    @Test
    void slurmsOwnOptionVariablesDoNotReachItsCommands() {
        assertThat(SlurmEnv.of(Map.of("PATH", "/bin", "SLURM_CONF", "/etc/s.conf", "SLURM_NTASKS", "8", "SLURM_HOSTFILE", "h",
                "SRUN_CPUS_PER_TASK", "4", "SALLOC_PARTITION", "x", "SBATCH_TIMELIMIT", "1")))
                .containsOnlyKeys("PATH", "SLURM_CONF");
    }

    @Test
    void perNodeCountsFoldRunsAsSlurmWritesThem() {
        assertThat(SlurmCommands.perNodeCounts(List.of(2, 2, 2, 1))).isEqualTo("2(x3),1");
        assertThat(SlurmCommands.perNodeCounts(List.of(8))).isEqualTo("8");
        assertThat(SlurmCommands.perNodeCounts(List.of(1, 2, 1))).isEqualTo("1,2,1");
    }

    @Test
    void eachWorkerGetsSlurmsTaskVariablesForItsOwnRank() {
        Map<String, String> worker = Map.of("RANK", "5", "LOCAL_RANK", "1", "NODE_RANK", "2", "WORLD_SIZE", "7", "LOCAL_WORLD_SIZE", "2");
        assertThat(new SlurmBackend().workerVariables().of(worker, List.of(2, 2, 2, 1))).containsExactly(
                Map.entry("SLURM_PROCID", "5"), Map.entry("SLURM_LOCALID", "1"), Map.entry("SLURM_NODEID", "2"), Map.entry("SLURM_NTASKS", "7"),
                Map.entry("SLURM_NPROCS", "7"), Map.entry("SLURM_NTASKS_PER_NODE", "2"), Map.entry("SLURM_TASKS_PER_NODE", "2(x3),1"),
                Map.entry("SLURM_STEP_TASKS_PER_NODE", "2(x3),1"), Map.entry("SLURM_STEP_NUM_TASKS", "7"), Map.entry("SLURM_NNODES", "4"),
                Map.entry("SLURM_STEP_NUM_NODES", "4"));
    }

    @Test
    void aStepInAnAllocationRunjobDidNotShapeIsLimitedToTheGpusTheNodeAsksFor() {
        SlurmCommands c = commands(job(PLAIN, node("a", 2, List.of(0, 1)), node("b", 1, List.of())));
        assertThat(c.borrowedStep("7", "a", List.of("x"), OptionalInt.empty())).contains("--whole", "--gres=gpu:2");
        assertThat(c.borrowedStep("7", "b", List.of("x"), OptionalInt.empty())).as("no GPUs asked: what the allocation holds")
                .noneMatch(a -> a.startsWith("--gres"));
        assertThat(c.step("7", "a", List.of("x"))).as("runjob's own allocation is shaped already").noneMatch(a -> a.startsWith("--gres"));
    }
}
