package org.runjob.preflight;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.jcraft.jsch.Session;

import org.runjob.agent.NodeJvm;
import org.runjob.agent.Probe;
import org.runjob.agent.Programs;
import org.runjob.agent.Workdirs;
import org.runjob.agent.gpu.GpuInventory;
import org.runjob.distribute.RemotePaths;
import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.transport.Connections;
import org.runjob.transport.RemoteExec;
import org.runjob.transport.SshAgentChannel;
import org.runjob.transport.SshException;
import org.runjob.transport.SshTarget;

/**
 * Checks every node before anything starts, all nodes in parallel.
 *
 * <ol>
 *   <li>Per node: SSH login (reach, host key, auth), java &gt;= 17, the workdir can be created and
 *       is writable, free disk, the entrypoint's program is found. Local nodes are checked in
 *       this process, remote ones with one command over SSH.</li>
 *   <li>Where those pass, the {@link Shipper} ships what the next step needs (the agent jar; for a
 *       run, the job's files too), reported in the workdir cell.</li>
 *   <li>Nodes that use GPUs are probed ({@link GpuInventories}, JCuda on the node) and judged by
 *       {@link GpuCheck}: indices exist, a driver is there, busy GPUs and mixed models are warned of.</li>
 *   <li>Rendezvous: the master binds MASTER_PORT (0 for {@code port: auto}) as rank 0 will; every
 *       node, the master too, then connects to MASTER_ADDR:MASTER_PORT and reports the interface
 *       its route leaves by (for GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME).</li>
 * </ol>
 */
public final class Preflight {

    static final int MIN_JAVA = 17;
    static final long MIN_FREE_BYTES = 64L << 20;
    static final long WARN_FREE_BYTES = 1L << 30;
    private static final Pattern JAVA_VERSION = Pattern.compile("version \"(1\\.)?(\\d+)");
    private static final String NODE_SCRIPT = String.join("\n",
            "w=$1; p=$2",
            // the JDK's release file gives the version without starting a JVM; java -version otherwise
            "r=\"$(dirname \"$(readlink -f \"$(command -v java)\" 2>/dev/null)\" 2>/dev/null)/../release\"",
            "v=$([ -r \"$r\" ] && sed -n 's/^JAVA_VERSION=\"\\(.*\\)\"/version \"\\1\"/p' \"$r\")",
            "[ -n \"$v\" ] || v=$(java -version 2>&1 | head -n 1)",
            "echo \"java=$v\"",
            "if mkdir -p -- \"$w\" 2>/dev/null && [ -w \"$w\" ]; then echo workdir=ok; else echo workdir=fail; fi",
            "df -Pk -- \"$w\" 2>/dev/null | awk 'NR==2 {print \"free_kb=\" $4}'",
            "if command -v -- \"$p\" >/dev/null 2>&1 || [ -x \"$w/$p\" ]; then echo program=ok; else echo program=missing; fi");

    /** Ships to a node whose basic checks passed; returns a short summary for the report. */
    @FunctionalInterface
    public interface Shipper {
        String ship(NodeSpec node, Optional<Session> session) throws IOException, SshException;
    }

    private final JobSpec spec;
    private final Connections connections;
    private final Map<String, String> env;
    private final Path agentJar;
    private final Map<String, GpuInventory> inventories = new java.util.concurrent.ConcurrentHashMap<>();
    /** This machine's GPUs, probed once however many local nodes ask. */
    /** This machine's GPUs, probed once however many local nodes ask. */
    private final java.util.function.Supplier<GpuInventory> localGpus;

    public Preflight(JobSpec spec, Connections connections, Map<String, String> env, Path agentJar) {
        this.spec = spec;
        this.connections = connections;
        this.env = Map.copyOf(env);
        this.agentJar = agentJar;
        this.localGpus = GpuInventories.localOnce(this.env);
    }

    public PreflightReport run(Shipper shipper) {
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(32, spec.nodes().size()));
        try {
            Map<String, Map<Check, Cell>> cells = new LinkedHashMap<>();
            List<CompletableFuture<Void>> basics = new ArrayList<>();
            for (NodeSpec node : spec.nodes()) {
                Map<Check, Cell> row = new EnumMap<>(Check.class);
                cells.put(node.name(), row);
                basics.add(CompletableFuture.runAsync(() -> basic(node, row, shipper), pool));
            }
            basics.forEach(CompletableFuture::join);
            judgeGpus(cells);
            boolean allBasic = cells.values().stream().noneMatch(r -> r.values().stream().anyMatch(c -> c.status() == Cell.Status.FAIL));
            Map<String, String> ifaces = new LinkedHashMap<>();
            OptionalInt port = OptionalInt.empty();
            if (allBasic) {
                port = rendezvous(cells, ifaces, pool);
            }
            List<NodeReport> reports = new ArrayList<>();
            for (NodeSpec node : spec.nodes()) {
                reports.add(new NodeReport(node.name(), cells.get(node.name()), Optional.ofNullable(ifaces.get(node.name()))));
            }
            return new PreflightReport(reports, port, inventories, masterAddr());
        } finally {
            pool.shutdownNow();
        }
    }

    static SshTarget target(NodeSpec node) {
        return new SshTarget(node.name(), node.host().orElseThrow(), node.port(), node.user());
    }

    private String workdir(NodeSpec node) {
        return node.workdir().orElse(spec.workdir());
    }

    private String program() {
        return spec.entrypoint() instanceof EntrypointSpec.Command c ? c.argv().get(0) : "java";
    }

    private void basic(NodeSpec node, Map<Check, Cell> row, Shipper shipper) {
        Optional<Session> session = Optional.empty();
        if (node.local()) {
            row.put(Check.LOGIN, Cell.ok("local"));
            row.put(Check.JAVA, Cell.ok(Integer.toString(Runtime.version().feature())));
            Path dir = Workdirs.resolve(workdir(node), env);
            try {
                Files.createDirectories(dir);
                row.put(Check.WORKDIR, Files.isWritable(dir) ? Cell.ok("ok") : Cell.fail("not writable: " + dir));
                row.put(Check.DISK, disk(dir.toFile().getUsableSpace()));
            } catch (IOException e) {
                row.put(Check.WORKDIR, Cell.fail("cannot create " + dir + ": " + e.getMessage()));
            }
            row.put(Check.PROGRAM, Programs.missing(program(), env.get("PATH"), dir).map(Cell::fail).orElse(Cell.ok(program())));
        } else {
            try {
                Session s = connections.session(target(node));
                session = Optional.of(s);
                row.put(Check.LOGIN, Cell.ok(s.getUserName() + "@" + s.getHost() + ":" + s.getPort()));
                remoteBasics(s, node, row);
            } catch (SshException e) {
                row.put(Check.LOGIN, Cell.fail(e.getMessage()));
                return;
            }
        }
        if (row.values().stream().anyMatch(c -> c.status() == Cell.Status.FAIL)) {
            return;
        }
        try {
            String shipped = shipper.ship(node, session);
            row.put(Check.WORKDIR, Cell.ok(shipped));
        } catch (IOException | SshException e) {
            row.put(Check.WORKDIR, Cell.fail("shipping failed: " + e.getMessage()));
            return;
        }
        if (GpuCheck.wantsGpus(node)) {
            inventories.put(node.name(), session.isPresent()
                    ? GpuInventories.remote(session.get(), workdir(node))
                    : localGpus.get());
        } else {
            row.put(Check.GPUS, Cell.ok("not used"));
        }
    }

    /** GPU cells, once every node's inventory is in (the first GPU node's model is the reference). */
    private void judgeGpus(Map<String, Map<Check, Cell>> cells) {
        Optional<String> reference = Optional.empty();
        String referenceNode = "";
        for (NodeSpec node : spec.nodes()) {
            GpuInventory inv = inventories.get(node.name());
            if (inv == null) {
                continue;
            }
            cells.get(node.name()).put(Check.GPUS, GpuCheck.judge(node, inv, reference, referenceNode));
            if (reference.isEmpty() && !inv.gpus().isEmpty()) {
                reference = Optional.of(inv.gpus().get(0).name());
                referenceNode = node.name();
            }
        }
    }

    private void remoteBasics(Session s, NodeSpec node, Map<Check, Cell> row) throws SshException {
        RemoteExec.Result r = RemoteExec.run(s, List.of("sh", "-c", NODE_SCRIPT, "sh", RemotePaths.of(workdir(node)), program()),
                spec.ssh().connectTimeoutSeconds() * 3000);
        Map<String, String> kv = new LinkedHashMap<>();
        for (String line : r.stdout().split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                kv.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        Matcher m = JAVA_VERSION.matcher(kv.getOrDefault("java", ""));
        if (!m.find()) {
            row.put(Check.JAVA, Cell.fail("no java on the node's PATH (install a JRE >= " + MIN_JAVA + ")"));
        } else {
            int major = Integer.parseInt(m.group(2));
            row.put(Check.JAVA, major >= MIN_JAVA ? Cell.ok(Integer.toString(major))
                    : Cell.fail("java " + major + " is too old (needs >= " + MIN_JAVA + ")"));
        }
        row.put(Check.WORKDIR, "ok".equals(kv.get("workdir")) ? Cell.ok("ok")
                : Cell.fail("cannot create or write " + workdir(node)));
        String free = kv.get("free_kb");
        row.put(Check.DISK, free == null || !free.matches("\\d+") ? Cell.warn("unknown") : disk(Long.parseLong(free) * 1024));
        row.put(Check.PROGRAM, "ok".equals(kv.get("program")) ? Cell.ok(program())
                : Cell.fail(program() + " not found on the node's PATH"));
    }

    private static Cell disk(long free) {
        String text = (free >> 20) + " MiB free";
        if (free < MIN_FREE_BYTES) {
            return Cell.fail(text);
        }
        return free < WARN_FREE_BYTES ? Cell.warn(text) : Cell.ok(text);
    }

    /** rendezvous.addr, else the master's address: its host, or the HostName its SSH session resolved that to. */
    private String masterAddr() {
        NodeSpec master = spec.masterNode();
        if (spec.rendezvous().addr().isPresent()) {
            return spec.rendezvous().addr().get();
        }
        if (!master.local()) {
            Optional<Session> s = connections.existing(master.name());
            if (s.isPresent()) {
                return s.get().getHost();
            }
        }
        return master.host().orElse("127.0.0.1");
    }

    private OptionalInt rendezvous(Map<String, Map<Check, Cell>> cells, Map<String, String> ifaces, ExecutorService pool) {
        NodeSpec master = spec.masterNode();
        String addr = masterAddr();
        int wanted = spec.rendezvous().port() instanceof JobSpec.MasterPort.Fixed f ? f.port() : 0;
        int timeoutMs = Math.min(5000, spec.ssh().connectTimeoutSeconds() * 1000);
        Listener listener;
        try {
            listener = listen(master, addr, wanted);
        } catch (IOException | SshException e) {
            cells.get(master.name()).put(Check.RENDEZVOUS, Cell.fail(e.getMessage()));
            return OptionalInt.empty();
        }
        try (listener) {
            int port = listener.port();
            List<CompletableFuture<Void>> checks = new ArrayList<>();
            for (NodeSpec node : spec.nodes()) {
                checks.add(CompletableFuture.runAsync(() -> {
                    // the master holds MASTER_ADDR itself: its listener already named the interface
                    String answer = node == master && !listener.iface().equals("-") ? "connected " + listener.iface()
                            : connectFrom(node, addr, port, timeoutMs);
                    Map<Check, Cell> row = cells.get(node.name());
                    if (answer.startsWith("connected ")) {
                        String iface = answer.substring("connected ".length()).trim();
                        if (!iface.equals("-")) {
                            ifaces.put(node.name(), iface);
                        }
                        String what = node == master ? "listens :" + port + " via " + iface : "via " + iface;
                        row.put(Check.RENDEZVOUS, Cell.ok(what));
                    } else {
                        row.put(Check.RENDEZVOUS, Cell.fail("cannot reach " + addr + ":" + port + ": "
                                + answer.replaceFirst("^failed ", "")));
                    }
                }, pool));
            }
            checks.forEach(CompletableFuture::join);
            return wanted == 0 ? OptionalInt.of(port) : OptionalInt.empty();
        }
    }

    private String connectFrom(NodeSpec node, String addr, int port, int timeoutMs) {
        if (node.local()) {
            return Probe.connect(addr, port, timeoutMs);
        }
        try {
            Session s = connections.session(target(node));
            RemoteExec.Result r = RemoteExec.run(s, probe(node, "connect", addr, Integer.toString(port), Integer.toString(timeoutMs)),
                    timeoutMs + 30_000);
            String line = r.stdout().strip();
            return line.isEmpty() ? "failed the probe printed nothing (" + r.stderr().strip() + ")" : line;
        } catch (SshException e) {
            return "failed " + e.getMessage();
        }
    }

    private List<String> probe(NodeSpec node, String... args) {
        List<String> probeArgs = new ArrayList<>(List.of("probe"));
        probeArgs.addAll(List.of(args));
        return NodeJvm.argv("java", RemotePaths.agentJar(workdir(node)), probeArgs.toArray(String[]::new));
    }

    /** The master's listening socket for the duration of the checks. */
    private interface Listener extends AutoCloseable {
        int port();

        /** The master's interface holding MASTER_ADDR, or "-" when MASTER_ADDR is not one of its own addresses. */
        String iface();

        @Override
        void close();
    }

    private Listener listen(NodeSpec master, String addr, int port) throws IOException, SshException {
        if (master.local()) {
            ServerSocket server = new ServerSocket();
            server.setReuseAddress(true);
            try {
                server.bind(new InetSocketAddress(port));
            } catch (IOException e) {
                server.close();
                throw new IOException("port " + port + " cannot be bound on the master: " + e.getMessage());
            }
            Thread acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        server.accept().close();
                    } catch (IOException e) {
                        // closed
                    }
                }
            }, "preflight-accept");
            acceptor.setDaemon(true);
            acceptor.start();
            String iface = Probe.interfaceHolding(addr);
            return new Listener() {
                public int port() {
                    return server.getLocalPort();
                }

                public String iface() {
                    return iface;
                }

                public void close() {
                    try {
                        server.close();
                    } catch (IOException e) {
                        // closed
                    }
                }
            };
        }
        Session s = connections.session(target(master));
        SshAgentChannel ch = SshAgentChannel.start(s, probe(master, "listen", addr, Integer.toString(port)),
                java.io.OutputStream.nullOutputStream(), 30_000);
        BufferedReader in = new BufferedReader(new InputStreamReader(ch.in(), StandardCharsets.UTF_8));
        String line = in.readLine();
        if (line == null || !line.startsWith("listening ")) {
            closeChannelOnly(ch);
            throw new IOException(line == null ? "the rendezvous probe did not start on the master"
                    : line.replaceFirst("^failed ", "") + " (on the master)");
        }
        String[] words = line.split(" ");
        int bound = Integer.parseInt(words[1]);
        String iface = words.length > 2 ? words[2] : "-";
        return new Listener() {
            public int port() {
                return bound;
            }

            public String iface() {
                return iface;
            }

            public void close() {
                closeChannelOnly(ch);
            }
        };
    }

    private static void closeChannelOnly(SshAgentChannel ch) {
        try {
            ch.out().close();
        } catch (IOException e) {
            // already closed
        }
        ch.close();
    }
}
