package org.runjob.launch;

import java.util.List;

import org.runjob.protocol.Exit;

/** How a worker ended, as the coordinator records it. */
public sealed interface Outcome {

    boolean success();

    /** One line for reports: "exit 3", "SIGKILL (signal 9)", "lost: ...". */
    String describe();

    record Exited(int code) implements Outcome {
        public boolean success() {
            return code == 0;
        }

        public String describe() {
            return "exit " + code;
        }
    }

    record Signalled(int signal, String name) implements Outcome {
        public boolean success() {
            return false;
        }

        public String describe() {
            return name + " (signal " + signal + ")";
        }
    }

    record NotStarted(String reason) implements Outcome {
        public boolean success() {
            return false;
        }

        public String describe() {
            return "not started: " + reason;
        }
    }

    record Lost(String reason) implements Outcome {
        public boolean success() {
            return false;
        }

        public String describe() {
            return "lost: " + reason;
        }
    }

    /**
     * The attempt hung ({@code failure.hang_timeout_s}); the rank that stood out in the stacks, or
     * the first running one, carries it.
     *
     * @param folder the capture's folder in the run folder
     * @param stacks one line per rank ({@link StackSummary})
     */
    record Hung(String why, String folder, List<String> stacks) implements Outcome {
        public Hung {
            stacks = List.copyOf(stacks);
        }

        public boolean success() {
            return false;
        }

        public String describe() {
            return "hung: " + why;
        }
    }

    static Outcome of(Exit exit) {
        if (exit instanceof Exit.Code c) {
            return new Exited(c.code());
        } else if (exit instanceof Exit.Signal s) {
            return new Signalled(s.signal(), s.name());
        }
        return new NotStarted(((Exit.NotStarted) exit).reason());
    }
}
