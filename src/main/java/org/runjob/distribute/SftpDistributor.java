package org.runjob.distribute;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.jcraft.jsch.ChannelSftp;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.Session;
import com.jcraft.jsch.SftpException;

import org.runjob.spec.JobSpec;
import org.runjob.transport.RemoteExec;
import org.runjob.transport.SshException;

/**
 * Ships the agent jar and a job's files into a remote node's workdir.
 *
 * <ol>
 *   <li>One {@code sha256sum} on the node tells which destinations already hold the same bytes;
 *       those are skipped.</li>
 *   <li>The rest go over SFTP to a temporary name beside the destination, get the source's
 *       permission bits (the exec bit included), and are renamed into place in one {@code mv}
 *       per file, so a reader never sees half a file.</li>
 *   <li>A destination that would leave the workdir ({@code ..}) is refused.</li>
 * </ol>
 */
public final class SftpDistributor {

    private SftpDistributor() {
    }

    /** Files at least this big report their progress. */
    static final long PROGRESS_MIN_BYTES = 8L << 20;

    public static Shipped ship(Session session, String workdir, Path agentJar, List<JobSpec.ShippedFile> files)
            throws SshException, IOException {
        return ship(session, workdir, agentJar, files, line -> { });
    }

    /** @param progress gets a line now and then while a large file is on its way ("train.bin 40% of 100 MiB") */
    public static Shipped ship(Session session, String workdir, Path agentJar, List<JobSpec.ShippedFile> files,
                               java.util.function.Consumer<String> progress) throws SshException, IOException {
        String dir = RemotePaths.of(workdir);
        Map<String, Path> targets = new LinkedHashMap<>();
        targets.put(RemotePaths.agentJar(workdir), agentJar);
        for (FileList.Entry e : FileList.of(files)) {
            targets.put(RemotePaths.join(dir, e.destination()), e.source());
        }
        Map<String, String> remote = remoteHashes(session, targets.keySet());
        long sent = 0;
        long skipped = 0;
        int filesSent = 0;
        int filesSkipped = 0;
        List<String> moves = new ArrayList<>();
        Set<String> dirs = new LinkedHashSet<>();
        Map<String, Path> toSend = new LinkedHashMap<>();
        for (Map.Entry<String, Path> t : targets.entrySet()) {
            long size = Files.size(t.getValue());
            if (Sha256.ofSource(t.getValue()).equals(remote.get(t.getKey()))) {
                skipped += size;
                filesSkipped++;
            } else {
                toSend.put(t.getKey(), t.getValue());
                int slash = t.getKey().lastIndexOf('/');
                if (slash > 0) {
                    dirs.add(t.getKey().substring(0, slash));
                }
                sent += size;
                filesSent++;
            }
        }
        if (toSend.isEmpty()) {
            return new Shipped(0, skipped, 0, filesSkipped);
        }
        List<String> mkdir = new ArrayList<>(List.of("mkdir", "-p", "--"));
        mkdir.addAll(dirs);
        check(RemoteExec.run(session, mkdir, 30_000), "mkdir");
        ChannelSftp sftp = null;
        try {
            sftp = (ChannelSftp) session.openChannel("sftp");
            sftp.connect(30_000);
            for (Map.Entry<String, Path> t : toSend.entrySet()) {
                String tmp = t.getKey() + ".runjob-tmp";
                long size = Files.size(t.getValue());
                if (size >= PROGRESS_MIN_BYTES) {
                    sftp.put(t.getValue().toString(), tmp, new Progress(t.getValue().getFileName().toString(), size, progress));
                } else {
                    sftp.put(t.getValue().toString(), tmp);
                }
                sftp.chmod(mode(t.getValue()), tmp);
                moves.add(tmp);
                moves.add(t.getKey());
            }
        } catch (JSchException | SftpException e) {
            throw new SshException("upload failed: " + e.getMessage(), e);
        } finally {
            if (sftp != null) {
                sftp.disconnect();
            }
        }
        // sh -c with a constant script; the paths are its arguments, never part of the script text
        List<String> mv = new ArrayList<>(List.of("sh", "-c", "while [ $# -gt 1 ]; do mv -f -- \"$1\" \"$2\" || exit 1; shift 2; done", "sh"));
        mv.addAll(moves);
        check(RemoteExec.run(session, mv, 30_000), "rename");
        return new Shipped(sent, skipped, filesSent, filesSkipped);
    }

    /** Reports a transfer at most once a second, and at its end. */
    private static final class Progress implements com.jcraft.jsch.SftpProgressMonitor {
        private final String name;
        private final long size;
        private final java.util.function.Consumer<String> sink;
        private long done;
        private long last = System.nanoTime();

        Progress(String name, long size, java.util.function.Consumer<String> sink) {
            this.name = name;
            this.size = size;
            this.sink = sink;
        }

        @Override
        public void init(int op, String src, String dest, long max) {
        }

        @Override
        public boolean count(long bytes) {
            done += bytes;
            if (System.nanoTime() - last > 1_000_000_000L) {
                last = System.nanoTime();
                sink.accept(name + " " + (done * 100 / size) + "% of " + (size >> 20) + " MiB");
            }
            return true;
        }

        @Override
        public void end() {
            sink.accept(name + " 100% of " + (size >> 20) + " MiB");
        }
    }

    private static Map<String, String> remoteHashes(Session session, Set<String> paths) throws SshException {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", "for f; do [ -f \"$f\" ] && sha256sum -- \"$f\"; done; exit 0", "sh"));
        argv.addAll(paths);
        RemoteExec.Result r = RemoteExec.run(session, argv, 60_000);
        Map<String, String> out = new HashMap<>();
        for (String line : r.stdout().split("\n")) {
            int space = line.indexOf("  ");
            if (space == 64) {
                out.put(line.substring(66), line.substring(0, 64));
            }
        }
        return out;
    }

    private static int mode(Path file) throws IOException {
        int mode = 0;
        for (PosixFilePermission p : Files.getPosixFilePermissions(file)) {
            mode |= 1 << (8 - p.ordinal());
        }
        return mode;
    }

    private static void check(RemoteExec.Result r, String what) throws SshException {
        if (r.exitCode() != 0) {
            throw new SshException(what + " failed on the node: " + r.stderr().strip());
        }
    }
}
