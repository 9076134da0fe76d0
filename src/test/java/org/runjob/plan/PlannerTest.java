package org.runjob.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.EnvironmentSpec;
import org.runjob.spec.GpuAuthority;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.Relay;
import org.runjob.spec.WorkerVariables;

/** The planner at argv and env level: exact values per rank. */
class PlannerTest {

    private static final String RUN = "20261201-070000-00aa";

    static NodeSpec node(String name, String host, List<Integer> gpus, Integer workers) {
        NodeAddress address = host == null ? new NodeAddress.Local(Optional.empty()) : ssh(host, OptionalInt.empty(), Optional.empty());
        return new NodeSpec(name, address,
                new NodeSpec.GpuRequest.Listed(gpus), workers == null ? OptionalInt.empty() : OptionalInt.of(workers),
                Optional.empty(), Map.of());
    }

    static NodeAddress ssh(String host, OptionalInt port, Optional<String> user) {
        return new NodeAddress.Ssh(host, port, user);
    }

    static JobSpec job(List<NodeSpec> nodes, EntrypointSpec entrypoint, JobSpec.MasterPort port, Map<String, String> env) {
        return new JobSpec("job", nodes, new JobSpec.RendezvousSpec(nodes.get(0).name(), Optional.empty(), port),
                entrypoint, "~/.runjob/job", false, List.of(), env,
                new JobSpec.SshSpec(Optional.empty(), "~/.ssh/known_hosts", JobSpec.HostKeyPolicy.STRICT, 10, Optional.empty()),
                new JobSpec.FailureSpec(10, 0), "runs", Optional.empty(), JobSpec.BackendUse.ssh(), false, Relay.AUTO, Path.of("job.yaml"));
    }

    static final EntrypointSpec PY = new EntrypointSpec.Command(List.of("python3", "train.py"), false);

    static JobSpec bound(JobSpec b) {
        return new JobSpec(b.name(), b.nodes(), b.rendezvous(), b.entrypoint(), b.workdir(), b.runsShareWorkdir(), b.files(), b.env(), b.ssh(),
                b.failure(), b.logsDir(), b.metric(), b.backend(), b.strictGpuLeases(), b.relay(), b.source(), b.outputs(), b.outputsMaxBytes(),
                b.spares(), b.observe(), JobSpec.GpuBind.WORKER);
    }

    @Test
    void gpuBindWorkerGivesEachWorkerItsOwnShareInLocalRankOrder() throws Exception {
        NodeSpec four = new NodeSpec("four", ssh("h1", OptionalInt.empty(), Optional.empty()),
                new NodeSpec.GpuRequest.Listed(List.of(1, 3, 5, 7)), OptionalInt.of(2), Optional.empty(), Map.of());
        NodeSpec each = new NodeSpec("each", ssh("h2", OptionalInt.empty(), Optional.empty()),
                new NodeSpec.GpuRequest.Listed(List.of(0, 2)), OptionalInt.empty(), Optional.empty(), Map.of());
        NodeSpec all = new NodeSpec("all", ssh("h3", OptionalInt.empty(), Optional.empty()), new NodeSpec.GpuRequest.All(),
                OptionalInt.of(2), Optional.empty(), Map.of());
        JobSpec spec = bound(job(List.of(four, each, all), PY, new JobSpec.MasterPort.Fixed(29500), Map.of()));
        LaunchPlan plan = Planner.plan(spec, Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.workers()).extracting(w -> w.env().get("CUDA_VISIBLE_DEVICES")).containsExactly("1,3", "5,7", "0", "2",
                "<all GPUs found at launch, local rank 0's share>", "<all GPUs found at launch, local rank 1's share>");
        assertThat(plan.nodes()).extracting(NodePlan::visibleDevices).containsExactly("1,3,5,7", "0,2", NodePlan.ALL_FOUND_AT_LAUNCH);

        NodeSpec three = new NodeSpec("three", ssh("h1", OptionalInt.empty(), Optional.empty()),
                new NodeSpec.GpuRequest.Listed(List.of(0, 1, 2)), OptionalInt.of(2), Optional.empty(), Map.of());
        assertThatThrownBy(() -> Planner.plan(bound(job(List.of(three), PY, new JobSpec.MasterPort.Fixed(29500), Map.of())),
                Inventory.unprobed(), RUN, OptionalInt.empty())).isInstanceOf(PlanningException.class)
                .hasMessage("node 'three' has 3 GPUs (0,1,2) for 2 workers: gpu_bind: worker gives each worker an equal share; give it a"
                        + " multiple of 2 GPUs, or as many workers as divide them");
    }

    @Test
    void seedTopologyGivesRanksZeroOneOnV100AndTwoThreeOnA30() throws Exception {
        NodeSpec v100 = new NodeSpec("v100", ssh("202.201.252.102", OptionalInt.of(30430), Optional.of("root")),
                new NodeSpec.GpuRequest.Listed(List.of(1, 2)), OptionalInt.empty(), Optional.empty(), Map.of());
        NodeSpec a30 = new NodeSpec("a30", ssh("202.201.252.101", OptionalInt.empty(), Optional.of("root")),
                new NodeSpec.GpuRequest.Listed(List.of(2, 4)), OptionalInt.empty(), Optional.empty(), Map.of());
        LaunchPlan plan = Planner.plan(job(List.of(v100, a30), PY, new JobSpec.MasterPort.Fixed(29522),
                Map.of("NCCL_DEBUG", "WARN")), Inventory.unprobed(), RUN, OptionalInt.empty());

        assertThat(plan.worldSize()).isEqualTo(4);
        assertThat(plan.nodes()).extracting(NodePlan::ranks).containsExactly(List.of(0, 1), List.of(2, 3));
        assertThat(plan.nodes()).extracting(NodePlan::visibleDevices).containsExactly("1,2", "2,4");
        WorkerLaunch rank2 = plan.workers().get(2);
        assertThat(rank2.argv()).containsExactly("python3", "train.py");
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("RANK", "2");
        expected.put("LOCAL_RANK", "0");
        expected.put("WORLD_SIZE", "4");
        expected.put("LOCAL_WORLD_SIZE", "2");
        expected.put("NODE_RANK", "1");
        expected.put("GROUP_RANK", "1");
        expected.put("GROUP_WORLD_SIZE", "2");
        expected.put("ROLE_RANK", "2");
        expected.put("ROLE_WORLD_SIZE", "4");
        expected.put("MASTER_ADDR", "202.201.252.102");
        expected.put("MASTER_PORT", "29522");
        expected.put("CUDA_VISIBLE_DEVICES", "2,4");
        expected.put("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        expected.put("TORCHELASTIC_RUN_ID", RUN);
        expected.put("ROLE_NAME", "default");
        expected.put("TORCHELASTIC_USE_AGENT_STORE", "False");
        expected.put("RUNJOB_JOB", "job");
        expected.put("RUNJOB_RUN_ID", RUN);
        expected.put("RUNJOB_NODE", "a30");
        expected.put("PYTHONUNBUFFERED", "1");
        expected.put("NCCL_ASYNC_ERROR_HANDLING", "1");
        expected.put("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
        expected.put("OMP_NUM_THREADS", "1");
        expected.put("NCCL_DEBUG", "WARN");
        assertThat(rank2.env()).containsExactlyEntriesOf(expected);
    }

    @Test
    void fiveNodesOfFourWorkersGiveWorldSizeTwenty() throws Exception {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            nodes.add(node("n" + i, "10.0.0." + (i + 1), List.of(0, 1, 2, 3, 4, 5, 6, 7), 4));
        }
        LaunchPlan plan = Planner.plan(job(nodes, PY, new JobSpec.MasterPort.Fixed(29500), Map.of()),
                Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.worldSize()).isEqualTo(20);
        assertThat(plan.workers()).extracting(WorkerLaunch::rank).containsExactlyElementsOf(
                IntStream.range(0, 20).boxed().toList());
        WorkerLaunch last = plan.workers().get(19);
        assertThat(last.env()).containsEntry("RANK", "19").containsEntry("LOCAL_RANK", "3").containsEntry("NODE_RANK", "4")
                .containsEntry("WORLD_SIZE", "20").containsEntry("LOCAL_WORLD_SIZE", "4").containsEntry("GROUP_WORLD_SIZE", "5")
                .containsEntry("MASTER_ADDR", "10.0.0.1").containsEntry("MASTER_PORT", "29500")
                .containsEntry("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
    }

    @Test
    void unequalCountsAndACpuNodeGetContiguousRanks() throws Exception {
        LaunchPlan plan = Planner.plan(job(List.of(node("g2", "h1", List.of(0, 1), null), node("g3", "h2", List.of(0, 1, 2), null),
                node("cpu", "h3", List.of(), 1)), PY, new JobSpec.MasterPort.Fixed(29500), Map.of()),
                Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.worldSize()).isEqualTo(6);
        assertThat(plan.nodes()).extracting(NodePlan::ranks)
                .containsExactly(List.of(0, 1), List.of(2, 3, 4), List.of(5));
        assertThat(plan.workers()).extracting(w -> w.env().get("LOCAL_RANK"))
                .containsExactly("0", "1", "0", "1", "2", "0");
        assertThat(plan.workers()).extracting(w -> w.env().get("LOCAL_WORLD_SIZE"))
                .containsExactly("2", "2", "3", "3", "3", "1");
        WorkerLaunch cpu = plan.workers().get(5);
        assertThat(cpu.env()).containsEntry("CUDA_VISIBLE_DEVICES", "").containsEntry("NODE_RANK", "2")
                .doesNotContainKey("OMP_NUM_THREADS");
    }

    @Test
    void ompNumThreadsIsLeftToTheUserWhenSet() throws Exception {
        LaunchPlan plan = Planner.plan(job(List.of(node("a", "h", List.of(0, 1), null)), PY,
                new JobSpec.MasterPort.Fixed(29500), Map.of("OMP_NUM_THREADS", "8")), Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.workers()).extracting(w -> w.env().get("OMP_NUM_THREADS")).containsExactly("8", "8");
    }

    @Test
    void nodeEnvOverridesJobEnv() throws Exception {
        NodeSpec a = new NodeSpec("a", ssh("h", OptionalInt.empty(), Optional.empty()),
                new NodeSpec.GpuRequest.Listed(List.of(0)), OptionalInt.empty(), Optional.empty(),
                Map.of("GLOO_SOCKET_IFNAME", "ib0"));
        LaunchPlan plan = Planner.plan(job(List.of(a, node("b", "h2", List.of(0), null)), PY, new JobSpec.MasterPort.Fixed(1),
                Map.of("GLOO_SOCKET_IFNAME", "eth0")), Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.workers()).extracting(w -> w.env().get("GLOO_SOCKET_IFNAME")).containsExactly("ib0", "eth0");
    }

    @Test
    void localRankArgIsAppendedPerWorker() throws Exception {
        EntrypointSpec ep = new EntrypointSpec.Command(List.of("python3", "-u", "train.py", "--epochs", "3"), true);
        LaunchPlan plan = Planner.plan(job(List.of(node("a", "h", List.of(3, 5), null)), ep,
                new JobSpec.MasterPort.Fixed(29500), Map.of()), Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.workers()).extracting(WorkerLaunch::argv).containsExactly(
                List.of("python3", "-u", "train.py", "--epochs", "3", "--local_rank=0"),
                List.of("python3", "-u", "train.py", "--epochs", "3", "--local_rank=1"));
    }

    @Test
    void jarEntrypointRunsJavaWithTheShippedJar() throws Exception {
        EntrypointSpec ep = new EntrypointSpec.Jar("train.jar", "org.example.Train", List.of("--lr", "0.1"),
                List.of("-Xmx2g"), false);
        LaunchPlan plan = Planner.plan(job(List.of(node("a", "h", List.of(0), null)), ep,
                new JobSpec.MasterPort.Fixed(29500), Map.of()), Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.workers().get(0).argv())
                .containsExactly("java", "-Xmx2g", "-cp", "train.jar", "org.example.Train", "--lr", "0.1");
    }

    @Test
    void autoPortIsSymbolicUntilChosenAtLaunch() throws Exception {
        JobSpec spec = job(List.of(node("a", "h", List.of(0), null)), PY, new JobSpec.MasterPort.Auto(), Map.of());
        LaunchPlan dry = Planner.plan(spec, Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(dry.masterPort()).isEmpty();
        assertThat(dry.workers().get(0).env()).containsEntry("MASTER_PORT", Planner.PORT_CHOSEN_AT_LAUNCH);
        LaunchPlan real = Planner.plan(spec, Inventory.unprobed(), RUN, OptionalInt.of(41234));
        assertThat(real.masterPort()).hasValue(41234);
        assertThat(real.workers().get(0).env()).containsEntry("MASTER_PORT", "41234");
    }

    @Test
    void rendezvousAddrOverridesTheMasterHostAndAnotherMasterCanBeChosen() throws Exception {
        List<NodeSpec> nodes = List.of(node("a", "h1", List.of(0), null), node("b", "h2", List.of(0), null));
        JobSpec base = job(nodes, PY, new JobSpec.MasterPort.Fixed(29500), Map.of());
        JobSpec onB = new JobSpec(base.name(), nodes, new JobSpec.RendezvousSpec("b", Optional.empty(), base.rendezvous().port()),
                PY, base.workdir(), false, List.of(), Map.of(), base.ssh(), base.failure(), "runs", Optional.empty(), JobSpec.BackendUse.ssh(), false, base.relay(), base.source());
        assertThat(Planner.plan(onB, Inventory.unprobed(), RUN, OptionalInt.empty()).masterAddr()).isEqualTo("h2");
        JobSpec viaAddr = new JobSpec(base.name(), nodes, new JobSpec.RendezvousSpec("b", Optional.of("10.9.9.9"),
                base.rendezvous().port()), PY, base.workdir(), false, List.of(), Map.of(), base.ssh(), base.failure(), "runs", Optional.empty(), JobSpec.BackendUse.ssh(), false, base.relay(), base.source());
        LaunchPlan plan = Planner.plan(viaAddr, Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.masterAddr()).isEqualTo("10.9.9.9");
        assertThat(plan.masterNode()).isEqualTo("b");
        // rank 0 stays on the first node: node order decides ranks, the master only hosts the rendezvous
        assertThat(plan.workers().get(0).node()).isEqualTo("a");
    }

    @Test
    void allLocalJobRendezvousesOnLoopback() throws Exception {
        LaunchPlan plan = Planner.plan(job(List.of(node("l1", null, List.of(), 2), node("l2", null, List.of(), 2)), PY,
                new JobSpec.MasterPort.Fixed(29500), Map.of()), Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(plan.masterAddr()).isEqualTo("127.0.0.1");
        assertThat(plan.worldSize()).isEqualTo(4);
    }

    @Test
    void gpusAllUsesTheInventoryAndIsSymbolicInADryRun() throws Exception {
        NodeSpec all = new NodeSpec("box", ssh("h", OptionalInt.empty(), Optional.empty()),
                new NodeSpec.GpuRequest.All(), OptionalInt.empty(), Optional.empty(), Map.of());
        JobSpec spec = job(List.of(node("a", "h0", List.of(0), null), all), PY, new JobSpec.MasterPort.Fixed(29500), Map.of());
        LaunchPlan probed = Planner.plan(spec, new Inventory(Map.of("box", List.of(0, 1, 2)), Map.of()), RUN, OptionalInt.empty());
        assertThat(probed.nodes().get(1).ranks()).containsExactly(1, 2, 3);
        assertThat(probed.nodes().get(1).visibleDevices()).isEqualTo("0,1,2");
        assertThatThrownBy(() -> Planner.plan(spec, Inventory.unprobed(), RUN, OptionalInt.empty()))
                .isInstanceOf(PlanningException.class)
                .hasMessage("node 'box' uses gpus: all without workers: its worker count is known only when its GPUs"
                        + " are found at launch; set workers: N to plan it ahead");

        NodeSpec allTwo = new NodeSpec("box", ssh("h", OptionalInt.empty(), Optional.empty()),
                new NodeSpec.GpuRequest.All(), OptionalInt.of(2), Optional.empty(), Map.of());
        LaunchPlan dry = Planner.plan(job(List.of(allTwo), PY, new JobSpec.MasterPort.Fixed(29500), Map.of()),
                Inventory.unprobed(), RUN, OptionalInt.empty());
        assertThat(dry.nodes().get(0).visibleDevices()).isEqualTo(NodePlan.ALL_FOUND_AT_LAUNCH);
        assertThat(dry.worldSize()).isEqualTo(2);
    }

    @Test
    void socketInterfacesFoundByPreflightAreExportedUnlessTheJobSetsThem() throws Exception {
        NodeSpec b = new NodeSpec("b", ssh("h2", OptionalInt.empty(), Optional.empty()),
                new NodeSpec.GpuRequest.Listed(List.of(0)), OptionalInt.empty(), Optional.empty(),
                Map.of("NCCL_SOCKET_IFNAME", "ib0"));
        JobSpec spec = job(List.of(node("a", "h1", List.of(0), null), b), PY, new JobSpec.MasterPort.Fixed(29500), Map.of());
        LaunchPlan plan = Planner.plan(spec, new Inventory(Map.of(), Map.of("a", "eth0", "b", "eth1")), RUN, OptionalInt.empty());
        assertThat(plan.workers().get(0).env()).containsEntry("GLOO_SOCKET_IFNAME", "eth0").containsEntry("NCCL_SOCKET_IFNAME", "eth0");
        assertThat(plan.workers().get(1).env()).containsEntry("GLOO_SOCKET_IFNAME", "eth1").containsEntry("NCCL_SOCKET_IFNAME", "ib0");
        assertThat(Planner.plan(spec, Inventory.unprobed(), RUN, OptionalInt.empty()).workers().get(0).env())
                .doesNotContainKey("GLOO_SOCKET_IFNAME");
    }

    @Test
    void runIdsSortByTimeAndCarryFourHexDigits() {
        assertThat(RunId.of(Instant.parse("2026-12-01T07:35:01Z"), 0x1a2b)).isEqualTo("20261201-073501-1a2b");
        assertThat(RunId.of(Instant.parse("2026-12-01T07:35:01Z"), -1)).isEqualTo("20261201-073501-ffff");
    }

    @Test
    void aNodesActivationIsInItsWorkersEnvAndAPythonsNameBecomesTheEnvironmentsInterpreter() throws Exception {
        EnvironmentSpec py = new EnvironmentSpec(Optional.of(new EnvironmentSpec.Interpreter(EnvironmentSpec.Kind.PYTHON, "/opt/py/bin/python3.11")),
                List.of(), List.of(), List.of(), 600, Optional.empty(), true);
        EnvironmentSpec venv = new EnvironmentSpec(Optional.of(new EnvironmentSpec.Interpreter(EnvironmentSpec.Kind.VENV, "envs/t2")),
                List.of(), List.of(), List.of(), 600, Optional.of(new EnvironmentSpec.ContainerSpec("img", "podman", List.of(), List.of())), true);
        NodeSpec a = new NodeSpec("a", ssh("h1", OptionalInt.empty(), Optional.empty()), new NodeSpec.GpuRequest.Listed(List.of()),
                OptionalInt.of(1), Optional.empty(), Map.of("PATH", "/node/bin"), py);
        NodeSpec b = new NodeSpec("b", ssh("h2", OptionalInt.empty(), Optional.empty()), new NodeSpec.GpuRequest.Listed(List.of(3)),
                OptionalInt.empty(), Optional.empty(), Map.of(), venv);
        Inventory inventory = new Inventory(Map.of(), Map.of(), Optional.empty(), GpuAuthority.PROBED_AND_LEASED,
                Map.of("a", new Inventory.Activated(Map.of("PATH", "/opt/py/bin:/node/bin", "LD_LIBRARY_PATH", "/m/lib"), List.of("PYTHONHOME"))));
        LaunchPlan plan = Planner.plan(job(List.of(a, b), PY, new JobSpec.MasterPort.Fixed(29500), Map.of()), inventory, RUN, OptionalInt.empty());

        WorkerLaunch w0 = plan.workers().get(0);
        assertThat(w0.argv()).containsExactly("/opt/py/bin/python3.11", "train.py");
        assertThat(w0.env()).containsEntry("PATH", "/opt/py/bin:/node/bin").containsEntry("LD_LIBRARY_PATH", "/m/lib");
        assertThat(plan.nodes().get(0).unset()).containsExactly("PYTHONHOME");
        assertThat(plan.nodes().get(0).activated()).containsExactlyInAnyOrder("PATH", "LD_LIBRARY_PATH");
        assertThat(plan.nodes().get(0).container()).isEmpty();
        assertThat(plan.nodes().get(0).command(w0)).isEqualTo(w0.argv());

        WorkerLaunch w1 = plan.workers().get(1);
        assertThat(w1.argv()).containsExactly("python3", "train.py");
        assertThat(plan.nodes().get(1).unset()).isEmpty();
        List<String> command = plan.nodes().get(1).command(w1);
        assertThat(command.subList(0, 3)).containsExactly("podman", "run", "--label");
        assertThat(command).contains("--device", "nvidia.com/gpu=3", "-e", "CUDA_VISIBLE_DEVICES=0", "-e", "RANK");
        assertThat(command.subList(command.size() - 3, command.size())).containsExactly("img", "python3", "train.py");
    }

    @Test
    void aBackendsWorkerVariablesFollowEachRankAndTheJobsEnvHasTheLastWord() throws Exception {
        LaunchPlan plan = Planner.plan(job(List.of(node("a", "10.0.0.1", List.of(), 2), node("b", "10.0.0.2", List.of(), 1)), PY,
                new JobSpec.MasterPort.Fixed(29500), Map.of("TASK_SET", "mine")), Inventory.unprobed(), RUN, OptionalInt.empty());
        LaunchPlan with = Planner.withVariables(plan, (worker, perNode) -> Map.of("TASK_ID", worker.get("RANK") + "/" + perNode,
                "TASK_SET", "backend's"));
        assertThat(with.workers()).extracting(w -> w.env().get("TASK_ID")).containsExactly("0/[2, 1]", "1/[2, 1]", "2/[2, 1]");
        assertThat(with.workers()).extracting(w -> w.env().get("TASK_SET")).containsOnly("mine");
        assertThat(with.workers()).extracting(WorkerLaunch::rank).containsExactly(0, 1, 2);
        assertThat(Planner.withVariables(plan, WorkerVariables.NONE)).isEqualTo(plan);
    }
}
