package org.runjob.agent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.runjob.protocol.AgentOptions;
import org.runjob.protocol.Handshake;
import org.runjob.protocol.NodeFacts;

/**
 * The agent's checks of its node's workdir, in order; the first failure is reported.
 *
 * <ol>
 *   <li>Before anything is created, every part of the workdir's path that exists is judged as
 *       it is, link or not ({@link Trust#beforeCreating}): owned by root or this user, and sticky
 *       where others can write. So a symlink another user planted on the way is never followed.</li>
 *   <li>The workdir is created when missing, one directory at a time.</li>
 *   <li>Trust, as OpenSSH's StrictModes: the workdir and its {@code .runjob} are owned by this
 *       user and writable by nobody else; every directory above the workdir is owned by root or
 *       this user and, when others can write it, has the sticky bit ({@code /tmp}). Otherwise
 *       someone else could plant code the job runs.</li>
 *   <li>A random token in {@code .runjob/id} (published with a hard link, so racing nodes agree on
 *       one): nodes that report the same token share the workdir (NFS home, say).</li>
 *   <li>For a run in a directory of its own ({@code --run-dir}, the default), that directory
 *       ({@code WORKDIR/runs/RUN}) is made and judged as {@code .runjob} is; such runs take no lock.</li>
 *   <li>For a run in the workdir itself ({@code runs_share_workdir}), the run lock ({@link #lock}):
 *       held by this agent until it exits (the kernel drops it whatever ends the agent). Another
 *       run's lock still held refuses this run, naming it; agents of the same run on a shared
 *       workdir share one lock.</li>
 * </ol>
 */
final class WorkdirGuard {

    private static final Path RUNJOB = Path.of(".runjob");

    private WorkdirGuard() {
    }

    /** The facts for HELLO; {@code env} is the agent's environment (HOME, PATH). */
    static NodeFacts check(AgentOptions options, Map<String, String> env) {
        Map<String, String> f = new LinkedHashMap<>();
        f.put(NodeFacts.PROTOCOL, Integer.toString(Handshake.VERSION));
        options.jar().ifPresent(j -> f.put(NodeFacts.JAR, j));
        f.put(NodeFacts.JAVA, Integer.toString(Runtime.version().feature()));
        f.put(NodeFacts.PID, Long.toString(ProcessHandle.current().pid()));
        f.put(NodeFacts.USER, System.getProperty("user.name"));
        f.put(NodeFacts.HOST, ProcInfo.hostname());
        machine().ifPresent(m -> f.put(NodeFacts.MACHINE, m));
        if (!options.report().isEmpty()) {
            f.put(NodeFacts.VISIBLE_DEVICES, env.getOrDefault("CUDA_VISIBLE_DEVICES", ""));
            for (String name : options.report()) {
                if (env.containsKey(name)) {
                    f.put(NodeFacts.variable(name), env.get(name));
                }
            }
        }
        if (options.workdir().isEmpty()) {
            return new NodeFacts(f);
        }
        Path dir = Workdirs.resolve(options.workdir().get(), env);
        f.put(NodeFacts.WORKDIR, dir.toString());
        Optional<String> problem = prepare(dir, options, f);
        Path runDir = options.runDir().map(d -> Workdirs.resolve(d, env)).orElse(dir);
        if (problem.isEmpty() && options.runDir().isPresent()) {
            problem = runDir(dir, runDir);
        }
        problem.ifPresent(p -> f.put(NodeFacts.WORKDIR_ERROR, p));
        try {
            f.put(NodeFacts.FREE_BYTES, Long.toString(Files.getFileStore(dir).getUsableSpace()));
        } catch (IOException e) {
            // unknown: preflight warns
        }
        return new NodeFacts(f);
    }

    /** The kernel's boot id and this process's network namespace, when both can be read. */
    private static Optional<String> machine() {
        try {
            return Optional.of(Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip() + " "
                    + Files.readSymbolicLink(Path.of("/proc/self/ns/net")));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Optional<String> prepare(Path dir, AgentOptions options, Map<String, String> f) {
        Optional<String> untrusted = Trust.beforeCreating(dir);
        if (untrusted.isPresent()) {
            return untrusted;
        }
        try {
            create(dir.toAbsolutePath());
        } catch (IOException e) {
            return Optional.of("cannot create " + dir + ": " + reason(e));
        }
        untrusted = Trust.ofWorkdir(dir);
        if (untrusted.isPresent()) {
            return untrusted;
        }
        Path meta = dir.resolve(RUNJOB);
        untrusted = ownDirectory(meta, "rwx------");
        if (untrusted.isPresent()) {
            return untrusted;
        }
        if (!Files.isWritable(dir)) {
            return Optional.of("not writable: " + dir);
        }
        try {
            f.put(NodeFacts.TOKEN, token(meta));
        } catch (IOException e) {
            return Optional.of("cannot write " + meta.resolve("id") + ": " + reason(e));
        }
        if (options.runId().isPresent() && options.runDir().isEmpty()) {
            lock(meta, options, f).ifPresent(m -> f.put(NodeFacts.LOCK_ERROR, m));
        }
        return Optional.empty();
    }

    /**
     * The run's own directory ({@code WORKDIR/runs/RUN}), made when missing: inside the trusted
     * workdir, every part of it owned by this user, writable by nobody else and no symlink. Runs
     * in directories of their own take no run lock: they do not meet.
     */
    private static Optional<String> runDir(Path workdir, Path given) {
        Path base = workdir.toAbsolutePath().normalize();
        Path run = given.toAbsolutePath().normalize();
        if (!run.startsWith(base) || run.equals(base)) {
            return Optional.of("the run's directory " + run + " is not inside the workdir " + base);
        }
        for (Path p = base.resolve(base.relativize(run).getName(0)); ; p = p.resolve(run.getName(p.getNameCount()))) {
            // at most 755 (the umask may take more away): umask 002 would make it group-writable, refused
            Optional<String> untrusted = ownDirectory(p, "rwxr-xr-x");
            if (untrusted.isPresent() || p.equals(run)) {
                return untrusted;
            }
        }
    }

    /**
     * A directory of runjob's in the trusted workdir: made with {@code mode} when missing, never
     * through a symlink at its name; then it must be no symlink, this user's, and writable by nobody else.
     */
    private static Optional<String> ownDirectory(Path p, String mode) {
        try {
            if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(p)) {
                Files.createDirectory(p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(mode)));
            }
        } catch (FileAlreadyExistsException e) {
            // another node of a shared workdir made it meanwhile: judged below
        } catch (IOException e) {
            return Optional.of("cannot create " + p + ": " + reason(e));
        }
        return Files.isSymbolicLink(p) ? Optional.of(p + " is a symlink; runjob never writes through one: remove it") : Trust.ofOwnDirectory(p);
    }

    /** Creates {@code dir} and its missing parents, top down, none through a symlink at its own name. */
    private static void create(Path dir) throws IOException {
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (dir.getParent() != null) {
            create(dir.getParent());
        }
        try {
            Files.createDirectory(dir);
        } catch (FileAlreadyExistsException e) {
            // another node of a shared workdir made it meanwhile; Trust judges what is there
        }
    }

    private static String token(Path meta) throws IOException {
        Path id = meta.resolve("id");
        if (Files.isRegularFile(id, LinkOption.NOFOLLOW_LINKS)) {
            String t = Files.readString(id, StandardCharsets.US_ASCII).strip();
            if (t.matches("[0-9a-f]{32}")) {
                return t;
            }
        }
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        String mine = HexFormat.of().formatHex(random);
        Path tmp = meta.resolve("id." + mine);
        Files.writeString(tmp, mine + "\n", StandardCharsets.US_ASCII, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        try {
            Files.createLink(id, tmp);
            return mine;
        } catch (FileAlreadyExistsException e) {
            return Files.readString(id, StandardCharsets.US_ASCII).strip();
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** The run lock's channel, kept open (so held) until the agent exits. */
    private static FileChannel held; // guarded by WorkdirGuard.class

    /**
     * Takes this run's lock ({@code .runjob/run-ID.lock}, or finds a sibling agent of the same run
     * holding it: a shared workdir), then looks at every other run's lock: one still held is a
     * run in progress, and this run is refused naming it; one no longer held is left over from a
     * run that ended (or was killed) and is removed.
     */
    private static synchronized Optional<String> lock(Path meta, AgentOptions options, Map<String, String> f) {
        // the gate makes taking this run's lock and looking at the others one step: of two runs that start
        // together, the first through it wins and the second sees it (each taking its own lock first and
        // then looking refused both), and a holder's text is written before anyone can look at it
        try (FileChannel gate = FileChannel.open(meta.resolve("gate.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS); FileLock passage = gate.lock()) {
            return lockRun(meta, options, f);
        } catch (IOException e) {
            return Optional.empty(); // no locking on this file system (an NFS without lockd): runs are not serialised
        }
    }

    private static Optional<String> lockRun(Path meta, AgentOptions options, Map<String, String> f) {
        String run = options.runId().get();
        Path mine = meta.resolve("run-" + run + ".lock");
        try {
            FileChannel ch = FileChannel.open(mine, StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            if (ch.tryLock() != null) {
                held = ch;
                String text = "run=" + run + "\njob=" + options.job().orElse("?") + "\nuser=" + f.get(NodeFacts.USER)
                        + "\nhost=" + f.get(NodeFacts.HOST) + "\npid=" + f.get(NodeFacts.PID) + "\nsince=" + Instant.now() + "\n";
                ch.truncate(0);
                ch.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)), 0);
            } else {
                ch.close(); // a sibling agent of this run holds it: the workdir is shared
            }
            try (DirectoryStream<Path> locks = Files.newDirectoryStream(meta, "run-*.lock")) {
                for (Path other : locks) {
                    if (other.equals(mine)) {
                        continue;
                    }
                    try (FileChannel o = FileChannel.open(other, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                        FileLock l = o.tryLock();
                        if (l != null) {
                            Files.deleteIfExists(other); // left over: its run is over
                            continue;
                        }
                    } catch (NoSuchFileException e) {
                        continue;
                    }
                    Map<String, String> o = owner(other);
                    String name = other.getFileName().toString();
                    // the kernel names a holder on this machine; the file's text one on another host of a shared workdir
                    Optional<Long> pid = LockHolder.pid(other);
                    String who = pid.isPresent() ? LockHolder.describe(pid.get()).replaceFirst("\\)$", ", pid " + pid.get() + ")")
                            : "run " + o.getOrDefault("run", name.substring("run-".length(), name.length() - ".lock".length())) + " of job "
                            + o.getOrDefault("job", "?") + " (user " + o.getOrDefault("user", "?") + " on " + o.getOrDefault("host", "?")
                            + ", pid " + o.getOrDefault("pid", "?") + ", since " + o.getOrDefault("since", "?") + ")";
                    if (held != null) {
                        // a refused run lets go at once (still inside the gate): its sibling agents of a shared
                        // workdir must find the winner's lock alone, or both runs would be refused
                        held.close();
                        held = null;
                        Files.deleteIfExists(mine);
                    }
                    return Optional.of("workdir " + meta.getParent() + " is in use by " + who + "; runs that share a workdir"
                            + " (runs_share_workdir: true) run one at a time: wait for it to end, leave runs_share_workdir out (each run"
                            + " then works in a directory of its own), or give this job another workdir (--set workdir=DIR)");
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // no locking on this file system (an NFS without lockd): runs are not serialised
        }
    }

    /** Frees this agent's run lock: every process of the run on this node is gone. */
    static synchronized void release() {
        if (held != null) {
            try {
                held.close();
            } catch (IOException e) {
                // the kernel drops it at exit anyway
            }
            held = null;
        }
    }

    /** The KEY=VALUE lines a run lock holds (empty until its holder wrote them). */
    private static Map<String, String> owner(Path file) {
        Map<String, String> out = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    out.put(line.substring(0, eq), line.substring(eq + 1));
                }
            }
        } catch (IOException e) {
            // not written yet
        }
        return out;
    }

    static String reason(IOException e) {
        String m = e.getMessage();
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileSystemException fse && fse.getReason() != null) {
            return fse.getReason();
        }
        return m == null ? e.getClass().getSimpleName() : m;
    }
}
