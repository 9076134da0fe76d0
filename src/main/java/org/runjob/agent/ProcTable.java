package org.runjob.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * One reading of /proc: for every process its state, process group and {@link ProcessTree#TOKEN_VARIABLE}
 * value. Reading it once and asking it about every worker costs one scan per check, not one per worker.
 * Where there is no /proc it is empty (descendants alone are then tracked).
 */
public final class ProcTable {

    private record Row(char state, long pgid, String token) {
    }

    private static final byte[] TOKEN_PREFIX = (ProcessTree.TOKEN_VARIABLE + "=").getBytes(StandardCharsets.UTF_8);

    private final Map<Long, Row> rows;

    private ProcTable(Map<Long, Row> rows) {
        this.rows = rows;
    }

    public static ProcTable read() {
        Map<Long, Row> rows = new HashMap<>();
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path dir : dirs) {
                long pid = Long.parseLong(dir.getFileName().toString());
                Row row = row(dir, pid != self);
                if (row != null) {
                    rows.put(pid, row);
                }
            }
        } catch (IOException e) {
            // no /proc
        }
        return new ProcTable(rows);
    }

    /** A process's row from /proc/PID (its token when {@code withToken} and readable), or null when it is gone. */
    private static Row row(Path dir, boolean withToken) {
        try {
            String stat = Files.readString(dir.resolve("stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            String token = null;
            if (withToken) {
                try {
                    token = token(Files.readAllBytes(dir.resolve("environ")));
                } catch (IOException e) {
                    // not ours to read: no token
                }
            }
            return new Row(f[0].charAt(0), Long.parseLong(f[2]), token);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Pids in process group {@code pgid}. */
    public Set<Long> inGroup(long pgid) {
        Set<Long> out = new LinkedHashSet<>();
        rows.forEach((pid, r) -> {
            if (r.pgid() == pgid) {
                out.add(pid);
            }
        });
        return out;
    }

    /** Pids whose environment sets {@link ProcessTree#TOKEN_VARIABLE} to {@code token}. */
    public Set<Long> carrying(String token) {
        Set<Long> out = new LinkedHashSet<>();
        rows.forEach((pid, r) -> {
            if (token.equals(r.token())) {
                out.add(pid);
            }
        });
        return out;
    }

    /** A zombie has exited and only waits to be reaped: it can be neither signalled nor counted as running. */
    public boolean zombie(long pid) {
        Row r = rows.get(pid);
        return r != null && r.state() == 'Z';
    }

    /** True when {@code pid} runs (exists and is no zombie), read afresh. */
    public static boolean running(long pid) {
        if (!ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            return false;
        }
        Row r = row(Path.of("/proc", Long.toString(pid)), false);
        return r == null || r.state() != 'Z';
    }

    /** The value of the token variable in a NUL-separated environment block, or null. */
    private static String token(byte[] env) {
        int start = 0;
        for (int i = 0; i <= env.length; i++) {
            if (i == env.length || env[i] == 0) {
                int len = i - start;
                if (len > TOKEN_PREFIX.length && regionMatches(env, start, TOKEN_PREFIX)) {
                    return new String(env, start + TOKEN_PREFIX.length, len - TOKEN_PREFIX.length, StandardCharsets.UTF_8);
                }
                start = i + 1;
            }
        }
        return null;
    }

    private static boolean regionMatches(byte[] env, int at, byte[] prefix) {
        for (int j = 0; j < prefix.length; j++) {
            if (env[at + j] != prefix[j]) {
                return false;
            }
        }
        return true;
    }
}
