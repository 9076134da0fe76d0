package org.runjob.agent;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A process's descendants with their state and start time, read from
 * {@code /proc/PID/task/TID/children} (Linux 3.5+): the cost follows the size of the tree, not the
 * number of processes on the machine, so the agent can look every 100 ms. Where those files are
 * missing it falls back to {@link ProcessHandle#descendants()}, which scans all of /proc.
 */
final class ChildTree {

    /** One descendant: its state letter ('Z' for a zombie) and start time in clock ticks since boot (stat field 22). */
    record Proc(long pid, long parent, char state, long startTicks) {
    }

    private ChildTree() {
    }

    /** Every living or zombie descendant of {@code root}, parents before children. */
    static Map<Long, Proc> of(long root) {
        Map<Long, Proc> out = new LinkedHashMap<>();
        if (!Files.isDirectory(Path.of("/proc/self/task"))) {
            ProcessHandle.of(root).ifPresent(h -> h.descendants().forEach(d -> stat(d.pid()).ifPresent(p -> out.put(p.pid(), p))));
            return out;
        }
        Deque<Long> todo = new ArrayDeque<>();
        todo.add(root);
        while (!todo.isEmpty()) {
            long pid = todo.poll();
            for (long child : children(pid)) {
                if (!out.containsKey(child)) {
                    stat(child).ifPresent(p -> {
                        out.put(p.pid(), p);
                        todo.add(p.pid());
                    });
                }
            }
        }
        return out;
    }

    private static long[] children(long pid) {
        java.util.List<Long> kids = new java.util.ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks) {
                try {
                    for (String c : Files.readString(task.resolve("children")).trim().split("\\s+")) {
                        if (!c.isEmpty()) {
                            kids.add(Long.parseLong(c));
                        }
                    }
                } catch (IOException | NumberFormatException e) {
                    // the task ended meanwhile
                }
            }
        } catch (IOException e) {
            // the process ended meanwhile
        }
        return kids.stream().mapToLong(Long::longValue).toArray();
    }

    /** A process's state and start time from /proc/PID/stat, if it still exists. */
    static java.util.Optional<Proc> stat(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return java.util.Optional.of(new Proc(pid, Long.parseLong(f[1]), f[0].charAt(0), Long.parseLong(f[19])));
        } catch (IOException | RuntimeException e) {
            return java.util.Optional.empty();
        }
    }
}
