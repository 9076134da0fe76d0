package org.runjob.run;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

import org.runjob.plan.RunId;

/**
 * A new run's id, claimed by creating its folder: {@code JOB_LOGS/RUN_ID} is made with one atomic
 * create, so two runs of one job that start in the same second never share a folder (nor the run's
 * directory on the nodes, named by the same id, where the second would find the first's
 * checkpoints). An id whose folder exists already is passed over for the next salt.
 */
public final class RunIds {

    /** Ids tried before giving up: 65,536 salts a second, so only a folder nobody may write in gets here. */
    static final int TRIES = 64;

    private RunIds() {
    }

    /** Why no run folder could be made: {@code folder} is the one tried (first), {@code reason} what the file system said. */
    public static final class NotCreated extends IOException {
        public final Path folder;
        public final IOException reason;

        NotCreated(Path folder, IOException reason) {
            super(reason.getMessage(), reason);
            this.folder = folder;
            this.reason = reason;
        }
    }

    /** Run and job folders: writable by their owner only, whatever the umask, so {@link Owned#runFolder} believes them. */
    private static final FileAttribute<Set<PosixFilePermission>> MODE = PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rwxr-xr-x"));

    private static void jobFolder(Path jobLogs) throws IOException {
        if (!Files.isDirectory(jobLogs)) {
            Files.createDirectories(jobLogs.toAbsolutePath().getParent());
            try {
                Files.createDirectory(jobLogs, MODE);
            } catch (FileAlreadyExistsException e) {
                // another run of this job made it meanwhile
            }
        }
    }

    /** Creates {@code jobLogs} (and its parents) if missing, and a new run folder in it; returns its run id. */
    public static String claim(Io io, Path jobLogs) throws NotCreated {
        int salt = io.random().getAsInt();
        Path first = jobLogs.resolve(RunId.of(io.clock().instant(), salt));
        try {
            jobFolder(jobLogs);
            for (int i = 0; i < TRIES; i++) {
                String id = RunId.of(io.clock().instant(), salt + i);
                try {
                    Files.createDirectory(jobLogs.resolve(id), MODE);
                    return id;
                } catch (FileAlreadyExistsException e) {
                    // another run of this job took it this second: the next salt
                }
            }
            throw new IOException("no free run id after " + TRIES + " tries");
        } catch (IOException e) {
            throw new NotCreated(first, e);
        }
    }

    /** The folder of run {@code id}, given (a detached, queued, resumed or requeued run's): made when missing, used when there. */
    public static String reuse(Path jobLogs, String id) throws NotCreated {
        try {
            jobFolder(jobLogs);
            if (!Files.isDirectory(jobLogs.resolve(id))) {
                Files.createDirectory(jobLogs.resolve(id), MODE);
            }
            return id;
        } catch (IOException e) {
            throw new NotCreated(jobLogs.resolve(id), e);
        }
    }
}
