package org.runjob.distribute;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.runjob.agent.Workdirs;
import org.runjob.spec.JobSpec;

/**
 * Ships a job's files into a local node's workdir: each file (or every file of a directory) is
 * copied under its destination name unless a file with the same SHA-256 is already there, through a
 * temporary name and an atomic rename, keeping the executable bit. Destinations never leave the workdir.
 */
public final class LocalDistributor {

    private final Set<Path> done = new HashSet<>();

    /** Ships {@code files} into {@code workdirSpec}; a workdir already shipped to in this run (two nodes, one machine) is skipped. */
    public synchronized Shipped ship(String workdirSpec, List<JobSpec.ShippedFile> files, Map<String, String> env) throws IOException {
        Path workdir = Workdirs.resolve(workdirSpec, env);
        Files.createDirectories(workdir);
        long sent = 0;
        long skipped = 0;
        int filesSent = 0;
        int filesSkipped = 0;
        if (!done.add(workdir)) {
            return Shipped.NOTHING;
        }
        for (FileList.Entry e : FileList.of(files)) {
            Path source = e.source();
            Path target = workdir.resolve(e.destination()).normalize();
            long size = Files.size(source);
            if (Files.isRegularFile(target) && Sha256.of(target).equals(Sha256.ofSource(source))) {
                skipped += size;
                filesSkipped++;
                continue;
            }
            Files.createDirectories(target.getParent());
            Path tmp = target.resolveSibling("." + target.getFileName() + ".runjob-tmp");
            Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            sent += size;
            filesSent++;
        }
        return new Shipped(sent, skipped, filesSent, filesSkipped);
    }
}
