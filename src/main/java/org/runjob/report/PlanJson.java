package org.runjob.report;

import java.util.List;

import org.runjob.node.Backend;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.plan.WorkerLaunch;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;

import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The plan as JSON: {@code {"job", "run_id", "world_size", "master_addr", "master_port", "nodes": [...],
 * "workers": [...], "backend": {...}}}. Ranks are numbers, env values strings; {@code master_port} is a number, or
 * {@code "auto"} before launch; a node's {@code port} is null when the ssh config decides.
 */
public final class PlanJson {

    /** The value shown for a variable the node's environment set. */
    static final String ACTIVATED = "<set by the node's environment>";

    private PlanJson() {
    }

    /** @param backend its name, commands and notes go under {@code "backend"} */
    public static ObjectNode of(LaunchPlan plan, Backend backend) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("job", plan.job());
        root.put("run_id", plan.runId());
        root.put("world_size", plan.worldSize());
        plan.spec().observe().maxSteps().ifPresent(n -> root.put("max_steps", n));
        root.put("master_node", plan.masterNode());
        root.put("master_addr", plan.masterAddr());
        if (plan.masterPort().isPresent()) {
            root.put("master_port", plan.masterPort().getAsInt());
        } else {
            root.put("master_port", "auto");
        }
        ArrayNode nodes = root.putArray("nodes");
        for (NodePlan n : plan.nodes()) {
            ObjectNode node = nodes.addObject();
            node.put("name", n.name());
            if (n.address().reachableAs().isPresent()) {
                node.put("host", n.address().reachableAs().get());
            } else {
                node.putNull("host");
            }
            if (n.address().port().isPresent()) {
                node.put("port", n.address().port().getAsInt());
            } else {
                node.putNull("port");
            }
            node.put("local", n.address() instanceof NodeAddress.Local);
            n.address().planFields().forEach(node::put);
            node.put("node_rank", n.nodeRank());
            ArrayNode ranks = node.putArray("ranks");
            n.ranks().forEach(ranks::add);
            node.put("cuda_visible_devices", n.visibleDevices());
            node.put("workdir", n.workdir());
            if (n.environment().present()) {
                node.set("environment", EnvironmentJson.block(n.environment()));
            }
            ArrayNode files = node.putArray("files");
            for (JobSpec.ShippedFile file : n.files()) {
                files.addObject().put("source", file.source().toString()).put("destination", file.destination());
            }
        }
        if (!plan.spec().spares().isEmpty()) {
            ArrayNode spares = root.putArray("spares");
            plan.spec().spares().forEach(spare -> spares.add(spare.name()));
        }
        ArrayNode workers = root.putArray("workers");
        for (WorkerLaunch w : plan.workers()) {
            ObjectNode worker = workers.addObject();
            worker.put("rank", w.rank());
            worker.put("local_rank", w.localRank());
            worker.put("node", w.node());
            worker.put("node_rank", w.nodeRank());
            ArrayNode argv = worker.putArray("argv");
            w.argv().forEach(argv::add);
            if (plan.nodes().get(w.nodeRank()).container().isPresent()) {
                ArrayNode command = worker.putArray("command");
                plan.nodes().get(w.nodeRank()).command(w).forEach(command::add);
            }
            ObjectNode env = worker.putObject("env");
            // what the node's environment set (a sourced script's exports among it) is named, never recorded
            List<String> activated = plan.nodes().get(w.nodeRank()).activated();
            w.env().forEach((k, v) -> env.put(k, activated.contains(k) ? ACTIVATED : v));
        }
        Backend.DryRun dryRun = backend.dryRun(plan.spec());
        ObjectNode b = root.putObject("backend").put("name", backend.name());
        ArrayNode commands = b.putArray("commands");
        dryRun.commands().forEach(commands::add);
        ArrayNode notes = b.putArray("notes");
        backend.notes(plan.spec()).forEach(notes::add);
        return root;
    }
}
