package org.runjob.preflight;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

import org.runjob.distribute.FileList;
import org.runjob.distribute.Sha256;
import org.runjob.plan.NodePlan;
import org.runjob.protocol.EnvironmentReply;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.session.NodeSession;
import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.EnvironmentSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * The environment stage of preflight, after a node's files are shipped: its agent activates the
 * node's environment, runs its setup when due, and finds the workers' program as they will run it
 * ({@link EnvironmentRequest}). The program cell then names what really runs there, and the env
 * cell the environment; {@link #judge} compares the nodes once all answered.
 *
 * <p>Setup's key is the SHA-256 of the node's environment block (its commands among it) and of the
 * content of every shipped file or directory a setup command names (its name as a word of the
 * command): unchanged, the node skips setup.
 */
public final class EnvironmentCheck {

    /** The fields compared between nodes, with the name a skew is reported by. */
    static final Map<String, String> COMPARED = Map.of(EnvironmentReply.TORCH, "torch", EnvironmentReply.CUDA, "CUDA",
            EnvironmentReply.NCCL, "NCCL");
    private static final List<String> ORDER = List.of(EnvironmentReply.TORCH, EnvironmentReply.CUDA, EnvironmentReply.NCCL);
    /** More than the setup's own deadline: the activation's and a container probe's. */
    private static final long MARGIN_MS = 300_000;
    static final long MIN_SHM_BYTES = 1L << 30;

    /** Where each line a node's setup prints goes. */
    public interface SetupOutput {
        void line(String node, String line);

        SetupOutput NONE = (node, line) -> { };
    }

    private final JobSpec spec;
    private final List<FileList.Entry> files;
    private final EnvironmentRequest.Setup mode;
    private final boolean shipped;
    private final Optional<String> runId;
    private final SetupOutput output;
    private final BooleanSupplier stop;

    /**
     * @param files   the files shipped to the nodes, for the setup key
     * @param shipped whether they were shipped (a {@code check} ships none)
     * @param stop    true once the wait for a node should end (Ctrl-C): its setup is stopped with its agent
     */
    public EnvironmentCheck(JobSpec spec, List<FileList.Entry> files, EnvironmentRequest.Setup mode, boolean shipped, Optional<String> runId,
                            SetupOutput output, BooleanSupplier stop) {
        this.spec = spec;
        this.files = List.copyOf(files);
        this.mode = mode;
        this.shipped = shipped;
        this.runId = runId;
        this.output = output;
        this.stop = stop;
    }

    /** The program each worker of {@code node} runs, as the plan's argv names it. */
    static String program(JobSpec spec, NodeSpec node) {
        String argv0 = spec.entrypoint() instanceof EntrypointSpec.Command c ? c.argv().get(0) : "java";
        return node.environment().programFor(argv0);
    }

    /** The request for {@code node}. */
    EnvironmentRequest request(NodeSpec node) throws IOException {
        EnvironmentSpec e = node.environment();
        Map<String, String> env = new LinkedHashMap<>(spec.env());
        env.putAll(node.env());
        env.put("RUNJOB_JOB", spec.name());
        env.put("RUNJOB_NODE", node.name());
        runId.ifPresent(r -> env.put("RUNJOB_RUN_ID", r));
        return new EnvironmentRequest(program(spec, node), e.interpreter().map(i -> i.kind().key()).orElse(""),
                e.interpreter().map(EnvironmentSpec.Interpreter::value).orElse(""), e.modules(), e.sources(), e.setup(),
                e.setupTimeoutSeconds() * 1000L, e.setup().isEmpty() ? "" : setupKey(e, files), mode, shipped, env, NodePlan.container(e));
    }

    /** The node's environment, checked: its cells filled; empty when the node failed (its cells say why). */
    Optional<EnvironmentReply> check(NodeSpec node, NodeSession session, Map<Check, Cell> row) {
        EnvironmentReply reply;
        try {
            EnvironmentRequest request = request(node);
            reply = session.environment(request, line -> output.line(node.name(), line), request.setupTimeoutMillis() + MARGIN_MS, stop);
        } catch (IOException e) {
            row.put(Check.ENVIRONMENT, Cell.fail("the environment check did not run: " + e.getMessage()));
            return Optional.empty();
        }
        String program = program(spec, node);
        Optional<String> failed = reply.get(EnvironmentReply.ACTIVATION_ERROR).or(() -> reply.get(EnvironmentReply.CONTAINER_ERROR))
                .or(() -> reply.get(EnvironmentReply.SETUP_ERROR));
        if (failed.isPresent()) {
            row.put(Check.ENVIRONMENT, Cell.fail(failed.get()));
            return Optional.empty();
        }
        row.put(Check.PROGRAM, reply.get(EnvironmentReply.PROGRAM_ERROR).map(Cell::fail).orElse(Cell.ok(program
                + reply.get(EnvironmentReply.PROGRAM_PATH).filter(p -> !p.equals(program)).map(p -> " -> " + p).orElse("")
                + reply.get(EnvironmentReply.PYTHON).map(v -> " (Python " + v + reply.get(EnvironmentReply.TORCH).map(t -> ", torch " + t)
                .orElse("") + ")").orElse(""))));
        if (row.get(Check.PROGRAM).status() != Cell.Status.FAIL && reply.get(EnvironmentReply.PYTHON).isPresent()
                && reply.get(EnvironmentReply.TORCH).isEmpty()) {
            importsTorch().ifPresent(script -> row.put(Check.PROGRAM, Cell.fail(program
                    + reply.get(EnvironmentReply.PROGRAM_PATH).filter(p -> !p.equals(program)).map(p -> " -> " + p).orElse("")
                    + " (Python " + reply.get(EnvironmentReply.PYTHON).get()
                    + ") has no torch, and " + script + " imports it: install torch for it (Debian: apt-get install python3-torch),"
                    + " or name an environment that has it (environment.venv, .conda or .python)")));
        }
        row.put(Check.ENVIRONMENT, cell(node.environment(), reply));
        return row.get(Check.PROGRAM).status() == Cell.Status.FAIL ? Optional.empty() : Optional.of(reply);
    }

    private static final Pattern IMPORTS_TORCH = Pattern.compile("^(import torch\\b|from torch\\b)", Pattern.MULTILINE);

    /**
     * The entrypoint's script ({@code python3 SCRIPT ...}, a shipped file) when it imports torch at
     * its top level: its workers would fail at once where the Python has none.
     */
    private Optional<String> importsTorch() {
        if (!(spec.entrypoint() instanceof EntrypointSpec.Command c) || c.argv().size() < 2 || !c.argv().get(1).endsWith(".py")) {
            return Optional.empty();
        }
        String script = c.argv().get(1).replaceFirst("^\\./", "");
        for (FileList.Entry f : files) {
            if (f.destination().equals(script)) {
                try (InputStream in = Files.newInputStream(f.source())) {
                    String head = new String(in.readNBytes(1 << 16), StandardCharsets.UTF_8);
                    return IMPORTS_TORCH.matcher(head).find() ? Optional.of(script) : Optional.empty();
                } catch (IOException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** The env cell: what the environment is, CUDA and NCCL where torch has them, setup's state. */
    private static Cell cell(EnvironmentSpec e, EnvironmentReply reply) {
        List<String> parts = new ArrayList<>();
        e.interpreter().ifPresent(i -> parts.add(i.kind().key() + " " + i.value()));
        if (!e.modules().isEmpty()) {
            parts.add("modules " + String.join(",", e.modules()));
        }
        if (!e.sources().isEmpty()) {
            parts.add("source " + String.join(",", e.sources()));
        }
        reply.get(EnvironmentReply.IMAGE).ifPresent(i -> parts.add("image " + i));
        reply.get(EnvironmentReply.CUDA).ifPresent(c -> parts.add("CUDA " + c));
        reply.get(EnvironmentReply.NCCL).ifPresent(n -> parts.add("NCCL " + n));
        reply.get(EnvironmentReply.SETUP).filter(s -> !s.equals("none")).ifPresent(s -> parts.add("setup " + s
                + (s.equals("ran") ? " in " + reply.get(EnvironmentReply.SETUP_SECONDS).orElse("?") + " s" : "")));
        String text = parts.isEmpty() ? "ok" : String.join(", ", parts);
        Optional<Long> shm = reply.get(EnvironmentReply.SHM_BYTES).filter(v -> v.matches("\\d+")).map(Long::parseLong);
        if (shm.isPresent() && shm.get() < MIN_SHM_BYTES) {
            return Cell.warn(text + "; /dev/shm in the container is " + (shm.get() >> 20) + " MiB, under 1 GiB: NCCL may fail"
                    + " (add --shm-size to container.options, or --ipc host)");
        }
        return Cell.ok(text);
    }

    /**
     * Compares the nodes whose program is a Python: a torch, CUDA or NCCL version (or its absence)
     * that is not the same on all of them fails each node in the minority (every node of a tie) (a warning under {@code on_skew: warn} on every
     * node), naming the field, its value there and elsewhere.
     */
    void judge(Map<String, Map<Check, Cell>> cells, Map<String, EnvironmentReply> replies) {
        if (replies.size() < 2) {
            return;
        }
        boolean error = spec.nodes().stream().filter(n -> replies.containsKey(n.name())).anyMatch(n -> n.environment().skewIsError());
        for (String field : ORDER) {
            Map<String, List<String>> byValue = new TreeMap<>();
            for (NodeSpec n : spec.nodes()) {
                EnvironmentReply r = replies.get(n.name());
                if (r != null && r.get(EnvironmentReply.PYTHON).isPresent()) {
                    byValue.computeIfAbsent(r.get(field).orElse("none"), v -> new ArrayList<>()).add(n.name());
                }
            }
            if (byValue.size() < 2) {
                continue;
            }
            int most = byValue.values().stream().mapToInt(List::size).max().orElse(0);
            boolean tie = byValue.values().stream().filter(l -> l.size() == most).count() > 1;
            for (Map.Entry<String, List<String>> e : byValue.entrySet()) {
                if (e.getValue().size() == most && !tie) {
                    continue;
                }
                for (String node : e.getValue()) {
                    List<String> elsewhere = new ArrayList<>();
                    byValue.forEach((v, nodes) -> {
                        if (!v.equals(e.getKey())) {
                            elsewhere.add(v + " on " + String.join(", ", nodes));
                        }
                    });
                    String text = COMPARED.get(field) + " " + e.getKey() + " here, " + String.join("; ", elsewhere)
                            + ": every node must run the same (on_skew: warn lets the run start)";
                    merge(cells.get(node), error ? Cell.fail(text) : Cell.warn(text));
                }
            }
        }
    }

    /** A skew cell over the env cell: the worse status wins; texts join. */
    private static void merge(Map<Check, Cell> row, Cell skew) {
        Cell old = row.get(Check.ENVIRONMENT);
        if (old == null || old.status() == Cell.Status.OK || old.status() == Cell.Status.SKIPPED) {
            row.put(Check.ENVIRONMENT, skew);
        } else if (old.status() == Cell.Status.WARN || skew.status() == Cell.Status.FAIL) {
            row.put(Check.ENVIRONMENT, new Cell(skew.status() == Cell.Status.FAIL ? Cell.Status.FAIL : old.status(),
                    old.text() + "; " + skew.text()));
        }
    }

    /** A word of a setup command: what names a shipped file or directory. */
    private static final Pattern WORD = Pattern.compile("[^\\s'\"=;&|()<>]+");

    /** The setup key of environment {@code e} with {@code files} shipped. */
    static String setupKey(EnvironmentSpec e, List<FileList.Entry> files) throws IOException {
        MessageDigest d;
        try {
            d = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
        update(d, "runjob setup 1");
        update(d, e.interpreter().map(i -> i.kind().key() + "=" + i.value()).orElse(""));
        e.modules().forEach(m -> update(d, "module " + m));
        e.sources().forEach(s -> update(d, "source " + s));
        e.container().ifPresent(c -> update(d, "container " + c));
        e.setup().forEach(c -> update(d, "setup " + c));
        List<String> words = new ArrayList<>();
        for (String c : e.setup()) {
            WORD.matcher(c).results().forEach(m -> words.add(m.group().replaceFirst("^\\./", "").replaceFirst("/$", "")));
        }
        for (FileList.Entry f : files) {
            String top = f.destination().split("/")[0];
            if (words.contains(top) || words.contains(f.destination())) {
                update(d, "file " + f.destination() + " " + Sha256.ofSource(f.source()));
            }
        }
        return HexFormat.of().formatHex(d.digest());
    }

    private static void update(MessageDigest d, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        d.update((byte) (b.length >>> 24));
        d.update((byte) (b.length >>> 16));
        d.update((byte) (b.length >>> 8));
        d.update((byte) b.length);
        d.update(b);
    }
}
