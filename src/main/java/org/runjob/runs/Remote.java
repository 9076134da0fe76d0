package org.runjob.runs;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.node.Cluster;
import org.runjob.node.NodeAccess;
import org.runjob.node.NodeException;
import org.runjob.node.NodeProcess;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Launch;
import org.runjob.run.RunIndex;
import org.runjob.session.LineOutput;
import org.runjob.session.NodeCommand;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

/**
 * {@code status}, {@code logs}, {@code stop}, {@code stacks} and {@code pull} of a submitted run: the same command, run on the
 * run's master node over SSH ({@link HostedStart#cli}), its output copied here as it comes, its
 * exit code returned. Ctrl-C here ends it there. A master node that cannot be reached is exit 3.
 */
public final class Remote {

    private Remote() {
    }

    /** What reads the remote command's stdout, until it ends. */
    public interface Stdout {
        void read(InputStream in) throws IOException;
    }

    public static int call(Io io, RunIndex.Entry entry, List<String> command) throws IOException {
        return call(io, entry, command, in -> {
            byte[] buf = new byte[1 << 16];
            int n;
            while ((n = in.read(buf)) > 0) {
                io.out().write(buf, 0, n);
                io.out().flush();
            }
        });
    }

    /** As {@link #call(Io, RunIndex.Entry, List)}, the remote stdout given to {@code stdout}. */
    public static int call(Io io, RunIndex.Entry entry, List<String> command, Stdout stdout) throws IOException {
        Path job = Files.createTempFile("runjob-reach-", ".json", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        SpecLoader.Loaded loaded;
        try {
            Files.writeString(job, Json.compact(entry.reach().orElseThrow()));
            loaded = Jobs.load(io, job.toString(), List.of());
        } finally {
            Files.deleteIfExists(job);
        }
        if (loaded == null) {
            return ExitCode.INVALID;
        }
        JobSpec spec = loaded.spec();
        String node = entry.node().orElseThrow();
        List<String> args = new ArrayList<>(List.of("cli"));
        args.addAll(command);
        ExitLine stderr = new ExitLine(io.err());
        try (Cluster cluster = Launch.open(Backends.of(spec), spec, io)) {
            NodeAccess access = cluster.node(spec.nodes().get(0));
            NodeProcess p;
            try {
                access.reach();
                p = NodeCommand.runjob(node, access, args, stderr.out, io.env());
            } catch (NodeException | IOException e) {
                io.err().println("runjob: cannot reach run " + entry.runId() + " on its master node " + node + ": " + e.getMessage());
                return ExitCode.PREFLIGHT_FAILED;
            }
            Thread watch = Jobs.onInterrupt(io, p::close, "remote-interrupt");
            try (p; InputStream out = p.stdout()) {
                stdout.read(out);
            } catch (IOException e) {
                // the channel ended: interrupted, or the node went
            }
            watch.interrupt();
        }
        if (io.interrupts().count() > 0) {
            return ExitCode.INTERRUPTED;
        }
        return stderr.code().orElseGet(() -> {
            io.err().println("runjob: the master node " + node + " of run " + entry.runId() + " ended the command without a word");
            return ExitCode.PREFLIGHT_FAILED;
        });
    }

    /** The remote stderr, line by line, to {@code err}; the exit-code line is kept, not shown. */
    private static final class ExitLine {
        private final PrintStream err;
        private volatile Integer code;
        final LineOutput out = new LineOutput(this::line);

        ExitLine(PrintStream err) {
            this.err = err;
        }

        private void line(String text) {
            if (text.startsWith(HostedStart.EXITED)) {
                code = Integer.parseInt(text.substring(HostedStart.EXITED.length()).trim());
            } else {
                err.println(text);
            }
        }

        Optional<Integer> code() {
            return Optional.ofNullable(code);
        }
    }
}
