package org.runjob.report;

import java.util.List;

import org.runjob.launch.AttemptResult;
import org.runjob.launch.Outcome;
import org.runjob.launch.RankResult;
import org.runjob.launch.Recovery;
import org.runjob.launch.RunResult;
import org.runjob.launch.StandIn;

import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code summary.json}: the run's result and exit code, the command line, the job file's git commit,
 * and per attempt and rank: node, pid, start, end, state, outcome (exit code or signal), bytes; the
 * spares that stood in for lost nodes, per attempt and all together ({@code stand_ins}); the goodput,
 * what it counts ({@code goodput_basis}: {@code steps} or {@code running}) and the steps restarts redid
 * ({@code redone_steps}, with steps), and, after a restart, each recovery's phases ({@link Recovery}).
 */
public final class SummaryJson {

    private SummaryJson() {
    }

    /** @param git {@code {"commit", "dirty"}} of the repository holding the job file, or null */
    public static ObjectNode of(RunResult run, int exitCode, List<String> command, ObjectNode git) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("job", run.job());
        root.put("run_id", run.runId());
        root.put("result", run.verdict());
        run.last().interruptReason().ifPresent(r -> root.put("interrupted_by", r));
        run.last().nodesGone().ifPresent(r -> root.put("nodes_gone", r));
        run.last().crashLoop().ifPresent(r -> root.put("crash_loop", r));
        root.put("exit_code", exitCode);
        ArrayNode cmd = root.putArray("command");
        command.forEach(cmd::add);
        if (git == null) {
            root.putNull("git");
        } else {
            root.set("git", git);
        }
        BuildInfo build = BuildInfo.current();
        ObjectNode runjob = root.putObject("runjob");
        runjob.put("version", build.version());
        runjob.put("commit", build.commit().orElse(null));
        runjob.put("dirty", build.dirty());
        runjob.put("built", build.built().orElse(null));
        root.put("start", run.attempts().get(0).start().toString());
        root.put("end", run.last().end().toString());
        ArrayNode attempts = root.putArray("attempts");
        for (AttemptResult a : run.attempts()) {
            ObjectNode attempt = attempts.addObject();
            attempt.put("attempt", a.attempt());
            attempt.put("result", a.verdict());
            if (a.rootCause().isPresent()) {
                attempt.put("root_cause_rank", a.rootCause().get().rank());
            } else {
                attempt.putNull("root_cause_rank");
            }
            if (!a.standIns().isEmpty()) {
                ArrayNode made = attempt.putArray("stand_ins");
                a.standIns().forEach(si -> standIn(made.addObject(), si));
            }
            if (!a.dropped().isEmpty()) {
                ArrayNode dropped = attempt.putArray("dropped");
                a.dropped().forEach(dropped::add);
            }
            ArrayNode ranks = attempt.putArray("ranks");
            a.ranks().forEach(r -> rank(ranks.addObject(), r));
        }
        root.put("goodput", Math.round(run.goodput().share() * 1000) / 1000.0);
        root.put("goodput_basis", run.goodput().basis());
        if (run.goodput().basis().equals("steps")) {
            root.put("redone_steps", Math.round(run.goodput().redoneSteps() * 1000) / 1000.0);
        }
        List<Recovery.Phases> phases = Recovery.phases(run.attempts());
        if (!phases.isEmpty()) {
            ArrayNode recovery = root.putArray("recovery");
            for (Recovery.Phases p : phases) {
                ObjectNode o = recovery.addObject().put("attempt", p.attempt()).put("stop_s", round(p.stop())).put("replace_s", round(p.replace()));
                if (p.relaunch().isPresent()) {
                    o.put("relaunch_s", round(p.relaunch().get()));
                } else {
                    o.putNull("relaunch_s");
                }
            }
        }
        List<StandIn> standIns = run.attempts().stream().flatMap(a -> a.standIns().stream()).toList();
        if (!standIns.isEmpty()) {
            ArrayNode all = root.putArray("stand_ins");
            standIns.forEach(si -> standIn(all.addObject(), si));
        }
        root.set("ranks", run.last().ranks().isEmpty() ? f.arrayNode() : attempts.get(attempts.size() - 1).get("ranks"));
        return root;
    }

    private static double round(double seconds) {
        return Math.round(seconds * 1000) / 1000.0;
    }

    private static void standIn(ObjectNode o, StandIn s) {
        o.put("spare", s.spare()).put("node", s.node()).put("node_rank", s.nodeRank()).put("attempt", s.attempt()).put("reason", s.why());
    }

    private static void rank(ObjectNode o, RankResult r) {
        o.put("rank", r.rank());
        o.put("local_rank", r.localRank());
        o.put("node", r.node());
        if (r.pid().isPresent()) {
            o.put("pid", r.pid().getAsLong());
        } else {
            o.putNull("pid");
        }
        o.put("start", r.start() == null ? null : r.start().toString());
        o.put("end", r.end() == null ? null : r.end().toString());
        o.put("state", r.state().label());
        ObjectNode outcome = o.putObject("outcome");
        Outcome out = r.outcome().orElse(null);
        if (out instanceof Outcome.Exited e) {
            outcome.put("type", "exited").put("exit_code", e.code());
        } else if (out instanceof Outcome.Signalled s) {
            outcome.put("type", "signalled").put("signal", s.signal()).put("signal_name", s.name());
        } else if (out instanceof Outcome.NotStarted n) {
            outcome.put("type", "not_started").put("reason", n.reason());
        } else if (out instanceof Outcome.Lost l) {
            outcome.put("type", "lost").put("reason", l.reason());
        }
        o.put("stdout_bytes", r.stdoutBytes());
        o.put("stderr_bytes", r.stderrBytes());
    }
}
