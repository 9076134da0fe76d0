package org.runjob.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** runjob as its own JVM (this test JVM's class path), so tests can signal and kill it for real. */
public final class RunjobProcess {

    private RunjobProcess() {
    }

    /** Starts {@code runjob JOB} in {@code dir}; its stdout and stderr go to JOB-NAME.out / .err there. */
    public static Process start(Path dir, Path job) throws IOException {
        return start(dir, job, Map.of());
    }

    /** As {@link #start(Path, Path)}: {@code runjob OPTIONS... JOB} with {@code env} added to this JVM's environment. */
    public static Process start(Path dir, Path job, Map<String, String> env, String... options) throws IOException {
        return start(dir, job.getFileName().toString(), env, List.of(options), job, List.of());
    }

    /** {@code runjob OPTIONS... JOB -- ARGS...} with {@code env} added; its stdout and stderr go to NAME.out / .err in {@code dir}. */
    public static Process start(Path dir, String name, Map<String, String> env, List<String> options, Path job, List<String> args)
            throws IOException {
        return start(dir, name, env, List.of(), options, job, args);
    }

    /** As above, with {@code jvm} options (a heap cap) before the class. */
    public static Process start(Path dir, String name, Map<String, String> env, List<String> jvm, List<String> options, Path job,
                                List<String> args) throws IOException {
        List<String> runjobArgs = new ArrayList<>(options);
        runjobArgs.add(job.toString());
        List<String> cmd = new ArrayList<>(RunjobJvm.command(jvm, runjobArgs));
        if (!args.isEmpty()) {
            cmd.add("--");
            cmd.addAll(args);
        }
        return launch(dir, name, env, cmd);
    }

    /**
     * {@code runjob JOB} in {@code dir} with its stdout a pipe this test reads (or does not read: a
     * console that stops); its stderr goes to JOB-NAME.err there.
     */
    public static Process startPiped(Path dir, Path job) throws IOException {
        List<String> cmd = RunjobJvm.command(List.of(job.toString()));
        return new ProcessBuilder(cmd).directory(dir.toFile())
                .redirectError(dir.resolve(job.getFileName() + ".err").toFile()).start();
    }

    /**
     * {@code runjob JOB} with {@code env} added and {@code jvm} options (a heap cap) before the class,
     * its stdout and stderr both in the one pipe this test reads (or does not read).
     */
    public static Process startPiped(Path dir, Path job, Map<String, String> env, List<String> jvm) throws IOException {
        List<String> cmd = RunjobJvm.command(jvm, List.of(job.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        return pb.directory(dir.toFile()).redirectErrorStream(true).start();
    }

    /** {@code runjob ARGS...} in {@code dir} with {@code env} added; its stdout and stderr go to NAME.out / .err there. */
    public static Process command(Path dir, String name, Map<String, String> env, List<String> args) throws IOException {
        return launch(dir, name, env, RunjobJvm.command(args));
    }

    /** Starts {@code cmd} in {@code dir} with {@code env} added; its stdout and stderr go to NAME.out / .err there. */
    private static Process launch(Path dir, String name, Map<String, String> env, List<String> cmd) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        return pb.directory(dir.toFile())
                .redirectOutput(dir.resolve(name + ".out").toFile())
                .redirectError(dir.resolve(name + ".err").toFile()).start();
    }

    public static String stderrOf(Path dir, Path job) throws IOException {
        return Files.readString(dir.resolve(job.getFileName() + ".err"));
    }
}
