package org.runjob.runs;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.runjob.distribute.FileList;
import org.runjob.json.Json;
import org.runjob.run.QuarantineFile;

/**
 * What {@code runjob submit} sends the master node's {@link HostedStart} on stdin, over SSH:
 * the hosted run's line (secret and node hosts), the job as it runs (its {@code files} relative
 * to it, under {@value #FILES}/), each file (path, executable or not, size, bytes) and the
 * entrypoint's extra arguments, then the coordinator's machine as the quarantine names it (empty
 * when the job quarantines nothing) and the launching machine's quarantine entries in force.
 * Written into the run folder as it arrives: a path that would leave the folder, or a file that
 * exists, is refused.
 */
record Submission(String hosted, List<String> args, String coordinatorMachine, List<QuarantineFile.Entry> quarantine) {

    static final String JOB_FILE = "submitted.yaml";
    static final String FILES = "files";
    private static final int MAX_ARGS = 10_000;

    private static final int MAX_ENTRIES = 100_000;

    static void send(OutputStream to, String hosted, byte[] job, List<FileList.Entry> files, List<String> args) throws IOException {
        send(to, hosted, job, files, args, "", List.of());
    }

    static void send(OutputStream to, String hosted, byte[] job, List<FileList.Entry> files, List<String> args, String coordinatorMachine,
                     List<QuarantineFile.Entry> quarantine) throws IOException {
        DataOutputStream out = new DataOutputStream(to);
        out.writeUTF(hosted);
        out.writeInt(job.length);
        out.write(job);
        out.writeInt(files.size());
        for (FileList.Entry f : files) {
            out.writeUTF(f.destination());
            out.writeBoolean(Files.isExecutable(f.source()));
            out.writeLong(Files.size(f.source()));
            Files.copy(f.source(), out);
        }
        out.writeInt(args.size());
        for (String a : args) {
            out.writeUTF(a);
        }
        out.writeUTF(coordinatorMachine);
        out.writeInt(quarantine.size());
        for (QuarantineFile.Entry e : quarantine) {
            out.writeUTF(Json.compact(e.json()));
        }
        out.flush();
    }

    /** Reads one submission from {@code in}, writing the job and its files into {@code folder}. */
    static Submission receive(InputStream from, Path folder) throws IOException {
        DataInputStream in = new DataInputStream(from);
        String hosted = in.readUTF();
        int jobBytes = in.readInt();
        if (jobBytes < 0 || jobBytes > 64 << 20) {
            throw new IOException("a job of " + jobBytes + " bytes");
        }
        HostedStart.write(folder.resolve(JOB_FILE), in.readNBytes(jobBytes), 0600);
        int count = in.readInt();
        Path files = folder.resolve(FILES);
        for (int i = 0; i < count; i++) {
            String rel = in.readUTF();
            boolean executable = in.readBoolean();
            long size = in.readLong();
            Path p = Path.of(rel);
            if (rel.isEmpty() || p.isAbsolute() || p.normalize().startsWith("..") || !p.normalize().equals(p) || size < 0) {
                throw new IOException("refused a file named " + rel);
            }
            Path target = files.resolve(p);
            mkdirs(folder, target.getParent());
            try (OutputStream w = Files.newOutputStream(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                copy(in, w, size);
            }
            Set<PosixFilePermission> mode = PosixFilePermissions.fromString(executable ? "rwx------" : "rw-------");
            Files.setPosixFilePermissions(target, mode);
        }
        int n = in.readInt();
        if (n < 0 || n > MAX_ARGS) {
            throw new IOException(n + " arguments");
        }
        List<String> args = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            args.add(in.readUTF());
        }
        String machine = in.readUTF();
        int entries = in.readInt();
        if (entries < 0 || entries > MAX_ENTRIES) {
            throw new IOException(entries + " quarantine entries");
        }
        List<QuarantineFile.Entry> quarantine = new ArrayList<>();
        for (int i = 0; i < entries; i++) {
            String json = in.readUTF();
            try {
                QuarantineFile.Entry.of(Json.read(json)).ifPresent(quarantine::add);
            } catch (RuntimeException e) {
                // a damaged entry is skipped, as in the quarantine's own directory
            }
        }
        return new Submission(hosted, args, machine, quarantine);
    }

    /** Creates {@code dir} and what leads to it below {@code top}, mode 700, never through a symlink. */
    static void mkdirs(Path top, Path dir) throws IOException {
        Path rel = top.relativize(dir);
        Path at = top;
        for (Path part : rel) {
            at = at.resolve(part);
            if (Files.isSymbolicLink(at)) {
                throw new IOException(at + " is a symlink");
            }
            if (!Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(at, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
        }
    }

    private static void copy(DataInputStream in, OutputStream out, long size) throws IOException {
        byte[] buf = new byte[1 << 16];
        long left = size;
        while (left > 0) {
            int n = in.read(buf, 0, (int) Math.min(buf.length, left));
            if (n < 0) {
                throw new IOException("the submission ended inside a file");
            }
            out.write(buf, 0, n);
            left -= n;
        }
    }
}
