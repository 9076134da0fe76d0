package org.runjob.agent;

/**
 * The shell that starts a node's agent and outlives it: {@code sh -c SCRIPT sh AGENT-ARGV...}.
 *
 * <ol>
 *   <li>It makes a private directory ({@code mktemp -d}, mode 700) and starts the agent with
 *       {@value Registry#VARIABLE} naming it, handing the agent its own stdin and stdout (the
 *       channel) and keeping neither, so the coordinator sees the channel end when the agent ends.</li>
 *   <li>It ignores SIGHUP and SIGINT and waits for the agent, however it ends.</li>
 *   <li>Then every process the agent recorded ({@link Registry}: pid and start time, so a reused
 *       pid is never hit) gets SIGTERM, and SIGKILL when still there after the recorded grace.
 *       After a normal end the agent has stopped them all already and the list is empty.</li>
 *   <li>It removes the directory and exits with the agent's status.</li>
 * </ol>
 * A constant script: the agent's command comes as its arguments, never as script text.
 */
public final class Watchdog {

    public static final String SCRIPT = String.join("\n",
            "d=$(mktemp -d \"${TMPDIR:-/tmp}/runjob-agent.XXXXXXXX\") || { echo 'runjob: cannot create a private directory for the agent' >&2; exit 125; }",
            "trap '' HUP INT",
            "exec 3<&0 4>&1 0</dev/null 1>/dev/null",
            Registry.VARIABLE + "=$d \"$@\" 0<&3 1>&4 3<&- 4>&- &",
            "a=$!",
            "exec 3<&- 4>&-",
            "wait \"$a\"; rc=$?",
            // SIG: a signal name, or 0 to count who is left; true when any recorded process still runs
            "sweep() {",
            "  n=0",
            "  [ -f \"$d/procs\" ] || return 1",
            "  while read -r p t; do",
            "    s=$(sed 's/.*) //' \"/proc/$p/stat\" 2>/dev/null) || continue",
            "    set -- $s",
            "    [ \"$1\" != Z ] && [ \"${20}\" = \"$t\" ] && kill -\"$sig\" \"$p\" 2>/dev/null && n=$((n + 1))",
            "  done < \"$d/procs\"",
            "  [ \"$n\" -gt 0 ]",
            "}",
            "sig=TERM",
            "if sweep; then",
            "  g=$(cat \"$d/grace\" 2>/dev/null) || g=10000",
            "  i=0; sig=0",
            "  while [ \"$i\" -lt $((g / 100)) ] && sweep; do sleep 0.1; i=$((i + 1)); done",
            "  sig=KILL; sweep",
            "fi",
            "rm -rf \"$d\"",
            "exit \"$rc\"");

    private Watchdog() {
    }
}
