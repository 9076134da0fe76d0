package org.runjob.agent;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * A worker and everything it started: the members of its process group (the worker runs as a
 * session and group leader, so pgid = its pid), its descendants, and every process that carries
 * the worker's unique {@link #TOKEN_VARIABLE} in its environment (which finds a grandchild that
 * left the group with setsid and was orphaned when its parent exited). Processes are found by pid,
 * group and token, never by name, so another job's processes are never touched.
 */
public final class ProcessTree {

    /** Set by the agent in every worker's environment, with a value unique to that worker. */
    public static final String TOKEN_VARIABLE = "RUNJOB_WORKER_ID";

    private final long leader;
    private final String token;
    private final Set<Long> seen = new LinkedHashSet<>();

    /** @param token the worker's {@link #TOKEN_VARIABLE} value, or null when there is none */
    public ProcessTree(long leaderPid, String token) {
        this.leader = leaderPid;
        this.token = token;
    }

    /** Live members now, read from a fresh {@link ProcTable}. */
    public Set<ProcessHandle> members() {
        return members(ProcTable.read());
    }

    /** Live members in {@code table}: the group, the token's carriers, the leader's descendants, and any process seen before that still lives. */
    public Set<ProcessHandle> members(ProcTable table) {
        Set<Long> pids = new LinkedHashSet<>(table.inGroup(leader));
        if (token != null) {
            pids.addAll(table.carrying(token));
        }
        ProcessHandle.of(leader).ifPresent(h -> {
            pids.add(leader);
            h.descendants().forEach(d -> pids.add(d.pid()));
        });
        pids.addAll(seen);
        Set<ProcessHandle> live = new LinkedHashSet<>();
        for (long pid : pids) {
            ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(h -> !table.zombie(pid)).ifPresent(live::add);
        }
        // remember descendants while their parent lives: a grandchild that calls setsid stays ours
        live.forEach(h -> seen.add(h.pid()));
        seen.removeIf(pid -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true));
        return live;
    }

    public boolean isEmpty(ProcTable table) {
        return members(table).isEmpty();
    }

    /** SIGTERM to every member; returns their pids. */
    public Set<Long> terminate() {
        Set<Long> pids = new LinkedHashSet<>();
        for (ProcessHandle h : members()) {
            h.destroy();
            pids.add(h.pid());
        }
        return pids;
    }

    /** SIGKILL to every member. */
    public void kill() {
        members().forEach(ProcessHandle::destroyForcibly);
    }
}
