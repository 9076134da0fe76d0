package org.runjob.launch;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.protocol.Answer;
import org.runjob.protocol.HealthRequest;
import org.runjob.session.NodeSession;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * A node's health before an attempt, asked of its agent (HEALTH): no uncorrectable ECC error on
 * the GPUs its workers use and none of them missing, where nvidia-smi tells (only where runjob
 * probed the GPUs itself: a scheduler's cgroup renumbers them), and each {@code failure.health_check}
 * command exiting 0, all within {@link #TIMEOUT_MS}. The commands run with the job's env, the
 * node's, RUNJOB_NODE (the node's name) and RUNJOB_RUN_ID. {@link #checkAll} checks an attempt's
 * nodes at once.
 */
public final class Health {

    public static final long TIMEOUT_MS = 60_000;

    /** No check at all: every node is healthy. */
    public static final Health NONE = new Health(List.of(), Map.of(), "", false);

    private final List<String> commands;
    private final Map<String, String> env;
    private final String runId;
    private final boolean gpus;

    /** @param gpus whether the GPUs' indices are the node's own (probed by runjob), so nvidia-smi's are the same */
    public Health(JobSpec spec, String runId, boolean gpus) {
        this(spec.failure().healthCheck(), spec.env(), runId, gpus);
    }

    private Health(List<String> commands, Map<String, String> env, String runId, boolean gpus) {
        this.commands = List.copyOf(commands);
        this.env = Map.copyOf(env);
        this.runId = runId;
        this.gpus = gpus;
    }

    /** Whether there is anything to check (commands, or GPUs runjob probed). */
    public boolean checks() {
        return !commands.isEmpty() || gpus;
    }

    /** Why {@code node} is not healthy, through its agent {@code session}; empty when it is. */
    public Optional<String> check(NodeSession session, NodeSpec node, List<Integer> used) {
        List<Integer> checked = gpus ? used : List.of();
        if (commands.isEmpty() && checked.isEmpty()) {
            return Optional.empty();
        }
        Map<String, String> vars = new LinkedHashMap<>(env);
        vars.putAll(node.env());
        vars.put("RUNJOB_NODE", node.name());
        vars.put("RUNJOB_RUN_ID", runId);
        try {
            Answer a = session.health(new HealthRequest(commands, checked, TIMEOUT_MS, vars));
            return a.failure();
        } catch (IOException e) {
            return Optional.of("its agent did not answer the health check: " + e.getMessage());
        }
    }

    /** Opens a new agent on a node, by name. */
    interface Opener {
        NodeSession open(String node) throws IOException;
    }

    /**
     * Checks the nodes {@code todo} of {@code plan} all at once, each on its agent in {@code started}
     * (opened by {@code opener} and put there when it has none; a node whose agent does not open is
     * skipped). An unhealthy node's agent is closed and removed. Returns the unhealthy nodes with
     * why, in no order.
     */
    Map<String, String> checkAll(LaunchPlan plan, List<NodePlan> todo, Map<String, NodeSession> started, Opener opener) {
        Map<String, String> unhealthy = new ConcurrentHashMap<>();
        if (todo.isEmpty() || !checks()) {
            return unhealthy;
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(32, todo.size()));
        try {
            List<Future<?>> all = new ArrayList<>();
            for (NodePlan node : todo) {
                all.add(pool.submit(() -> {
                    NodeSession session = started.get(node.name());
                    try {
                        if (session == null) {
                            session = opener.open(node.name());
                            started.put(node.name(), session);
                        }
                    } catch (IOException e) {
                        return;
                    }
                    NodeSpec spec = plan.spec().node(node.name()).orElseThrow();
                    Optional<String> why = check(session, spec, used(node));
                    if (why.isPresent()) {
                        unhealthy.put(node.name(), why.get());
                        started.remove(node.name()).close();
                    }
                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException("a health check broke: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
        return unhealthy;
    }

    /** The GPU indices a planned node's workers use (CUDA_VISIBLE_DEVICES); none when it is not a list of numbers. */
    public static List<Integer> used(NodePlan node) {
        String v = node.visibleDevices();
        if (v.isBlank() || !v.matches("\\d+(,\\d+)*")) {
            return List.of();
        }
        return Arrays.stream(v.split(",")).map(Integer::valueOf).toList();
    }
}
