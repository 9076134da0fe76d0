package org.runjob.run;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.json.Json;
import org.runjob.node.FanOut;
import org.runjob.node.NodeException;
import org.runjob.protocol.NodeFacts;
import org.runjob.protocol.NodeJvm;
import org.runjob.protocol.Outputs;
import org.runjob.session.NodeSession;
import org.runjob.session.NodeStarter;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

import tools.jackson.databind.node.ObjectNode;

/**
 * Brings a run's {@code outputs} from every node into its run folder ({@code outputs/NODE/PATH}),
 * all nodes at once: a fresh agent per node in the run's directory, which sends each file (checked
 * by size and SHA-256 as it lands, {@link NodeSession#outputs}). Used when a run ends, whatever its
 * end, and by {@code runjob pull}. A node that cannot be reached is reported, never fatal: the
 * run's result stands. Nodes that share a workdir (their agents report one workdir token) share
 * the run's directory: its files come once, from the first of them in node order, and the others
 * say where they are.
 */
public final class RunOutputs {

    private static final Logger LOG = LogManager.getLogger(RunOutputs.class);
    /** How long one node's files may take to arrive. */
    static final long TIMEOUT_MS = 6 * 3_600_000L;

    private RunOutputs() {
    }

    /**
     * @param paths what to bring (the job's {@code outputs}, or what {@code pull} names)
     * @param into  where each node's files go, under {@code NODE/}: a run folder's {@code outputs}
     * @return per node: {@code files}, {@code bytes}, {@code seconds}, {@code skipped}, or {@code error}
     */
    public static ObjectNode collect(JobSpec spec, NodeStarter starter, List<String> paths, Path into, PrintStream err) {
        ObjectNode out = Json.object();
        if (paths.isEmpty()) {
            return out;
        }
        long t0 = System.nanoTime();
        Map<NodeSpec, ObjectNode> results;
        Tokens tokens = new Tokens(spec.nodes());
        try (FanOut fanOut = new FanOut(spec.nodes().size())) {
            results = fanOut.onEach(spec.nodes(), node -> one(node, starter, paths, spec.outputsMaxBytes(), into.resolve(node.name()), tokens));
        }
        long files = 0;
        long bytes = 0;
        for (Map.Entry<NodeSpec, ObjectNode> e : results.entrySet()) {
            out.set(e.getKey().name(), e.getValue());
            files += e.getValue().path("files").asLong(0);
            bytes += e.getValue().path("bytes").asLong(0);
            if (e.getValue().has("error")) {
                err.println("runjob: outputs of node " + e.getKey().name() + " did not come: " + e.getValue().get("error").asString());
            }
            e.getValue().path("skipped").forEach(s -> err.println("runjob: outputs of node " + e.getKey().name() + ": " + s.asString()));
            if (e.getValue().has("shares_with")) {
                err.println("runjob: outputs of node " + e.getKey().name() + ": its run directory is node " + e.getValue().get("shares_with")
                        .asString() + "'s (a shared workdir): they are in " + into.resolve(e.getValue().get("shares_with").asString()));
            }
        }
        err.printf("runjob: outputs: %d file%s (%s) from %d node%s in %.1f s: %s%n", files, files == 1 ? "" : "s", size(bytes),
                results.size(), results.size() == 1 ? "" : "s", (System.nanoTime() - t0) / 1e9, into);
        return out;
    }

    private static ObjectNode one(NodeSpec node, NodeStarter starter, List<String> paths, long maxBytes, Path into, Tokens tokens) {
        ObjectNode o = Json.object();
        long t0 = System.nanoTime();
        try {
            NodeSession session;
            NodeFacts facts;
            try {
                starter.reach(node);
                session = starter.start(node, NodeJvm.Jit.FULL); // C2: only it hashes with the CPU's SHA-256 instructions
                facts = session.hello(60_000);
            } catch (IOException | NodeException | RuntimeException e) {
                tokens.reported(node, Optional.empty());
                throw e;
            }
            try (session) {
                if (facts.get(NodeFacts.WORKDIR_ERROR).isPresent()) {
                    tokens.reported(node, Optional.empty());
                    throw new IOException(facts.get(NodeFacts.WORKDIR_ERROR).get());
                }
                Optional<String> first = tokens.reported(node, facts.get(NodeFacts.TOKEN)).owner(node);
                if (first.isPresent()) {
                    o.put("files", 0).put("bytes", 0).put("shares_with", first.get());
                } else {
                    Outputs.Manifest m = session.outputs(paths, maxBytes, into, TIMEOUT_MS);
                    long bytes = m.files().stream().mapToLong(f -> Math.max(0, f.size())).sum();
                    o.put("files", m.files().stream().filter(f -> f.size() >= 0).count()).put("bytes", bytes);
                    var skipped = o.putArray("skipped");
                    m.skipped().forEach(skipped::add);
                }
            }
        } catch (IOException | NodeException | RuntimeException e) {
            LOG.warn("node {}: outputs did not come", node.name(), e);
            o.put("error", String.valueOf(e.getMessage()));
        }
        o.put("seconds", Math.round((System.nanoTime() - t0) / 1e6) / 1e3);
        return o;
    }

    /**
     * The workdir token each node's agent reported, shared by the nodes' threads: once every node
     * reported (or failed to), the first node in node order holding a token brings its files.
     */
    private static final class Tokens {
        private final List<NodeSpec> nodes;
        private final Map<String, Optional<String>> reported = new ConcurrentHashMap<>();
        private final CountDownLatch all;

        Tokens(List<NodeSpec> nodes) {
            this.nodes = nodes;
            this.all = new CountDownLatch(nodes.size());
        }

        Tokens reported(NodeSpec node, Optional<String> token) {
            if (reported.putIfAbsent(node.name(), token) == null) {
                all.countDown();
            }
            return this;
        }

        /** The earlier node whose run directory is {@code node}'s, once all reported; empty when it is its own. */
        Optional<String> owner(NodeSpec node) throws IOException {
            try {
                if (!all.await(120, TimeUnit.SECONDS)) {
                    return Optional.empty(); // a node still starting: each brings its own
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
            Optional<String> mine = reported.get(node.name());
            for (NodeSpec n : nodes) {
                if (n.name().equals(node.name())) {
                    return Optional.empty();
                }
                if (mine.isPresent() && reported.getOrDefault(n.name(), Optional.empty()).equals(mine)) {
                    return Optional.of(n.name());
                }
            }
            return Optional.empty();
        }
    }

    private static String size(long bytes) {
        return bytes < 1024 ? bytes + " B" : bytes < 1L << 20 ? (bytes >> 10) + " KiB" : (bytes >> 20) + " MiB";
    }
}
