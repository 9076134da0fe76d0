package org.runjob.slurm;

import static org.runjob.spec.JsonFields.integer;
import static org.runjob.spec.JsonFields.strings;
import static org.runjob.spec.JsonFields.text;

import java.util.Locale;
import java.util.Optional;

import org.runjob.node.BatchQueue;
import org.runjob.spec.BackendSettings;
import org.runjob.spec.BackendSpec;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.Problems;

import tools.jackson.databind.JsonNode;

/**
 * {@code backend: slurm} in the job file: its {@code slurm:} block ({@code schemas/backends/slurm.schema.json}),
 * nodes that are Slurm node names (never local, never a host), or one entry given as a count
 * that Slurm picks.
 */
final class SlurmJobFile implements BackendSpec {

    @Override
    public String name() {
        return "slurm";
    }

    @Override
    public String summary() {
        return "nodes are Slurm node names; runjob allocates them with salloc and starts one srun step per node";
    }

    @Override
    public Optional<String> block() {
        return Optional.of("slurm");
    }

    @Override
    public Optional<String> blockSchema() {
        return Optional.of("/schemas/backends/slurm.schema.json");
    }

    @Override
    public String docsPage() {
        return "docs/slurm.md";
    }

    @Override
    public boolean picksNodes() {
        return true;
    }

    @Override
    public BackendSettings settings(JsonNode s) {
        return new SlurmSettings(text(s, "partition"), text(s, "account"), text(s, "time"), text(s, "qos"),
                strings(s.get("alloc_args")), strings(s.get("srun_args")),
                integer(s, "stop_before_limit_s").orElse(SlurmSettings.DEFAULT_STOP_BEFORE_LIMIT_S), integer(s, "cpus_per_worker"),
                s != null && s.path("requeue_on_time_limit").asBoolean(false),
                integer(s, "max_time_limit_requeues").orElse(SlurmSettings.DEFAULT_MAX_TIME_LIMIT_REQUEUES),
                text(s, "login_check").map(c -> BatchQueue.LoginCheck.valueOf(c.toUpperCase(Locale.ROOT))).orElse(BatchQueue.LoginCheck.REFUSE));
    }

    @Override
    public NodeAddress address(JsonNode entry, String name) {
        return new SlurmAddress(name);
    }

    /**
     * No node is local; an entry given as a count is the job's only one, without a name, a host or
     * GPUs to be found on each node ({@code all}).
     */
    @Override
    public void checkNode(JsonNode node, String p, String label, int entries, Problems problems) {
        JsonNode local = node.get("local");
        if (local != null && local.isBoolean() && local.booleanValue()) {
            problems.at(p + "/local", label + " is local, but backend: slurm runs every node as a Slurm node (its name is the Slurm node name)");
        }
        if (!node.has("count")) {
            return;
        }
        if (node.has("name")) {
            problems.atKey(p + "/name", "nodes given as a count have no names: Slurm names them when it allocates them");
        }
        if (entries > 1) {
            problems.atKey(p + "/count", "nodes given as a count are the job's only node entry: give every node as one count, or name each");
        }
        if (node.has("host")) {
            problems.atKey(p + "/host", label + " is given as a count: Slurm picks its nodes, so it has no host");
        }
        JsonNode gpus = node.get("gpus");
        if (gpus != null && gpus.isString()) {
            problems.at(p + "/gpus", "nodes given as a count need their GPUs as a number, e.g. gpus: {count: 8}: Slurm allocates that many on each");
        }
    }
}
