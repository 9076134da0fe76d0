package org.runjob.report;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.runjob.node.Backend;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.plan.ShellWords;
import org.runjob.plan.WorkerLaunch;
import org.runjob.spec.EnvironmentSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

/**
 * The plan as a person reads it: a header with the world size and rendezvous, then one block per
 * node (address, node rank, ranks, CUDA_VISIBLE_DEVICES, workdir, files, the environment its
 * workers share) and the exact command line of each worker with the variables that differ per worker;
 * then the spares, by name and address.
 */
public final class PlanText {

    private PlanText() {
    }

    /** @param backend the backend's own commands and notes, shown after the nodes */
    public static void print(LaunchPlan plan, Backend backend, Path workingDir, PrintStream out) {
        out.printf("job %s  run %s  %d node%s  world size %d%n", plan.job(), plan.runId(), plan.nodes().size(),
                plan.nodes().size() == 1 ? "" : "s", plan.worldSize());
        out.printf("rendezvous %s:%s on node %s%n", plan.masterAddr(),
                plan.masterPort().isPresent() ? Integer.toString(plan.masterPort().getAsInt()) : "auto (a free port chosen at launch)",
                plan.masterNode());
        for (NodePlan node : plan.nodes()) {
            out.println();
            out.printf("node %s  node rank %d  %s%n", node.name(), node.nodeRank(), address(node));
            out.printf("  ranks                 %s (%d worker%s)%n", span(node.ranks()), node.workers().size(),
                    node.workers().size() == 1 ? "" : "s");
            out.printf("  CUDA_VISIBLE_DEVICES  %s%n", node.visibleDevices().isEmpty() ? "(none: CPU only)" : node.visibleDevices());
            out.printf("  workdir               %s%n", node.workdir());
            for (JobSpec.ShippedFile f : node.files()) {
                out.printf("  file                  %s <- %s%n", f.destination(), shown(f.source(), workingDir));
            }
            environment(node.environment(), out);
            Map<String, String> shared = shared(node.workers());
            List<String> lines = wrap(assignments(shared), 76);
            for (int i = 0; i < lines.size(); i++) {
                out.printf("  %-22s%s%n", i == 0 ? "env" : "", lines.get(i));
            }
            for (WorkerLaunch w : node.workers()) {
                Map<String, String> own = new LinkedHashMap<>(w.env());
                own.keySet().removeAll(shared.keySet());
                out.printf("  rank %-3d local %-3d   %s%s%n", w.rank(), w.localRank(),
                        own.isEmpty() ? "" : assignments(own) + " ", ShellWords.join(node.command(w)));
            }
        }
        for (NodeSpec spare : plan.spec().spares()) {
            out.println();
            out.printf("spare %s  %s%n", spare.name(), spare.address().describe());
            out.printf("  %-22s%s%n", "", "checked in preflight; runs nothing until it stands in for a lost node that runs as many workers");
        }
        backendCommands(backend, plan.spec(), out);
        out.println();
        out.println("dry run: no machine was contacted and nothing was started.");
        out.flush();
    }

    /** The node's environment, when it has one: activated on the node, in this order, before its workers start. */
    private static void environment(EnvironmentSpec e, PrintStream out) {
        e.modules().forEach(m -> out.printf("  %-22s%s%n", "module load", m));
        e.sources().forEach(s -> out.printf("  %-22s%s%n", "source", s));
        e.interpreter().ifPresent(i -> out.printf("  %-22s%s%n", i.kind().key(), i.value()));
        for (int i = 0; i < e.setup().size(); i++) {
            out.printf("  %-22s%s%n", i == 0 ? "setup" : "", e.setup().get(i));
        }
        if (!e.setup().isEmpty()) {
            out.printf("  %-22s%s%n", "", "(once per node while its content is unchanged; at most " + e.setupTimeoutSeconds() + " s)");
        }
        e.container().ifPresent(c -> out.printf("  %-22s%s %s%n", "container", c.runtime(), c.image()));
    }

    /** The backend's commands (a Slurm allocation and its steps) and its notes; nothing for one that has none. */
    private static void backendCommands(Backend backend, JobSpec spec, PrintStream out) {
        Backend.DryRun dryRun = backend.dryRun(spec);
        if (dryRun.isEmpty()) {
            return;
        }
        out.println();
        out.println(backend.name() + ": " + dryRun.summary());
        dryRun.commands().forEach(c -> out.println("  " + c));
        backend.notes(spec).forEach(n -> out.println("  note: " + n));
    }

    private static String address(NodePlan node) {
        if (node.address() instanceof NodeAddress.Local local) {
            return local.host().map(h -> "local, as " + h).orElse("local (this machine)");
        }
        return node.address().describe();
    }

    /** Variables whose value is the same for every worker of the node. */
    private static Map<String, String> shared(List<WorkerLaunch> workers) {
        Map<String, String> shared = new LinkedHashMap<>(workers.get(0).env());
        for (WorkerLaunch w : workers) {
            shared.entrySet().removeIf(e -> !e.getValue().equals(w.env().get(e.getKey())));
        }
        if (workers.size() == 1) {
            shared.remove("RANK");
            shared.remove("LOCAL_RANK");
            shared.remove("ROLE_RANK");
        }
        return shared;
    }

    /** Breaks text at spaces into lines of at most {@code width} characters (longer words stay whole). */
    static List<String> wrap(String text, int width) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.split(" ")) {
            if (line.length() > 0 && line.length() + 1 + word.length() > width) {
                lines.add(line.toString());
                line.setLength(0);
            }
            line.append(line.length() == 0 ? "" : " ").append(word);
        }
        lines.add(line.toString());
        return lines;
    }

    private static String assignments(Map<String, String> env) {
        StringBuilder out = new StringBuilder();
        env.forEach((k, v) -> out.append(out.length() == 0 ? "" : " ").append(k).append('=').append(ShellWords.quote(v)));
        return out.toString();
    }

    static String span(List<Integer> ranks) {
        if (ranks.size() == 1) {
            return Integer.toString(ranks.get(0));
        }
        return ranks.get(0) + "-" + ranks.get(ranks.size() - 1);
    }

    private static String shown(Path source, Path workingDir) {
        try {
            Path rel = workingDir.toAbsolutePath().relativize(source);
            return rel.startsWith("..") ? source.toString() : rel.toString();
        } catch (IllegalArgumentException e) {
            return source.toString();
        }
    }
}
