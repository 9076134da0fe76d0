package org.runjob.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.serve.Lab;
import org.runjob.session.Interrupts;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code runjob serve}: the lab's page ({@link Lab}) until Ctrl-C or SIGTERM. Its first line is
 * the page's URL with its token. Exit 0 when stopped, 2 for a bad option or job file, 3 when the
 * address cannot be bound.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, description = "Serve a web page of every server's GPUs and who holds them, and of"
        + " your runs live (logs, curves, progress, events), until Ctrl-C. Prints its URL (with its token) first.")
final class ServeCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(paramLabel = "JOB_FILE", arity = "0..*", description = "Job files whose nodes the page shows (besides those of your recent runs).")
    List<String> files = new ArrayList<>();

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "8421", description = "The port (default ${DEFAULT-VALUE}; 0: any free one).")
    int port;

    @Option(names = "--bind", paramLabel = "ADDR", defaultValue = "127.0.0.1",
            description = "The address to listen on (default ${DEFAULT-VALUE}: this machine only; 0.0.0.0: every address). The token is asked either way.")
    String bind;

    @Option(names = "--logs-dir", paramLabel = "DIR", description = "Only the runs under DIR. Without it: ./runs and every run in your run index.")
    Path logsDir;

    @Option(names = "--interval", paramLabel = "SECONDS", defaultValue = "2", description = "Seconds between GPU samples of each server (default ${DEFAULT-VALUE}).")
    double interval;

    @Option(names = "--allow-stop", description = "Show a stop button on each live run's page (as runjob stop does).")
    boolean allowStop;

    ServeCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            io.err().println("runjob: --port takes 0 to 65535, not " + port);
            return ExitCode.INVALID;
        }
        if (!(interval >= 0.25 && interval <= 3600)) {
            io.err().println("runjob: --interval takes 0.25 to 3600 seconds, not " + interval);
            return ExitCode.INVALID;
        }
        InetAddress address;
        try {
            address = InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            io.err().println("runjob: --bind " + bind + " is no address: give one of this machine's, e.g. 127.0.0.1 or 0.0.0.0");
            return ExitCode.INVALID;
        }
        List<SpecLoader.Loaded> jobs = new ArrayList<>();
        for (String f : files) {
            SpecLoader.Loaded loaded = Jobs.load(io, f, List.of());
            if (loaded == null) {
                return ExitCode.INVALID;
            }
            jobs.add(loaded);
        }
        Lab.Served served;
        try {
            served = Lab.start(io, new Lab.Options(address, port, logsDir == null ? RunsOptions.DEFAULT_DIR : logsDir, logsDir == null, allowStop,
                    (int) Math.round(interval * 1000), jobs), this::stop);
        } catch (BindException e) {
            io.err().println("runjob: cannot listen on " + bind + " port " + port + ": " + e.getMessage()
                    + (port != 0 ? " (--port 0 picks a free port)" : ""));
            return ExitCode.PREFLIGHT_FAILED;
        } catch (IOException e) {
            io.err().println("runjob: cannot listen on " + bind + " port " + port + ": " + e.getMessage());
            return ExitCode.PREFLIGHT_FAILED;
        }
        try {
            io.out().println(served.url());
            io.out().println("runjob serve: your runs and " + served.servers() + " server" + (served.servers() == 1 ? "" : "s")
                    + (address.isLoopbackAddress() ? ", on this machine only" : ", on " + bind) + (allowStop ? ", with stop buttons" : "")
                    + "; Ctrl-C ends it");
            io.out().flush();
            while (!Jobs.pauseUnlessInterrupted(io, 1000)) {
                // serving
            }
        } finally {
            served.server().close();
        }
        return ExitCode.OK;
    }

    /** runjob stop RUN, as typed, its words returned. */
    private String stop(String runId) {
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        PrintStream both = new PrintStream(said, true, StandardCharsets.UTF_8);
        Io captured = new Io(both, both, io.env(), io.clock(), io.random(), false, Interrupts.none());
        List<String> args = new ArrayList<>(List.of("stop", runId));
        if (logsDir != null) {
            args.addAll(List.of("--logs-dir", logsDir.toString()));
        }
        int code = Main.run(captured, args.toArray(String[]::new));
        return said.toString(StandardCharsets.UTF_8).strip() + (code == ExitCode.OK ? "" : " (exit " + code + ")");
    }
}
