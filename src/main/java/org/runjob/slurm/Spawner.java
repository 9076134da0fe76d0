package org.runjob.slurm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Starts Slurm's commands so that they die with runjob: under {@code setpriv --pdeathsig SIG},
 * from one thread that lives as long as the cluster (the kernel sends the signal when the
 * thread that forked the child ends, not only the process). Without setpriv they start plainly;
 * the agents then end when their stdin closes.
 */
final class Spawner implements AutoCloseable {

    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");

    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "slurm-spawner");
        t.setDaemon(true);
        return t;
    });

    /** @param deathSignal KILL for steps (srun's shepherd then ends the step), TERM for salloc (it withdraws a pending request) */
    Process start(List<String> argv, Map<String, String> env, String deathSignal) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(SETPRIV)) {
            cmd.addAll(List.of(SETPRIV.toString(), "--pdeathsig", deathSignal));
        }
        cmd.addAll(argv);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        pb.environment().putAll(env);
        try {
            return thread.submit(pb::start).get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }

    @Override
    public void close() {
        thread.shutdown();
    }
}
