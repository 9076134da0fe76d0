package org.runjob.runs;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import org.runjob.backends.Backends;
import org.runjob.distribute.FileList;
import org.runjob.json.Json;
import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.node.FanOut;
import org.runjob.node.NodeAccess;
import org.runjob.node.NodeProcess;
import org.runjob.plan.RunId;
import org.runjob.protocol.HostRecords;
import org.runjob.protocol.HostedRun;
import org.runjob.protocol.NodeJvm;
import org.runjob.protocol.SecureLink;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Launch;
import org.runjob.run.QuarantineFile;
import org.runjob.run.RunIndex;
import org.runjob.session.NodeCommand;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.SpecLoader;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.StringNode;

/**
 * {@code runjob submit FILE}: hands a run to its cluster. Nothing of the run stays on this machine.
 *
 * <ol>
 *   <li>Each node gets a node host ({@code agent.NodeHost}) over SSH, keyed by a new run secret
 *       that travels only on those SSH channels.</li>
 *   <li>The master node gets the job, its files and the hosts' ports, and starts the run's
 *       coordinator there ({@link HostedStart}); its preflight table streams here.</li>
 *   <li>Once the workers run, the run goes into this user's run index ({@link RunIndex}), so
 *       {@code runs}, {@code status}, {@code logs} and {@code stop} find it from any directory and
 *       reach it over SSH; this command prints the run id and exits 0. A failed preflight exits 3
 *       and leaves no run behind.</li>
 * </ol>
 */
public final class Submit {

    private static final JsonMapper JSON = Json.MAPPER;

    private Submit() {
    }

    /**
     * {@code runjob submit --dry-run}: for a backend with a queue, the command and batch script
     * {@code submit} would hand it ({@link QueuedRun#dryRun}; a sweep's job array, {@link QueuedRun#dryRunSweep});
     * empty for a backend whose runs go to their nodes directly, whose plan the caller shows.
     */
    public static Optional<Integer> dryRun(Io io, String file, List<String> sets, List<String> args, Optional<Integer> maxParallel)
            throws IOException {
        SpecLoader.Loaded loaded = Jobs.load(io, file, sets, args);
        if (loaded == null) {
            return Optional.of(ExitCode.INVALID);
        }
        Backend backend = Backends.of(loaded.spec());
        if (!backend.queue().isPresent()) {
            return Optional.empty();
        }
        if (!throttles(io, file, loaded, maxParallel)) {
            return Optional.of(ExitCode.INVALID);
        }
        return Optional.of(loaded.sweep().isPresent() ? QueuedSweep.dryRunSweep(io, file, sets, args, loaded, backend, maxParallel)
                : QueuedRun.dryRun(io, loaded, backend, args));
    }

    /** {@code runjob submit --resume RUN}: a queued run that ended, queued again as its next attempt ({@link QueuedResume#resume}). */
    public static int resume(Io io, RunRecords.Run run) throws IOException {
        return QueuedResume.resume(io, run);
    }

    /**
     * Submits the run of {@code file}; its coordinator runs on the master node, or on {@code coordinator}:
     * a node of the job, or one of its spares, which then runs no worker and stands in for no node.
     */
    public static int submit(Io io, String file, List<String> sets, List<String> args, Optional<String> coordinator,
                             Optional<Integer> maxParallel) throws IOException {
        SpecLoader.Loaded loaded = Jobs.load(io, file, sets, args);
        if (loaded == null) {
            return ExitCode.INVALID;
        }
        JobSpec spec = loaded.spec();
        Backend backend = Backends.of(spec);
        if (coordinator.isPresent() && backend.queue().isPresent()) {
            io.err().println("runjob: --coordinator is for runs over SSH; a " + spec.backend() + " run's coordinator runs in the job's own batch step");
            return ExitCode.INVALID;
        }
        if (!throttles(io, file, loaded, maxParallel)) {
            return ExitCode.INVALID;
        }
        if (backend.queue().isPresent()) {
            return loaded.sweep().isPresent() ? QueuedSweep.submitSweep(io, file, sets, args, loaded, backend, maxParallel)
                    : QueuedRun.submit(io, loaded, backend, args);
        }
        if (loaded.sweep().isPresent()) {
            io.err().println("runjob: " + file + " has a sweep of " + loaded.sweep().get().size() + " runs; over SSH submit takes one run:"
                    + " runjob " + file + " --detach starts the sweep's runs and leaves them");
            return ExitCode.INVALID;
        }
        Optional<NodeSpec> local = spec.nodes().stream().filter(NodeSpec::local).findFirst();
        if (local.isPresent()) {
            io.err().println("runjob: submit hands the run to its nodes, and node " + local.get().name()
                    + " is this machine (local: true); run it in the foreground or with --detach");
            return ExitCode.INVALID;
        }
        List<FileList.Entry> files = FileList.of(spec.files());
        String runId = RunId.of(io.clock().instant(), io.random().getAsInt());
        byte[] secret = SecureLink.newSecret();
        Optional<NodeSpec> coordinatorSpare = coordinator.flatMap(c -> spec.spares().stream().filter(s -> s.name().equals(c)).findFirst());
        NodeSpec master = coordinatorSpare.isPresent() ? coordinatorSpare.get() : spec.masterNode();
        if (coordinator.isPresent() && coordinatorSpare.isEmpty()) {
            Optional<NodeSpec> node = spec.node(coordinator.get());
            if (node.isEmpty()) {
                List<String> names = new ArrayList<>();
                spec.nodes().forEach(n -> names.add(n.name()));
                spec.spares().forEach(n -> names.add(n.name() + " (spare)"));
                io.err().println("runjob: --coordinator " + coordinator.get() + ": the job has no node or spare of that name; it has "
                        + String.join(", ", names));
                return ExitCode.INVALID;
            }
            master = node.get();
        }
        // the job the coordinator runs: a spare that coordinates is no longer a spare
        JobSpec run = coordinatorSpare.isPresent() ? spec.withoutSpares(Set.of(master.name())) : spec;
        // the spares too: the coordinator reaches a spare through its node host when one stands in
        List<NodeSpec> hostsOn = run.withSparesAsNodes().nodes();
        io.err().println("runjob: submitting " + spec.name() + " run " + runId + ": node hosts on " + hostsOn.size()
                + " node" + (hostsOn.size() == 1 ? "" : "s") + ", the coordinator on " + master.name()
                + (coordinatorSpare.isPresent() ? " (a spare: it runs no worker)" : ""));
        try (Cluster cluster = Launch.open(Backends.of(spec), spec, io); FanOut fan = new FanOut(hostsOn.size())) {
            Map<NodeSpec, Object> started = fan.onEach(hostsOn, n -> startHost(io, cluster.node(n), n, runId, secret));
            Map<String, HostedRun.Endpoint> hosts = new LinkedHashMap<>();
            boolean failed = false;
            for (var e : started.entrySet()) {
                if (e.getValue() instanceof HostedRun.Endpoint ep) {
                    hosts.put(e.getKey().name(), ep);
                } else {
                    io.err().println("runjob: node " + e.getKey().name() + ": cannot start the run's node host: " + e.getValue());
                    failed = true;
                }
            }
            if (failed) {
                io.err().println("runjob: nothing was submitted (the node hosts that started end on their own within "
                        + "two minutes)");
                return ExitCode.PREFLIGHT_FAILED;
            }
            HostedRun hosted = new HostedRun(secret, hosts);
            return coordinate(io, cluster.node(master), master, spec, loaded, files, hosted, runId, args, coordinatorSpare.isPresent());
        }
    }

    /** False, after saying so, for {@code --max-parallel} given to a job without a sweep. */
    private static boolean throttles(Io io, String file, SpecLoader.Loaded loaded, Optional<Integer> maxParallel) {
        if (maxParallel.isPresent() && loaded.sweep().isEmpty()) {
            io.err().println("runjob: --max-parallel is for a job with a sweep, and " + file + " has none");
            return false;
        }
        return true;
    }

    /** The node's host endpoint, or why it could not start (a String). */
    private static Object startHost(Io io, NodeAccess access, NodeSpec node, String runId, byte[] secret) {
        try {
            access.reach();
            NodeProcess p = NodeCommand.agentSide(node.name(), access, List.of(NodeJvm.HOST_START, runId), OutputStream.nullOutputStream(), io.env());
            try (p) {
                p.stdin().write((SecureLink.hex(SecureLink.nodeKey(secret, node.name())) + "\n").getBytes(StandardCharsets.US_ASCII));
                p.stdin().flush();
                String line = new BufferedReader(new InputStreamReader(p.stdout(), StandardCharsets.US_ASCII)).readLine();
                if (line == null || !line.startsWith(HostRecords.LISTENING)) {
                    return "it said " + (line == null ? "nothing" : line);
                }
                int port = Integer.parseInt(line.substring(HostRecords.LISTENING.length()).trim());
                String address = access.address().or(() -> node.address().reachableAs()).orElse(node.name());
                return new HostedRun.Endpoint(address, port);
            }
        } catch (Exception e) {
            return String.valueOf(e.getMessage());
        }
    }

    private static int coordinate(Io io, NodeAccess access, NodeSpec master, JobSpec spec, SpecLoader.Loaded loaded,
                                  List<FileList.Entry> files, HostedRun hosted, String runId, List<String> args,
                                  boolean spareCoordinates) throws IOException {
        ByteArrayOutputStream remoteErr = new ByteArrayOutputStream();
        NodeProcess p = NodeCommand.runjob(master.name(), access, List.of("coordinate", spec.name(), runId), remoteErr, io.env());
        RunIndex.Entry entry = RunIndex.Entry.submitted(runId, spec.name(), io.clock().instant(), master.name(),
                "~/.runjob/submitted/" + spec.name() + "/" + runId, reachJob(loaded, master));
        Thread watch = Jobs.onInterrupt(io, p::close, "submit-interrupt");
        try (p) {
            // the coordinator's node checks its machine against its own quarantine and this machine's, which it takes in
            boolean quarantines = spec.failure().quarantineSeconds() > 0;
            Submission.send(p.stdin(), hosted.toLine(), submittedJob(loaded, spareCoordinates ? master.name() : null), files, args,
                    quarantines ? master.address().machine().orElse("") : "",
                    quarantines ? QuarantineFile.active(io.env(), io.clock().instant()) : List.of());
            p.stdin().close();
            BufferedReader lines = new BufferedReader(new InputStreamReader(p.stdout(), StandardCharsets.UTF_8));
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.startsWith(HostedStart.SUBMITTED)) {
                    String[] w = line.substring(HostedStart.SUBMITTED.length()).split(" ", 2);
                    RunIndex.add(io, new RunIndex.Entry(runId, spec.name(), entry.started(), entry.node(), w[1], entry.reach()));
                    io.err().println("runjob: run " + runId + " is submitted: its coordinator runs on " + master.name() + " (pid " + w[0]
                            + "), its folder is " + master.name() + ":" + w[1] + "; this machine may now sleep or go");
                    if (loaded.document().json().path("logs").has("dir")) {
                        io.err().println("runjob: note: logs.dir (" + spec.logsDir() + ") does not hold a submitted run: its folder is on "
                                + master.name() + "; runjob runs, status, logs and pull reach it from any directory, with or without --logs-dir");
                    }
                    Jobs.handedOver(io, runId, "");
                    return ExitCode.OK;
                }
                if (line.startsWith(HostedStart.EXITED)) {
                    return Integer.parseInt(line.substring(HostedStart.EXITED.length()).trim());
                }
                io.err().println(line);
            }
        } catch (IOException e) {
            if (io.interrupts().count() == 0) {
                throw e;
            }
        } finally {
            watch.interrupt();
        }
        if (io.interrupts().count() > 0) {
            // the master node goes on with the submission: the run may start, and must be reachable
            RunIndex.add(io, entry);
            io.err().println("runjob: no longer waiting; run " + runId + " goes on on " + master.name()
                    + " if its preflight passes (runjob status " + runId + " shows it, runjob stop " + runId + " stops it)");
            return ExitCode.INTERRUPTED;
        }
        io.err().println("runjob: the master node " + master.name() + " ended the submission without a word"
                + (remoteErr.size() > 0 ? ": " + remoteErr.toString(StandardCharsets.UTF_8).trim() : ""));
        return ExitCode.PREFLIGHT_FAILED;
    }

    /**
     * The job as the master node runs it: the composed document, its {@code files} under
     * {@value Submission#FILES}/ beside it, and every {@code ${} kept literal (the document is
     * interpolated here already, with this machine's environment).
     */
    private static byte[] submittedJob(SpecLoader.Loaded loaded, String coordinatingSpare) {
        ObjectNode doc = handedJob(loaded, f -> Submission.FILES + "/" + f.destination());
        if (coordinatingSpare != null && doc.get("spares") instanceof ArrayNode spares) {
            for (int i = spares.size() - 1; i >= 0; i--) {
                if (spares.get(i).path("name").asString("").equals(coordinatingSpare)) {
                    spares.remove(i);
                }
            }
            if (spares.isEmpty()) {
                doc.remove("spares");
            }
        }
        return JSON.writeValueAsBytes(doc);
    }

    /**
     * The job as a runjob elsewhere runs it: the composed document with every {@code ${} kept
     * literal (it is interpolated here already, with this machine's environment), each of its
     * {@code files} named by {@code file}, and no {@code logs} (that runjob is given its logs dir).
     */
    static ObjectNode handedJob(SpecLoader.Loaded loaded, Function<JobSpec.ShippedFile, String> file) {
        ObjectNode doc = (ObjectNode) escaped(loaded.document().json().deepCopy());
        if (doc.has("files")) {
            ArrayNode list = doc.putArray("files");
            loaded.spec().files().forEach(f -> list.add(file.apply(f)));
        }
        doc.remove("logs");
        return doc;
    }

    private static JsonNode escaped(JsonNode n) {
        if (n.isString()) {
            return StringNode.valueOf(n.asString().replace("${", "$${"));
        }
        if (n instanceof ObjectNode o) {
            List<String> names = new ArrayList<>(o.propertyNames());
            names.forEach(k -> o.set(k, escaped(o.get(k))));
        } else if (n instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                a.set(i, escaped(a.get(i)));
            }
        }
        return n;
    }

    /**
     * What reaches the master node again (status, logs, stop): the job's name, that node and the
     * job's ssh settings (relative paths in them made absolute: they were relative to the current directory), with no env and no files.
     */
    private static ObjectNode reachJob(SpecLoader.Loaded loaded, NodeSpec master) {
        JsonNode doc = loaded.document().json();
        ObjectNode job = JSON.createObjectNode().put("name", loaded.spec().name());
        List<JsonNode> entries = new ArrayList<>();
        doc.path("nodes").forEach(entries::add);
        doc.path("spares").forEach(entries::add);
        for (JsonNode n : entries) {
            if (n.path("name").asString("").equals(master.name()) && !job.has("nodes")) {
                ObjectNode node = ((ObjectNode) n.deepCopy());
                node.remove("gpus");
                node.remove("env");
                node.remove("workdir");
                job.putArray("nodes").add(node);
            }
        }
        job.putObject("entrypoint").putArray("command").add("true");
        if (doc.has("ssh")) {
            ObjectNode ssh = (ObjectNode) doc.get("ssh").deepCopy();
            Path base = Path.of("").toAbsolutePath();
            loaded.spec().ssh().identity().ifPresent(i -> ssh.put("identity", absolute(base, i)));
            ssh.put("known_hosts", absolute(base, loaded.spec().ssh().knownHosts()));
            job.set("ssh", ssh);
        }
        return job;
    }

    private static String absolute(Path base, String path) {
        return path.startsWith("/") || path.startsWith("~") ? path : base.resolve(path).normalize().toString();
    }
}
