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
 *   <li>One command on the node tells which destinations already hold the same bytes; those are
 *       skipped. Like rsync's quick check, a destination whose size and modification time (to
 *       the second) equal the source's counts as the same without being read; any other
 *       destination that exists is hashed ({@code sha256sum}) and compared with the source's
 *       SHA-256, so a file that was only touched is not sent again.</li>
 *   <li>The rest go over SFTP to a temporary name beside the destination, get the source's
 *       permission bits (the exec bit included) and modification time, and are renamed into
 *       place in one {@code mv} per file, so a reader never sees half a file.</li>
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
        Map<String, String> remote = remoteState(session, targets);
        long sent = 0;
        long skipped = 0;
        int filesSent = 0;
        int filesSkipped = 0;
        List<String> moves = new ArrayList<>();
        Set<String> dirs = new LinkedHashSet<>();
        Map<String, Path> toSend = new LinkedHashMap<>();
        for (Map.Entry<String, Path> t : targets.entrySet()) {
            long size = Files.size(t.getValue());
            String there = remote.get(t.getKey());
            if (SAME.equals(there) || (there != null && Sha256.ofSource(t.getValue()).equals(there))) {
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
                sftp.setMtime(tmp, (int) modified(t.getValue()));
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

    /** What {@link #remoteState} answers for a destination that passed the quick check. */
    private static final String SAME = "same";

    /**
     * Per destination that exists on the node: {@link #SAME} when its size and modification time
     * equal the source's, else its SHA-256. One constant script; sizes, times and paths are its
     * arguments. Without GNU/busybox {@code stat -c}, every file is hashed.
     */
    private static Map<String, String> remoteState(Session session, Map<String, Path> targets) throws SshException, IOException {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", String.join("\n",
                "while [ $# -ge 3 ]; do",
                "  s=$1; m=$2; f=$3; shift 3",
                "  [ -f \"$f\" ] || continue",
                "  if [ \"$(stat -c '%s %Y' -- \"$f\" 2>/dev/null)\" = \"$s $m\" ]; then echo \"same $f\"; else sha256sum -- \"$f\"; fi",
                "done",
                "exit 0"), "sh"));
        for (Map.Entry<String, Path> t : targets.entrySet()) {
            argv.add(Long.toString(Files.size(t.getValue())));
            argv.add(Long.toString(modified(t.getValue())));
            argv.add(t.getKey());
        }
        RemoteExec.Result r = RemoteExec.run(session, argv, 600_000);
        Map<String, String> out = new HashMap<>();
        for (String line : r.stdout().split("\n")) {
            if (line.startsWith(SAME + " ")) {
                out.put(line.substring(SAME.length() + 1), SAME);
            } else if (line.indexOf("  ") == 64) {
                out.put(line.substring(66), line.substring(0, 64));
            }
        }
        return out;
    }

    /** Seconds since the epoch, as {@code stat -c %Y} and SFTP's attributes count them. */
    private static long modified(Path file) throws IOException {
        return Files.getLastModifiedTime(file).to(java.util.concurrent.TimeUnit.SECONDS);
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
