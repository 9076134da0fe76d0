package org.runjob.runs;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntBiFunction;

import org.runjob.logs.RunFolder;
import org.runjob.protocol.NodeJvm;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.QuarantineFile;
import org.runjob.run.Quarantined;
import org.runjob.run.RunJob;
import org.runjob.run.RunState;
import org.runjob.session.Interrupts;

/**
 * The master node's side of a submitted run ({@code runjob submit}), started over SSH by
 * {@code session.NodeCommand}.
 *
 * <ol>
 *   <li>{@link #coordinate}: reads the {@link Submission} from stdin, writes the job and its files
 *       into the run folder {@code ~/.runjob/submitted/JOB/RUN} (directories mode 700), and starts
 *       the run's coordinator there: {@code runjob run submitted.yaml --hosted}, in a session of its
 *       own, its output into {@code console.log}, the hosted run's line (secret and node hosts) on
 *       its stdin. It prints the console as it grows until the workers run ({@value #SUBMITTED}PID)
 *       or the coordinator ends first ({@value #EXITED}CODE; exit 2, a run refused before it
 *       started, removes the folder).</li>
 *   <li>{@link #cli}: a runjob command (status, logs, stop) about the runs in that folder; its
 *       exit code is the last line on stderr ({@value #EXITED}CODE). It ends when its stdin does
 *       (the launcher went away).</li>
 * </ol>
 */
public final class HostedStart {

    static final String SUBMITTED = "RUNJOB-SUBMITTED ";
    static final String EXITED = "RUNJOB-EXIT ";

    private HostedStart() {
    }

    /** Where a user's submitted runs live on their master node. */
    static Path submittedDir() {
        return Path.of(System.getProperty("user.home"), ".runjob", "submitted");
    }

    public static int coordinate(List<String> args, InputStream stdin, PrintStream out) {
        if (args.size() != 2) {
            System.err.println("runjob coordinate: needs JOB RUN");
            return ExitCode.INVALID;
        }
        String job = args.get(0);
        String runId = args.get(1);
        try {
            Path root = submittedDir();
            Path folder = privateDirs(root, job, runId);
            Submission s = Submission.receive(stdin, folder);
            Optional<String> refused = quarantined(s);
            if (refused.isPresent()) {
                RunJob.removeRefused(folder);
                out.println("runjob: " + refused.get());
                out.println(EXITED + ExitCode.PREFLIGHT_FAILED);
                out.flush();
                return ExitCode.PREFLIGHT_FAILED;
            }
            Path console = folder.resolve(RunFolder.CONSOLE_LOG);
            List<String> cmd = new ArrayList<>();
            if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
                cmd.add("/usr/bin/setsid");
            }
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> runArgs = new ArrayList<>(List.of("run", folder.resolve(Submission.JOB_FILE).toString(), "--run-id", runId, "--hosted",
                    "--set", "logs.dir=" + root));
            runArgs.add("--");
            runArgs.addAll(s.args());
            cmd.addAll(NodeJvm.argv(java, NodeJvm.Jit.FULL.flag, List.of(), System.getProperty("java.class.path"), NodeJvm.RUNJOB_MAIN,
                    runArgs.toArray(String[]::new)));
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(folder.toFile())
                    .redirectOutput(console.toFile()).redirectErrorStream(true);
            pb.environment().keySet().removeIf(k -> k.startsWith("RUNJOB_"));
            Process child = pb.start();
            try (OutputStream w = child.getOutputStream()) {
                w.write((s.hosted() + "\n").getBytes(StandardCharsets.UTF_8));
            }
            long shown = 0;
            while (true) {
                boolean exited = child.waitFor(100, TimeUnit.MILLISECONDS);
                shown = Detach.show(out, console, shown);
                if (exited) {
                    int code = child.exitValue();
                    if (code == ExitCode.INVALID) {
                        RunJob.removeRefused(folder);
                    }
                    out.println();
                    out.println(EXITED + code);
                    out.flush();
                    return code;
                }
                String state = RunRecords.read(folder, System.getenv()).status().map(st -> st.path("state").asString("")).orElse("");
                if (RunState.LAUNCHED.contains(state)) {
                    out.println();
                    out.println(SUBMITTED + child.pid() + " " + folder);
                    out.flush();
                    return ExitCode.OK;
                }
            }
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("runjob coordinate: " + e.getMessage());
            out.println();
            out.println(EXITED + ExitCode.PREFLIGHT_FAILED);
            out.flush();
            return ExitCode.PREFLIGHT_FAILED;
        } catch (InterruptedException e) {
            return ExitCode.INTERRUPTED;
        }
    }

    /**
     * Takes the launching machine's quarantine entries into this node's (the run's coordinator
     * obeys both, and {@code runjob nodes} there lists them); why the run is refused when this
     * machine, where the coordinator would start, is itself quarantined.
     */
    private static Optional<String> quarantined(Submission s) throws IOException {
        Instant now = Instant.now();
        Map<String, String> env = System.getenv();
        if (QuarantineFile.problem(env).isPresent()) {
            return Optional.empty(); // the run's own preflight says why the quarantine is not used
        }
        QuarantineFile.merge(env, s.quarantine(), now);
        if (s.coordinatorMachine().isEmpty()) {
            return Optional.empty();
        }
        return QuarantineFile.active(env, now).stream().filter(e -> e.machine().equals(s.coordinatorMachine())).findFirst()
                .map(e -> "node " + e.node() + ", where the run's coordinator would start, is " + Quarantined.describe(e)
                        + "; a submitted run's coordinator never starts on a quarantined machine: choose another with --coordinator,"
                        + " or use it again with: runjob nodes --clear " + e.node());
    }

    /** {@code root/job/run}, each level made mode 700 when new; a symlink on the way is refused. */
    static Path privateDirs(Path root, String job, String runId) throws IOException {
        for (String part : List.of(job, runId)) {
            if (part.isEmpty() || part.contains("/") || part.equals("..") || part.equals(".")) {
                throw new IOException("not a name: " + part);
            }
        }
        Files.createDirectories(root, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        if (Files.isSymbolicLink(root)) {
            throw new IOException(root + " is a symlink");
        }
        Path dir = root.resolve(job).resolve(runId);
        Submission.mkdirs(root, dir);
        return dir;
    }

    /**
     * {@code cli ARGS}: runjob ARGS, given to {@code runjob} (the command line's entry), with the
     * submitted runs' folder as the logs dir; the exit code last on stderr.
     */
    public static int cli(String[] args, ToIntBiFunction<Io, String[]> runjob) {
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16), false,
                StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        Thread watch = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // the launcher sends nothing; its end is the signal
                }
            } catch (IOException e) {
                // ended
            }
            out.flush();
            Runtime.getRuntime().halt(ExitCode.INTERRUPTED);
        }, "launcher-gone");
        watch.setDaemon(true);
        watch.start();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--logs-dir", submittedDir().toString()));
        SecureRandom random = new SecureRandom();
        Io io = new Io(out, err, System.getenv(), Clock.systemUTC(), random::nextInt, false, Interrupts.installed());
        int code = runjob.applyAsInt(io, all.toArray(String[]::new));
        out.flush();
        err.println(EXITED + code);
        err.flush();
        return code;
    }

    static void write(Path file, byte[] content, int mode) throws IOException {
        Files.write(file, content, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString((mode & 0100) != 0 ? "rwx------" : "rw-------"));
    }
}
