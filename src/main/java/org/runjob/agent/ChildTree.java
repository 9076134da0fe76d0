package org.runjob.agent;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A process's descendants with their state and start time, read from
 * {@code /proc/PID/task/TID/children} (Linux 3.5+): the cost follows the size of the tree, not the
 * number of processes on the machine, so the agent can look every 100 ms. Where those files are
 * missing it falls back to {@link ProcessHandle#descendants()}, which scans all of /proc.
 */
final class ChildTree {

    private ChildTree() {
    }

    /** Every living or zombie descendant of {@code root}, parents before children. */
    static Map<Long, ProcInfo.Stat> of(long root) {
        Map<Long, ProcInfo.Stat> out = new LinkedHashMap<>();
        if (!Files.isDirectory(Path.of("/proc/self/task"))) {
            ProcessHandle.of(root).ifPresent(h -> h.descendants().forEach(d -> ProcInfo.stat(d.pid()).ifPresent(p -> out.put(p.pid(), p))));
            return out;
        }
        Deque<Long> todo = new ArrayDeque<>();
        todo.add(root);
        while (!todo.isEmpty()) {
            long pid = todo.poll();
            for (long child : children(pid)) {
                if (!out.containsKey(child)) {
                    ProcInfo.stat(child).ifPresent(p -> {
                        out.put(p.pid(), p);
                        todo.add(p.pid());
                    });
                }
            }
        }
        return out;
    }

    private static long[] children(long pid) {
        List<Long> kids = new ArrayList<>();
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

}
