package org.runjob.spec;

import static org.runjob.spec.JsonFields.integer;
import static org.runjob.spec.JsonFields.strings;
import static org.runjob.spec.JsonFields.text;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import org.runjob.json.Json;
import org.runjob.runtime.WorkerRuntimes;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Turns a document that passed the schema and the semantic checks into a {@link JobSpec}, filling
 * in defaults. It assumes validity: bad input must have been rejected before.
 */
final class SpecBinder {

    private final LocatedJson doc;
    private final BackendSpec backend;

    private SpecBinder(LocatedJson doc, BackendSpec backend) {
        this.doc = doc;
        this.backend = backend;
    }

    static JobSpec bind(LocatedJson doc, BackendSpec backend, Path source) {
        return new SpecBinder(doc, backend).job(source);
    }

    private JobSpec job(Path source) {
        JsonNode root = doc.json();
        String name = root.get("name").stringValue();
        List<NodeSpec> nodes = new ArrayList<>();
        boolean counted = false;
        for (JsonNode n : root.get("nodes")) {
            if (n.has("count")) {
                // the backend picks these: each a copy of the entry, named when the run starts
                counted = true;
                for (int i = 0; i < n.get("count").intValue(); i++) {
                    nodes.add(node(n, JobSpec.countedNodeName(i)));
                }
            } else {
                nodes.add(node(n, n.get("name").stringValue()));
            }
        }
        List<NodeSpec> spares = new ArrayList<>();
        JsonNode listed = root.get("spares");
        if (listed != null) {
            listed.forEach(n -> spares.add(node(n, n.get("name").stringValue())));
        }
        JsonNode r = object(root, "rendezvous");
        JobSpec.RendezvousSpec rendezvous = new JobSpec.RendezvousSpec(
                text(r, "master").orElse(nodes.get(0).name()),
                text(r, "addr"),
                port(r.get("port")));
        List<JobSpec.ShippedFile> files = new ArrayList<>();
        JsonNode f = root.get("files");
        if (f != null) {
            for (int i = 0; i < f.size(); i++) {
                files.add(shipped(LocatedJson.child("/files", i), f.get(i).stringValue()));
            }
        }
        JsonNode ep = root.get("entrypoint");
        boolean localRankArg = ep.has("local_rank_arg") && ep.get("local_rank_arg").booleanValue();
        EntrypointSpec entrypoint;
        if (ep.has("command")) {
            entrypoint = new EntrypointSpec.Command(strings(ep.get("command")), localRankArg);
        } else {
            JobSpec.ShippedFile jar = shipped("/entrypoint/jar", ep.get("jar").stringValue());
            files.add(jar);
            entrypoint = new EntrypointSpec.Jar(jar.destination(), ep.get("main").stringValue(),
                    strings(ep.get("args")), strings(ep.get("jvm_args")), localRankArg);
        }
        JsonNode ssh = object(root, "ssh");
        JobSpec.SshSpec sshSpec = new JobSpec.SshSpec(
                text(ssh, "identity"),
                text(ssh, "known_hosts").orElse(JobSpec.SshSpec.DEFAULT_KNOWN_HOSTS),
                JobSpec.HostKeyPolicy.of(text(ssh, "host_key_policy").orElse("strict")),
                integer(ssh, "connect_timeout_s").orElse(JobSpec.SshSpec.DEFAULT_CONNECT_TIMEOUT_S),
                text(ssh, "password_env"));
        JsonNode failure = object(root, "failure");
        JobSpec.FailureSpec failureSpec = new JobSpec.FailureSpec(
                failure.has("grace_period_s") ? failure.get("grace_period_s").doubleValue() : JobSpec.FailureSpec.DEFAULT_GRACE_S,
                integer(failure, "max_restarts").orElse(0),
                failure.has("hang_timeout_s") ? failure.get("hang_timeout_s").doubleValue() : 0,
                integer(failure, "heartbeat_timeout_s").orElse(JobSpec.FailureSpec.DEFAULT_HEARTBEAT_S),
                integer(failure, "crash_loop_s").orElse(JobSpec.FailureSpec.DEFAULT_CRASH_LOOP_S),
                integers(failure.get("retry_exit_codes")),
                integer(failure, "wait_for_node_s").orElse(0),
                integer(failure, "min_nodes").orElse(0),
                strings(failure.get("health_check")),
                integer(failure, "quarantine_s").orElse(JobSpec.FailureSpec.DEFAULT_QUARANTINE_S));
        return new JobSpec(name, nodes, rendezvous, entrypoint,
                text(root, "workdir").orElse("~/.runjob/" + name),
                root.has("runs_share_workdir") && root.get("runs_share_workdir").booleanValue(),
                files, env(root.get("env")), sshSpec, failureSpec,
                text(object(root, "logs"), "dir").orElse("runs"), text(object(root, "logs"), "metric").map(Pattern::compile),
                new JobSpec.BackendUse(backend.name(), backend.settings(backend.block().map(b -> object(root, b)).orElse(Json.object())), counted),
                text(root, "gpu_leases").orElse("warn").equals("strict"),
                Relay.valueOf(text(root, "relay").orElse("auto").toUpperCase(Locale.ROOT)), source, strings(root.get("outputs")),
                root.has("outputs_max_gib") ? Math.round(root.get("outputs_max_gib").asDouble() * (1L << 30)) : JobSpec.DEFAULT_OUTPUTS_MAX_BYTES,
                spares,
                observe(object(root, "observe")),
                JobSpec.GpuBind.valueOf(text(root, "gpu_bind").orElse("node").toUpperCase(Locale.ROOT)));
    }

    private NodeSpec node(JsonNode n, String name) {
        JsonNode gpus = n.get("gpus");
        NodeSpec.GpuRequest request;
        if (gpus == null) {
            request = new NodeSpec.GpuRequest.Listed(List.of());
        } else if (gpus.isString()) {
            request = new NodeSpec.GpuRequest.All();
        } else if (gpus.isObject()) {
            request = new NodeSpec.GpuRequest.Count(gpus.get("count").intValue(),
                    gpus.has("max_used_mib") ? gpus.get("max_used_mib").intValue() : NodeSpec.GpuRequest.Count.DEFAULT_MAX_USED_MIB);
        } else {
            List<Integer> indices = new ArrayList<>();
            gpus.forEach(g -> indices.add(g.intValue()));
            request = new NodeSpec.GpuRequest.Listed(indices);
        }
        Optional<Integer> workers = integer(n, "workers");
        return new NodeSpec(
                name,
                backend.address(n, name),
                request,
                workers.map(OptionalInt::of).orElse(OptionalInt.empty()),
                text(n, "workdir"),
                env(n.get("env")),
                environment(merged(doc.json().get("environment"), n.get("environment"))));
    }

    /** The job's {@code environment:} with the node's keys over it; the interpreter keys count as one. */
    private static JsonNode merged(JsonNode job, JsonNode node) {
        ObjectNode out = Json.object();
        if (job != null) {
            job.properties().forEach(e -> out.set(e.getKey(), e.getValue()));
        }
        if (node != null) {
            if (INTERPRETER_KEYS.stream().anyMatch(node::has)) {
                INTERPRETER_KEYS.forEach(out::remove);
            }
            node.properties().forEach(e -> out.set(e.getKey(), e.getValue()));
        }
        return out;
    }

    private static final List<String> INTERPRETER_KEYS = Arrays.stream(EnvironmentSpec.Kind.values())
            .map(EnvironmentSpec.Kind::key).toList();

    private static EnvironmentSpec environment(JsonNode e) {
        if (e.isEmpty()) {
            return EnvironmentSpec.NONE;
        }
        Optional<EnvironmentSpec.Interpreter> interpreter = Optional.empty();
        for (EnvironmentSpec.Kind k : EnvironmentSpec.Kind.values()) {
            if (e.has(k.key())) {
                interpreter = Optional.of(new EnvironmentSpec.Interpreter(k, e.get(k.key()).stringValue()));
            }
        }
        JsonNode c = e.get("container");
        Optional<EnvironmentSpec.ContainerSpec> container = c == null ? Optional.empty()
                : Optional.of(new EnvironmentSpec.ContainerSpec(c.get("image").stringValue(), text(c, "runtime").orElse(WorkerRuntimes.DEFAULT),
                strings(c.get("mounts")), strings(c.get("options"))));
        return new EnvironmentSpec(interpreter, strings(e.get("modules")), strings(e.get("source")), strings(e.get("setup")),
                integer(e, "setup_timeout_s").orElse(EnvironmentSpec.DEFAULT_SETUP_TIMEOUT_S), container,
                !text(e, "on_skew").orElse("error").equals("warn"));
    }

    private JobSpec.ShippedFile shipped(String pointer, String value) {
        Path source = Destinations.resolve(doc.valueAt(pointer), value);
        return new JobSpec.ShippedFile(source, Destinations.of(source));
    }

    private static JobSpec.MasterPort port(JsonNode p) {
        return p == null || p.isString() ? new JobSpec.MasterPort.Auto() : new JobSpec.MasterPort.Fixed(p.intValue());
    }

    private static JsonNode object(JsonNode parent, String key) {
        JsonNode v = parent.get(key);
        return v == null ? Json.object() : v;
    }

    /** The integers of a list; none for an absent list. */
    private static Set<Integer> integers(JsonNode array) {
        Set<Integer> out = new TreeSet<>();
        if (array != null) {
            array.forEach(v -> out.add(v.intValue()));
        }
        return out;
    }

    private static Map<String, String> env(JsonNode env) {
        Map<String, String> out = new LinkedHashMap<>();
        if (env != null) {
            env.properties().forEach(e -> out.put(e.getKey(), text(e.getValue())));
        }
        return out;
    }

    private static JobSpec.ObserveSpec observe(JsonNode o) {
        return new JobSpec.ObserveSpec(
                o.has("interval_s") ? o.get("interval_s").doubleValue() : JobSpec.ObserveSpec.DEFAULT.intervalSeconds(),
                integer(o, "straggler_pct").orElse(JobSpec.ObserveSpec.DEFAULT.stragglerPct()),
                o.has("straggler_window_s") ? o.get("straggler_window_s").doubleValue() : JobSpec.ObserveSpec.DEFAULT.stragglerWindowSeconds(),
                text(o, "prometheus"), o.has("max_steps") ? Optional.of(o.get("max_steps").longValue()) : Optional.empty(),
                strings(o.get("sources")));
    }
}
