package org.runjob.preflight;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.runjob.node.SchedulerGpus;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.Lease;
import org.runjob.protocol.NodeFacts;
import org.runjob.session.NodeSession;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * Preflight's GPU stage, per node: what GPUs it has (probed by its agent; where the scheduler
 * assigns them, those its step was given), which of them a {@code gpus: {count: N}} node
 * picks and leases ({@link GpuPick}), the leases of listed and {@code all} GPUs, and the GPU
 * cells ({@link GpuCheck}).
 */
final class GpuSurvey {

    /** How often a node waiting for free GPUs is probed again. */
    static final long REPROBE_MS = 2000;

    private final JobSpec spec;
    private final Optional<SchedulerGpus> given;
    private final Optional<String> runId;
    private final Optional<Duration> waitForGpus;
    /** Nodes on one machine share one probe. */
    private final MachineGpus machineGpus = new MachineGpus();
    /** Per node: GPUs it lists that another run holds, as "GPU 1 is held by ...". */
    private final Map<String, String> leaseNotes = new ConcurrentHashMap<>();

    /**
     * @param runId       the run's id: its agents lease the GPUs it uses; empty for commands that start nothing
     * @param waitForGpus how long a node may wait for its {@code gpus: {count: N}} to be free; empty: not at all
     * @param given       how the scheduler's GPUs are read, for a backend whose scheduler gives them; empty: probed and leased
     */
    GpuSurvey(JobSpec spec, Optional<SchedulerGpus> given, Optional<String> runId, Optional<Duration> waitForGpus) {
        this.spec = spec;
        this.given = given;
        this.runId = runId;
        this.waitForGpus = waitForGpus;
    }

    /**
     * The node's GPUs: probed by its agent, or, where the scheduler assigns them, those it gave the
     * node's step; empty for a node that uses none (its cell says "not used").
     */
    Optional<GpuInventory> survey(NodeSpec node, NodeSession session, NodeFacts facts, Map<Check, Cell> row,
                                          Consumer<String> progress) {
        if (given.isPresent() && (GpuCheck.wantsGpus(node) || node.workers().isEmpty())) {
            GpuInventory inventory = given.get().inventory(facts);
            row.put(Check.GPUS, inventory.gpus().isEmpty() ? Cell.fail(inventory.unavailable().orElse(given.get().noneGiven()))
                    : Cell.ok(given.get().describe(facts)));
            return Optional.of(inventory);
        }
        if (!GpuCheck.wantsGpus(node)) {
            row.put(Check.GPUS, Cell.ok("not used"));
            return Optional.empty();
        }
        GpuInventory inventory = machineGpus.of(session, facts);
        if (node.gpus() instanceof NodeSpec.GpuRequest.Count count) {
            return pick(node, count, session, inventory, row, progress);
        }
        if (runId.isPresent() && inventory.unavailable().isEmpty()) {
            hold(node, session, inventory);
        }
        return Optional.of(inventory);
    }

    /**
     * {@code gpus: {count: N}}: the agent leases N free GPUs (for a run; for check and gpus it only
     * looks). When fewer are free it fails, naming each GPU and why, or, with --wait-for-gpus,
     * probes again every {@link #REPROBE_MS} until they are or the wait is over.
     */
    private Optional<GpuInventory> pick(NodeSpec node, NodeSpec.GpuRequest.Count count, NodeSession session, GpuInventory inventory,
                                        Map<Check, Cell> row, Consumer<String> progress) {
        long start = System.nanoTime();
        long deadline = start + waitForGpus.map(Duration::toNanos).orElse(0L);
        long said = 0;
        while (true) {
            if (inventory.unavailable().isPresent() || inventory.gpus().isEmpty()) {
                row.put(Check.GPUS, Cell.fail("gpus: {count: " + count.count() + "}, but " + inventory.unavailable().orElse("no CUDA device")));
                return Optional.empty();
            }
            GpuPick.Candidates candidates = GpuPick.candidates(inventory, count.maxUsedMib());
            List<Lease.Slot> slots = GpuPick.slots(candidates.order());
            Lease.Request request = runId.map(r -> Lease.Request.pick(count.count(), spec.name(), r, slots)).orElse(Lease.Request.query(slots));
            Lease.Answer answer;
            try {
                answer = session.lease(request);
            } catch (IOException e) {
                row.put(Check.GPUS, Cell.fail("cannot lease GPUs: " + e.getMessage()));
                return Optional.empty();
            }
            if (answer.error().isPresent()) {
                row.put(Check.GPUS, Cell.fail(answer.error().get()));
                return Optional.empty();
            }
            List<Integer> picked = runId.isPresent() ? answer.leased()
                    : candidates.order().stream().map(g -> g.index()).filter(answer.free()::contains).limit(count.count()).toList();
            if (picked.size() >= count.count()) {
                List<Integer> sorted = picked.stream().sorted().toList();
                String models = inventory.gpus().stream().filter(g -> sorted.contains(g.index())).map(g -> g.name()).distinct()
                        .collect(Collectors.joining(" + "));
                row.put(Check.GPUS, Cell.ok((runId.isPresent() ? "picked GPUs " : "would pick GPUs ")
                        + String.join(", ", picked.stream().map(String::valueOf).toList()) + " of " + inventory.gpus().size() + " " + models));
                return Optional.of(GpuPick.only(inventory, sorted));
            }
            String shortage = GpuPick.shortage(count.count(), inventory, candidates, answer);
            long now = System.nanoTime();
            if (inventory.gpus().size() < count.count()) {
                // no wait frees GPUs the node does not have
                row.put(Check.GPUS, Cell.fail(shortage + "; the node has " + inventory.gpus().size() + " GPU"
                        + (inventory.gpus().size() == 1 ? "" : "s")));
                return Optional.empty();
            }
            if (now >= deadline) {
                row.put(Check.GPUS, Cell.fail(shortage + (waitForGpus.isPresent() ? " (waited " + waitForGpus.get().toSeconds() + " s)" : "")));
                return Optional.empty();
            }
            if (said == 0 || now - said > TimeUnit.SECONDS.toNanos(30)) {
                said = now;
                progress.accept("runjob: " + node.name() + ": waiting for free GPUs (" + TimeUnit.NANOSECONDS.toSeconds(now - start) + " s of "
                        + waitForGpus.get().toSeconds() + " s): " + shortage);
            }
            try {
                Thread.sleep(REPROBE_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                row.put(Check.GPUS, Cell.fail(shortage));
                return Optional.empty();
            }
            inventory = session.gpus();
        }
    }

    /** Listed GPUs and {@code all}: the run's agent leases each; one another run holds is noted for the GPU check. */
    private void hold(NodeSpec node, NodeSession session, GpuInventory inventory) {
        List<Integer> wanted = node.gpus() instanceof NodeSpec.GpuRequest.Listed l ? l.indices() : inventory.indices();
        List<Gpu> gpus = inventory.gpus().stream().filter(g -> wanted.contains(g.index())).toList();
        try {
            Lease.Answer answer = session.lease(GpuPick.hold(spec.name(), runId.orElseThrow(), gpus));
            if (answer.error().isPresent()) {
                leaseNotes.put(node.name(), "GPU leases not taken: " + answer.error().get());
            } else if (!answer.held().isEmpty()) {
                leaseNotes.put(node.name(), String.join("; ", answer.held().entrySet().stream()
                        .map(e -> "GPU " + e.getKey() + " is held by " + e.getValue()).toList()));
            }
        } catch (IOException e) {
            leaseNotes.put(node.name(), "GPU leases not taken: " + e.getMessage());
        }
    }

    /**
     * GPU cells of listed and {@code all} nodes, once every node's inventory is in (the first GPU
     * node's model is the reference); scheduler-given and picked nodes have theirs from {@link #survey}.
     */
    void judge(Map<String, Map<Check, Cell>> cells, Map<String, GpuInventory> inventories) {
        Optional<String> reference = Optional.empty();
        String referenceNode = "";
        for (NodeSpec node : spec.nodes()) {
            GpuInventory inv = inventories.get(node.name());
            if (inv == null) {
                continue;
            }
            if (node.gpus() instanceof NodeSpec.GpuRequest.Count || given.isPresent()) {
                continue;
            }
            Cell cell = GpuCheck.judge(node, inv, reference, referenceNode);
            String held = leaseNotes.get(node.name());
            if (held != null && cell.status() != Cell.Status.FAIL) {
                String text = cell.text() + ": " + held;
                // a GPU this run could not lease is as unsafe as one another run holds
                cell = spec.strictGpuLeases() ? Cell.fail(text + " (gpu_leases: strict)") : Cell.warn(text);
            }
            cells.get(node.name()).put(Check.GPUS, cell);
            if (reference.isEmpty() && !inv.gpus().isEmpty()) {
                reference = Optional.of(inv.gpus().get(0).name());
                referenceNode = node.name();
            }
        }
    }
}
