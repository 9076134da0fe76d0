package org.runjob.distribute;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.runjob.spec.JobSpec;

/**
 * A job's {@code files} as single files: a file lands under its destination name, a directory's
 * files under the directory's name with their relative paths. A destination that would leave the
 * workdir ({@code ..}, an absolute path) is refused.
 */
public final class FileList {

    /** One file to ship: where it is here, and its path relative to the workdir ('/'-separated). */
    public record Entry(Path source, String destination) {
    }

    private FileList() {
    }

    public static List<Entry> of(List<JobSpec.ShippedFile> files) throws IOException {
        List<Entry> out = new ArrayList<>();
        for (JobSpec.ShippedFile f : files) {
            boolean dir = Files.isDirectory(f.source());
            List<Path> sources;
            try (Stream<Path> s = dir ? Files.walk(f.source()) : Stream.of(f.source())) {
                sources = s.filter(Files::isRegularFile).sorted().toList();
            }
            for (Path source : sources) {
                String rel = dir ? f.destination() + "/" + f.source().relativize(source).toString().replace('\\', '/') : f.destination();
                Path p = Path.of(rel);
                if (p.isAbsolute() || p.normalize().startsWith("..")) {
                    throw new IOException(source + " would land outside the workdir");
                }
                out.add(new Entry(source, rel));
            }
        }
        return out;
    }
}
