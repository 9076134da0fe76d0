package org.runjob.runtime;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The cgroup a scheduler confines a worker's agent to (a Slurm step's), which a container's
 * processes are to stay under so that the step's memory and device limits, accounting and
 * cleanup reach them.
 *
 * @param version 1 (a controller hierarchy each; also a hybrid host) or 2 (one unified tree)
 * @param path    the path in that hierarchy: on cgroup v1, the memory controller's when the step
 *                has one (where its memory limit and accounting are), else the freezer's (where
 *                its processes are tracked)
 */
public record Cgroup(int version, String path) {

    public Cgroup {
        Objects.requireNonNull(path, "path");
    }

    /**
     * The step's cgroup in {@code procSelfCgroup} (the lines of {@code /proc/self/cgroup}): the
     * path {@code step} finds a match in (Slurm's {@code /job_ID/step_ID}); empty when none does, so
     * a container is never put under a cgroup that is not the step's.
     */
    public static Optional<Cgroup> of(List<String> procSelfCgroup, Pattern step) {
        Map<String, String> v1 = new LinkedHashMap<>();
        String unified = null;
        for (String line : procSelfCgroup) {
            String[] f = line.split(":", 3);
            if (f.length != 3) {
                continue;
            }
            if (f[0].equals("0") && f[1].isEmpty()) {
                unified = f[2];
            } else {
                for (String controller : f[1].split(",")) {
                    v1.put(controller, f[2]);
                }
            }
        }
        if (!v1.isEmpty()) {
            return Stream.of(v1.get("memory"), v1.get("freezer")).filter(p -> p != null && step.matcher(p).find()).findFirst()
                    .map(p -> new Cgroup(1, p));
        }
        return unified != null && step.matcher(unified).find() ? Optional.of(new Cgroup(2, unified)) : Optional.empty();
    }
}
