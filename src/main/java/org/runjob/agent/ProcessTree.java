package org.runjob.agent;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * A worker and everything it started: the members of its process group (the worker runs as a
 * session and group leader, so pgid = its pid), its descendants, and every process that carries
 * the worker's unique {@link #TOKEN_VARIABLE} in its environment (which finds a grandchild that
 * left the group with setsid and was orphaned when its parent exited). Processes are found by pid,
 * group and token, never by name, so another job's processes are never touched.
 */
public final class ProcessTree {

    /** Set by the agent in every worker's environment, with a value unique to that worker. */
    public static final String TOKEN_VARIABLE = "RUNJOB_WORKER_ID";

    private final long leader;
    private final String token;
    private final Set<Long> seen = new LinkedHashSet<>();

    /** @param token the worker's {@link #TOKEN_VARIABLE} value, or null when there is none */
    public ProcessTree(long leaderPid, String token) {
        this.leader = leaderPid;
        this.token = token;
    }

    public long leader() {
        return leader;
    }

    /** Live members now: the group, the leader's descendants, and any process seen before that still lives. */
    public Set<ProcessHandle> members() {
        Set<Long> pids = new LinkedHashSet<>(groupMembers(leader));
        if (token != null) {
            pids.addAll(carrying(TOKEN_VARIABLE + "=" + token));
        }
        ProcessHandle.of(leader).ifPresent(h -> {
            pids.add(leader);
            h.descendants().forEach(d -> pids.add(d.pid()));
        });
        pids.addAll(seen);
        Set<ProcessHandle> live = new LinkedHashSet<>();
        for (long pid : pids) {
            ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(h -> !isZombie(pid)).ifPresent(live::add);
        }
        // remember descendants while their parent lives: a grandchild that calls setsid stays ours
        live.forEach(h -> seen.add(h.pid()));
        seen.removeIf(pid -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true));
        return live;
    }

    public boolean isEmpty() {
        return members().isEmpty();
    }

    /** SIGTERM to every member. */
    public void terminate() {
        members().forEach(ProcessHandle::destroy);
    }

    /** SIGKILL to every member. */
    public void kill() {
        members().forEach(ProcessHandle::destroyForcibly);
    }

    /** Pids whose process group is {@code pgid}, from /proc (empty where there is no /proc). */
    public static Set<Long> groupMembers(long pgid) {
        Set<Long> out = new LinkedHashSet<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path dir : dirs) {
                stat(dir).ifPresent(fields -> {
                    if (fields.length > 2 && Long.parseLong(fields[2]) == pgid) {
                        out.add(Long.parseLong(dir.getFileName().toString()));
                    }
                });
            }
        } catch (IOException e) {
            // no /proc: descendants alone
        }
        return out;
    }

    /** Pids whose environment holds exactly {@code entry} ("NAME=value"), from /proc/PID/environ. */
    static Set<Long> carrying(String entry) {
        Set<Long> out = new LinkedHashSet<>();
        byte[] needle = (entry + "\0").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path dir : dirs) {
                long pid = Long.parseLong(dir.getFileName().toString());
                if (pid == self) {
                    continue;
                }
                try {
                    byte[] env = Files.readAllBytes(dir.resolve("environ"));
                    if (startsEntry(env, needle)) {
                        out.add(pid);
                    }
                } catch (IOException | RuntimeException e) {
                    // gone, or not ours to read
                }
            }
        } catch (IOException e) {
            // no /proc
        }
        return out;
    }

    private static boolean startsEntry(byte[] env, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= env.length; i++) {
            if (i > 0 && env[i - 1] != 0) {
                continue;
            }
            for (int j = 0; j < needle.length; j++) {
                if (env[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static boolean isZombie(long pid) {
        return stat(Path.of("/proc", Long.toString(pid))).map(f -> f.length > 0 && f[0].equals("Z")).orElse(false);
    }

    /** Fields of /proc/PID/stat after the command name: state, ppid, pgrp, session, ... */
    private static Optional<String[]> stat(Path dir) {
        try {
            String s = Files.readString(dir.resolve("stat"));
            int close = s.lastIndexOf(')');
            return close < 0 ? Optional.empty() : Optional.of(s.substring(close + 2).split(" "));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
