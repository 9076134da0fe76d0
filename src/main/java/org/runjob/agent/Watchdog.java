package org.runjob.agent;

/**
 * The shell that starts a node's agent and outlives it: {@code sh -c SCRIPT sh AGENT-ARGV...}.
 *
 * <ol>
 *   <li>It makes a private directory ({@code mktemp -d}, mode 700) and starts the agent with
 *       {@value Registry#VARIABLE} naming it, handing the agent its own stdin and stdout (the
 *       channel) and keeping neither, so the coordinator sees the channel end when the agent ends.</li>
 *   <li>It ignores SIGHUP and SIGINT, starts the agent as a child subreaper where a system
 *       {@code python3} can set that ({@link Subreaper}), then ignores SIGTERM and SIGPIPE (the agent
 *       keeps the defaults), lets go of stderr, and waits for the agent, however it ends.</li>
 *   <li>Then every process the agent recorded ({@link Registry}: pid and start time, so a reused
 *       pid is never hit) gets SIGTERM, and SIGKILL when still there after the recorded grace.
 *       After a normal end the agent has stopped them all already and the list is empty. Then
 *       every container left of the run (by the label {@link Registry#containers} names) is removed.</li>
 *   <li>It removes the directory, keeps the class-data archive the bootstrap asked the agent to
 *       write (only after a normal exit), and exits with the agent's status.</li>
 * </ol>
 * A constant script: the agent's command comes as its arguments, never as script text.
 */
public final class Watchdog {

    /** Sets PR_SET_CHILD_SUBREAPER, says so in the environment, and execs its arguments (no single quote in it). */
    static final String PYTHON = "import ctypes, os, sys\n"
            + "if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0: os.environ[\"" + Subreaper.VARIABLE + "\"] = \"1\"\n"
            + "os.execvp(sys.argv[1], sys.argv[1:])\n";

    public static final String SCRIPT = String.join("\n",
            "PR_SUBREAPER='" + PYTHON + "'",
            "d=$(mktemp -d \"${TMPDIR:-/tmp}/runjob-agent.XXXXXXXX\") || { echo 'runjob: cannot create a private directory for the agent' >&2; exit 125; }",
            "trap '' HUP INT",
            // the agent becomes a child subreaper before it starts (kept across exec): a system python3 does it in
            // ~10 ms; without one the agent does it itself through JNA (~100 ms of CPU)
            "for p in /usr/bin/python3 /usr/local/bin/python3; do",
            "  [ -x \"$p\" ] && { set -- \"$p\" -I -S -c \"$PR_SUBREAPER\" \"$@\"; break; }",
            "done",
            "exec 3<&0 4>&1 0</dev/null 1>/dev/null",
            Registry.VARIABLE + "=$d \"$@\" 0<&3 1>&4 3<&- 4>&- &",
            "a=$!",
            // from here on TERM is for the agent alone, and the watchdog lets go of stderr: a watchdog told to end,
            // or whose channel is gone (the shell would die of SIGPIPE saying "Killed" about the agent), still sweeps
            "trap '' TERM PIPE",
            "exec 2>/dev/null",
            "exec 3<&- 4>&-",
            "wait \"$a\"; rc=$?",
            // SIG: a signal name, or 0 to count who is left; true when any recorded process still runs.
            // Builtins only (read, parameter expansion): no fork per process on a loaded node.
            "sweep() {",
            "  n=0",
            "  [ -f \"$d/procs\" ] || return 1",
            "  while read -r p t; do",
            "    read -r s 2>/dev/null < \"/proc/$p/stat\" || continue",
            "    s=${s##*) }",
            "    set -- $s",
            "    [ \"$1\" != Z ] && [ \"${20}\" = \"$t\" ] && kill -\"$sig\" \"$p\" 2>/dev/null && n=$((n + 1))",
            "  done < \"$d/procs\"",
            "  [ \"$n\" -gt 0 ]",
            "}",
            // centiseconds since boot, into c
            "now() { read -r u _ < /proc/uptime; c=$(( ${u%.*} * 100 + 1${u#*.} - 100 )); }",
            "sig=TERM",
            "if sweep; then",
            "  g=$(cat \"$d/grace\" 2>/dev/null) || g=10000",
            "  now; end=$((c + g / 10)); sig=0",
            "  while sweep; do now; [ \"$c\" -ge \"$end\" ] && break; sleep 0.1; done",
            "  sig=KILL; sweep",
            "fi",
            // containers of the run (runtime and label, one line): removed, running or exited
            "if [ -f \"$d/containers\" ]; then",
            "  while read -r rt l; do",
            "    ids=$(\"$rt\" ps -aq --filter \"label=$l\" 2>/dev/null) && [ -n \"$ids\" ] && \"$rt\" rm -f $ids >/dev/null 2>&1",
            "  done < \"$d/containers\"",
            "fi",
            "rm -rf \"$d\"",
            // the bootstrap's class-data archive: kept only when the agent ended normally (so it was written whole), with
            // its checksum beside it, which the bootstrap checks before each use; agents of one cache that end together
            // (nodes on a shared home) install the pair one at a time (a lock directory), else archive and sum could differ
            "if [ -n \"${RUNJOB_JSA_DUMP:-}\" ]; then",
            "  if [ \"$rc\" = 0 ] && [ -n \"${RUNJOB_JSA:-}\" ] && [ -s \"$RUNJOB_JSA_DUMP\" ] && cksum < \"$RUNJOB_JSA_DUMP\" > \"$RUNJOB_JSA_DUMP.sum\""
                    + " && mkdir \"$RUNJOB_JSA.lock\" 2>/dev/null; then",
            "    mv -f \"$RUNJOB_JSA_DUMP.sum\" \"$RUNJOB_JSA.sum\" && mv -f \"$RUNJOB_JSA_DUMP\" \"$RUNJOB_JSA\"",
            "    rmdir \"$RUNJOB_JSA.lock\"",
            "  fi",
            "  rm -f \"$RUNJOB_JSA_DUMP\" \"$RUNJOB_JSA_DUMP.sum\"",
            "fi",
            "exit \"$rc\"");

    private Watchdog() {
    }

    /**
     * Ends a node program on this machine as a dropped SSH channel ends one on a node: SIGKILL to
     * every process under it (the agent, and its workers while the agent lives), SIGTERM to it. A
     * bootstrap shell ends; a watchdog ignores the TERM, sweeps what its agent recorded and exits,
     * so a worker or daemon the dead agent left to init is still stopped. Killing the watchdog too
     * would let exactly those escape.
     */
    public static void end(ProcessHandle program) {
        program.descendants().forEach(ProcessHandle::destroyForcibly);
        program.destroy();
    }
}
