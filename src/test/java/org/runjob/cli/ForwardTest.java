package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.runjob.run.Io;
import org.runjob.session.Interrupts;

import picocli.CommandLine;

/** What a command about a submitted run asks of the run's master node: the words typed, rebuilt. */
class ForwardTest {

    private static final String ID = "20261204-061200-ab12";
    private static final Io IO = new Io(System.out, System.err, Map.of(), Clock.systemUTC(), () -> 0, false, Interrupts.none());

    private static List<String> forwarded(Object command, Set<String> hereOnly, String... args) {
        CommandLine cl = new CommandLine(command);
        cl.parseArgs(args);
        return Forward.argv(cl.getCommandSpec(), ID, hereOnly);
    }

    @Test
    void theRunIsNamedByItsIdAndTheLogsDirStaysHere() {
        assertThat(forwarded(new LogsCommand(IO), Set.of(), "last", "-f", "--ranks", "0-3,7", "--logs-dir", "/x/runs"))
                .containsExactly("logs", ID, "--follow", "--ranks", "0-3,7");
        assertThat(forwarded(new StatusCommand(IO), Set.of(), "2026", "--logs-dir=/x", "-o", "json", "--watch"))
                .containsExactly("status", ID, "--output", "json", "--watch", "2");
        assertThat(forwarded(new StopCommand(IO), Set.of(), "--now", "20261204", "--wait", "5"))
                .containsExactly("stop", ID, "--now", "--wait", "5");
    }

    @Test
    void repeatedOptionsAndLaterPositionalsAreKeptInOrder() {
        assertThat(forwarded(new LogsCommand(IO), Set.of(), "r", "--ranks", "1", "--ranks", "4-5"))
                .containsExactly("logs", ID, "--ranks", "1", "--ranks", "4-5");
        assertThat(forwarded(new PullCommand(IO), Set.of("--into"), "r", "ckpt/last.pt", "--into", "/tmp/x", "log.txt"))
                .containsExactly("pull", ID, "ckpt/last.pt", "log.txt");
    }
}
