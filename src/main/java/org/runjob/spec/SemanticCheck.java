package org.runjob.spec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;

import org.runjob.json.Json;
import org.runjob.observe.Sources;

import tools.jackson.databind.JsonNode;

/**
 * Rules JSON Schema cannot say well, checked on the composed document. Each rule reads only values of
 * the right type, so it runs even when the schema found problems elsewhere: every mistake is reported
 * in one go.
 *
 * <p>Rules: unique node names (spares' too); spares only for a backend that does not pick its
 * nodes, each named and held to a node's rules; a GPU index at most once per node; a node without GPUs says
 * {@code workers}; nodes are given as a count only to a backend that picks them, and then without
 * a {@code rendezvous.master}; {@code rendezvous.master} names a node; the backend's own rules
 * ({@link BackendSpec#checkNode}, {@link BackendSpec#checkJob}); the entrypoint is either {@code command} or {@code jar} with {@code main}; shipped files and
 * the jar exist (relative to the file that names them) and land under distinct names;
 * {@code logs.metric} is a regular expression; the rules on what a worker runs in (environment,
 * env, workdir) are {@link WorkerRules}'.
 */
final class SemanticCheck {

    private final LocatedJson doc;
    private final Problems problems;
    private final BackendSpecs backends;
    /** The backend the job names; empty for a name no backend has (the schema reports it). */
    private final Optional<BackendSpec> backend;

    private SemanticCheck(LocatedJson doc, BackendSpecs backends) {
        this.doc = doc;
        this.problems = new Problems(doc);
        this.backends = backends;
        this.backend = backends.of(doc.json());
    }

    static List<Problem> check(LocatedJson doc, BackendSpecs backends) {
        SemanticCheck c = new SemanticCheck(doc, backends);
        c.run();
        return c.problems.list();
    }

    private void problem(String pointer, String message) {
        problems.at(pointer, message);
    }

    private void keyProblem(String pointer, String message) {
        problems.atKey(pointer, message);
    }

    private void run() {
        JsonNode root = doc.json();
        Map<String, Integer> firstLine = new HashMap<>();
        List<String> nodeNames = nodes(root.get("nodes"), "/nodes", firstLine);
        spares(root.get("spares"), firstLine);
        minNodes(root);
        rendezvous(root, nodeNames);
        entrypoint(root.get("entrypoint"));
        Set<String> shipped = files(root.get("files"));
        outputs(root.get("outputs"));
        WorkerRules.variables(problems, root.get("env"), "/env");
        WorkerRules.environment(problems, root.get("environment"), "/environment", shipped);
        for (String list : List.of("nodes", "spares")) {
            JsonNode nodes = root.get(list);
            if (nodes != null && nodes.isArray()) {
                for (int i = 0; i < nodes.size(); i++) {
                    JsonNode n = nodes.get(i);
                    if (n.isObject()) {
                        WorkerRules.environment(problems, n.get("environment"), LocatedJson.child("/" + list, i) + "/environment", shipped);
                    }
                }
            }
        }
        WorkerRules.workdir(problems, root.get("workdir"), "/workdir");
        metric(root.get("logs"));
        sources(root.get("observe"));
    }

    /** observe.sources: each a registered observation source ({@link Sources}). */
    private void sources(JsonNode observe) {
        JsonNode sources = observe == null ? null : observe.get("sources");
        if (sources == null || !sources.isArray()) {
            return;
        }
        List<String> known = Sources.names();
        for (int i = 0; i < sources.size(); i++) {
            JsonNode s = sources.get(i);
            if (s.isString() && !known.contains(s.stringValue())) {
                problem(LocatedJson.child("/observe/sources", i), "unknown observation source '" + s.stringValue() + "': "
                        + (s.stringValue().equals(Sources.GPUS) ? "the GPUs are sampled whenever observe.interval_s is above 0"
                        : known.isEmpty() ? "none is registered" : "registered are " + String.join(", ", known)));
            }
        }
    }

    /** logs.metric is a regular expression Java compiles. */
    private void metric(JsonNode logs) {
        JsonNode metric = logs == null ? null : logs.get("metric");
        if (metric != null && metric.isString()) {
            try {
                Pattern.compile(metric.stringValue());
            } catch (PatternSyntaxException e) {
                problem("/logs/metric", "not a regular expression: " + e.getDescription() + " near index " + e.getIndex());
            }
        }
    }

    /**
     * {@code spares}: node entries a backend that picks its nodes has no use for; each with a name,
     * unique among the nodes and spares, and held to the rules of a node.
     */
    private void spares(JsonNode spares, Map<String, Integer> firstLine) {
        if (spares == null || !spares.isArray() || spares.isEmpty()) {
            return;
        }
        if (backend.isPresent() && backend.get().picksNodes()) {
            keyProblem("/spares", "backend " + backend.get().name() + " gives the run its nodes (a requeued run gets new ones from it):"
                    + " spares are for nodes runjob reaches itself");
            return;
        }
        nodes(spares, "/spares", firstLine);
        // the worker counts the nodes run, when the job alone gives every one of them
        Set<Integer> counts = new TreeSet<>();
        JsonNode nodes = doc.json().get("nodes");
        boolean allKnown = nodes != null && nodes.isArray();
        for (JsonNode n : allKnown ? nodes : Json.array()) {
            Optional<Integer> c = workersAhead(n);
            allKnown &= c.isPresent();
            c.ifPresent(counts::add);
        }
        for (int i = 0; i < spares.size(); i++) {
            JsonNode spare = spares.get(i);
            String p = LocatedJson.child("/spares", i);
            if (spare.isObject() && spare.has("count")) {
                keyProblem(p + "/count", "a spare is one machine you name: give it a name, not a count");
            }
            Optional<Integer> c = workersAhead(spare);
            if (allKnown && c.isPresent() && !counts.contains(c.get())) {
                String label = spare.path("name").isString() ? "spare '" + spare.get("name").stringValue() + "'" : "spare " + (i + 1);
                problem(p, label + " runs " + c.get() + " worker" + (c.get() == 1 ? "" : "s") + " and no node runs as many ("
                        + counts.stream().map(String::valueOf).collect(Collectors.joining(", ")) + "): it could never stand in for one");
            }
        }
    }

    /** How many workers an entry runs, when the job file alone says: {@code workers}, listed GPUs or a GPU count. */
    private static Optional<Integer> workersAhead(JsonNode n) {
        if (!n.isObject()) {
            return Optional.empty();
        }
        JsonNode w = n.get("workers");
        JsonNode g = n.get("gpus");
        if (w != null && w.isIntegralNumber()) {
            return Optional.of(w.intValue());
        }
        if (g != null && g.isArray() && !g.isEmpty()) {
            return Optional.of(g.size());
        }
        if (g != null && g.isObject() && g.path("count").isIntegralNumber()) {
            return Optional.of(g.get("count").intValue());
        }
        return Optional.empty();
    }

    /** {@code failure.min_nodes} is at most the job's node count (entries given as a count count as that many). */
    private void minNodes(JsonNode root) {
        JsonNode failure = root.get("failure");
        JsonNode min = failure == null ? null : failure.get("min_nodes");
        JsonNode nodes = root.get("nodes");
        if (min == null || !min.isIntegralNumber() || nodes == null || !nodes.isArray()) {
            return;
        }
        int count = 0;
        for (JsonNode n : nodes) {
            count += n.isObject() && n.has("count") && n.get("count").isIntegralNumber() ? n.get("count").intValue() : 1;
        }
        if (min.intValue() > count) {
            problem("/failure/min_nodes", "the job has " + count + " node" + (count == 1 ? "" : "s") + ": it cannot run on at least "
                    + min.intValue());
        }
    }

    private List<String> nodes(JsonNode nodes, String list, Map<String, Integer> firstLine) {
        List<String> names = new ArrayList<>();
        if (nodes == null || !nodes.isArray()) {
            return names;
        }
        boolean spares = list.equals("/spares");
        for (int i = 0; i < nodes.size(); i++) {
            JsonNode node = nodes.get(i);
            String p = LocatedJson.child(list, i);
            if (!node.isObject()) {
                continue;
            }
            JsonNode name = node.get("name");
            String label = (spares ? "spare " : "node ") + (i + 1);
            if (name != null && name.isString()) {
                label = (spares ? "spare '" : "node '") + name.stringValue() + "'";
                names.add(name.stringValue());
                Integer earlier = firstLine.putIfAbsent(name.stringValue(), doc.valueAt(p + "/name").line());
                if (earlier != null) {
                    problem(p + "/name", "duplicate node name '" + name.stringValue() + "' (first at line " + earlier + ")");
                }
            }
            if (!spares) {
                counted(node, p);
            }
            String entryLabel = label;
            int entries = nodes.size();
            backend.ifPresent(b -> b.checkNode(node, p, entryLabel, entries, problems));
            JsonNode gpus = node.get("gpus");
            if (gpus != null && gpus.isArray()) {
                Map<Integer, Integer> seen = new HashMap<>();
                for (int g = 0; g < gpus.size(); g++) {
                    if (gpus.get(g).isIntegralNumber() && seen.putIfAbsent(gpus.get(g).intValue(), g) != null) {
                        problem(LocatedJson.child(p + "/gpus", g), "GPU " + gpus.get(g).intValue()
                                + " is listed twice on " + label);
                    }
                }
            }
            boolean noGpus = gpus == null || (gpus.isArray() && gpus.isEmpty());
            if (noGpus && !node.has("workers")) {
                problem(gpus == null ? p : p + "/gpus", label
                        + " uses no GPUs, so say how many processes to start there with workers: N");
            }
            WorkerRules.variables(problems, node.get("env"), p + "/env");
            WorkerRules.workdir(problems, node.get("workdir"), p + "/workdir");
        }
        return names;
    }

    /** A node entry given as a {@code count}: only a backend that picks nodes takes one. */
    private void counted(JsonNode node, String p) {
        if (!node.has("count") || backend.isEmpty() || backend.get().picksNodes()) {
            return;
        }
        List<String> picking = backends.pickingNodes();
        keyProblem(p + "/count", "nodes given as a count are picked by the backend when the run starts: set backend: "
                + String.join(" or backend: ", picking) + ", or name each node");
    }

    private void rendezvous(JsonNode root, List<String> nodeNames) {
        JsonNode rdzv = root.get("rendezvous");
        JsonNode master = rdzv == null ? null : rdzv.get("master");
        JsonNode listed = root.get("nodes");
        if (master != null && listed != null && listed.isArray() && listed.size() == 1 && listed.get(0).has("count")) {
            keyProblem("/rendezvous/master", "nodes given as a count have no names: the first node the backend picks is the master");
            return;
        }
        JsonNode nodes = root.get("nodes");
        JsonNode masterNode = null;
        if (master != null && master.isString()) {
            int index = nodeNames.indexOf(master.stringValue());
            if (index < 0 && !nodeNames.isEmpty()) {
                String hint = Suggestions.closest(master.stringValue(), nodeNames)
                        .map(s -> "; did you mean '" + s + "'?")
                        .orElse("; nodes are: " + String.join(", ", new LinkedHashSet<>(nodeNames)));
                problem("/rendezvous/master", "no node is named '" + master.stringValue() + "'" + hint);
            } else if (index >= 0) {
                masterNode = findNode(nodes, master.stringValue());
            }
        } else if (nodes != null && nodes.isArray() && !nodes.isEmpty()) {
            masterNode = nodes.get(0);
        }
        Optional<JsonNode> found = Optional.ofNullable(masterNode).filter(JsonNode::isObject);
        backend.ifPresent(b -> b.checkJob(root, found, problems));
    }

    private static JsonNode findNode(JsonNode nodes, String name) {
        for (JsonNode n : nodes) {
            if (n.isObject() && n.has("name") && n.get("name").isString() && name.equals(n.get("name").stringValue())) {
                return n;
            }
        }
        return null;
    }

    private void entrypoint(JsonNode ep) {
        if (ep == null || !ep.isObject()) {
            return;
        }
        boolean command = ep.has("command");
        boolean jar = ep.has("jar");
        boolean main = ep.has("main");
        if (command && jar) {
            keyProblem("/entrypoint/jar", "give either command or jar (with main), not both");
        } else if (!command && !jar) {
            problem("/entrypoint", "missing command (an argv list such as [python3, train.py]) or jar with main");
        }
        if (jar && !main) {
            problem("/entrypoint", "jar needs main: the class to run");
        }
        if (main && !jar) {
            keyProblem("/entrypoint/main", "main goes with jar: name the jar to run it from");
        }
        for (String key : new String[] {"args", "jvm_args"}) {
            if (ep.has(key) && !jar) {
                keyProblem("/entrypoint/" + key, key + " goes with jar; with command, put arguments in the command list");
            }
        }
        JsonNode cmd = ep.get("command");
        if (cmd != null && cmd.isArray() && !cmd.isEmpty() && cmd.get(0).isString() && cmd.get(0).stringValue().isBlank()) {
            problem("/entrypoint/command/0", "the program name is empty");
        }
        if (jar && ep.get("jar").isString()) {
            mustExist("/entrypoint/jar", ep.get("jar").stringValue());
        }
    }

    /** @return the names the shipped files land under in the run's directory */
    private Set<String> files(JsonNode files) {
        Map<String, Integer> landed = new HashMap<>();
        if (files == null || !files.isArray()) {
            return landed.keySet();
        }
        for (int i = 0; i < files.size(); i++) {
            JsonNode f = files.get(i);
            String p = LocatedJson.child("/files", i);
            if (!f.isString() || f.stringValue().isEmpty()) {
                continue;
            }
            Path source = mustExist(p, f.stringValue());
            if (source == null) {
                continue;
            }
            String dest = Destinations.of(source);
            Integer earlier = landed.putIfAbsent(dest, i);
            if (earlier != null) {
                problem(p, "lands in the workdir as '" + dest + "', like files[" + earlier + "]");
            }
        }
        return landed.keySet();
    }

    /** Each of {@code outputs} is a path inside the run's directory: relative, never {@code ..}. */
    private void outputs(JsonNode outputs) {
        if (outputs == null || !outputs.isArray()) {
            return;
        }
        for (int i = 0; i < outputs.size(); i++) {
            String o = outputs.get(i).isString() ? outputs.get(i).stringValue() : "";
            if (o.startsWith("/") || o.startsWith("~") || Path.of(o).normalize().startsWith("..") || Path.of(o).normalize().toString().isEmpty()) {
                problem(LocatedJson.child("/outputs", i), "'" + o + "' is not inside the run's directory: outputs are relative paths"
                        + " there, such as checkpoints/ or results.json");
            }
        }
    }

    /** The resolved path when it exists, else a problem and null. */
    private Path mustExist(String pointer, String value) {
        Path resolved = Destinations.resolve(doc.valueAt(pointer), value);
        if (!Files.exists(resolved)) {
            problem(pointer, "no such file: " + resolved);
            return null;
        }
        return resolved;
    }
}
