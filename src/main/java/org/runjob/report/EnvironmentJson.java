package org.runjob.report;

import java.util.List;

import org.runjob.json.Json;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.preflight.PreflightReport;
import org.runjob.protocol.EnvironmentReply;
import org.runjob.protocol.GpuInventory;
import org.runjob.spec.EnvironmentSpec;

import tools.jackson.databind.node.ObjectNode;

/**
 * A run's {@code environment.json}: per node, the environment as the job file gives it and what
 * preflight found it to be (the program's path, Python, torch, CUDA and NCCL versions, the image
 * and its digest, the setup's state, the GPU driver's version), and the names (never the values) of the variables its
 * activation set and removed. {@link #fingerprint} is the part {@code summary.json} keeps.
 */
public final class EnvironmentJson {

    /** The facts that identify what ran, in this order. */
    private static final List<String> FINGERPRINT = List.of(EnvironmentReply.PROGRAM_PATH, EnvironmentReply.PYTHON, EnvironmentReply.TORCH,
            EnvironmentReply.CUDA, EnvironmentReply.NCCL, EnvironmentReply.IMAGE, EnvironmentReply.IMAGE_DIGEST, EnvironmentReply.SETUP,
            EnvironmentReply.SETUP_SECONDS);

    private EnvironmentJson() {
    }

    public static ObjectNode of(LaunchPlan plan, PreflightReport report) {
        ObjectNode root = Json.object();
        ObjectNode nodes = root.putObject("nodes");
        for (NodePlan n : plan.nodes()) {
            EnvironmentReply r = report.environments().get(n.name());
            if (r == null) {
                continue;
            }
            ObjectNode node = nodes.putObject(n.name());
            node.set("environment", block(n.environment()));
            node.set("found", facts(r, report, n.name()));
            var set = node.putArray("variables_set");
            r.set().keySet().stream().sorted().forEach(set::add);
            var unset = node.putArray("variables_unset");
            r.unset().stream().sorted().forEach(unset::add);
        }
        return root;
    }

    /** Per node, the facts that identify what ran. */
    public static ObjectNode fingerprint(PreflightReport report) {
        ObjectNode root = Json.object();
        report.environments().forEach((node, r) -> root.set(node, facts(r, report, node)));
        return root;
    }

    private static ObjectNode facts(EnvironmentReply r, PreflightReport report, String node) {
        ObjectNode o = Json.object();
        for (String key : FINGERPRINT) {
            r.get(key).ifPresent(v -> o.put(key, v));
        }
        GpuInventory gpus = report.gpus().get(node);
        if (gpus != null && gpus.driverVersion() > 0) {
            o.put("driver_version", gpus.driverVersion());
        }
        return o;
    }

    /** The block as written (merged for the node). */
    public static ObjectNode block(EnvironmentSpec e) {
        ObjectNode o = Json.object();
        e.interpreter().ifPresent(i -> o.put(i.kind().key(), i.value()));
        list(o, "modules", e.modules());
        list(o, "source", e.sources());
        list(o, "setup", e.setup());
        if (!e.setup().isEmpty()) {
            o.put("setup_timeout_s", e.setupTimeoutSeconds());
        }
        e.container().ifPresent(c -> {
            ObjectNode co = o.putObject("container").put("image", c.image()).put("runtime", c.runtime());
            list(co, "mounts", c.mounts());
            list(co, "options", c.options());
        });
        if (e.present()) {
            o.put("on_skew", e.skewIsError() ? "error" : "warn");
        }
        return o;
    }

    private static void list(ObjectNode o, String key, List<String> values) {
        if (!values.isEmpty()) {
            var a = o.putArray(key);
            values.forEach(a::add);
        }
    }
}
