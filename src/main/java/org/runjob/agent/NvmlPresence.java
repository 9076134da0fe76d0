package org.runjob.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether the dynamic loader could find NVML ({@value GpuSampler#LIBRARY}) here, judged without
 * loading anything: a directory of {@code LD_LIBRARY_PATH}, the loader's cache
 * ({@code /etc/ld.so.cache}, which names every library it lists) or a default library directory
 * holds it. Loading JNA only to learn that a node has no driver cost each agent about 0.15 CPU-s
 * (JNA extracts and loads its native library first); a node this says no to skips it. A library
 * the loader would find by another way (an {@code LD_PRELOAD}, an rpath) is not seen.
 */
final class NvmlPresence {

    /** The loader's default directories, and the multiarch ones Debian and Ubuntu install drivers into. */
    static final List<String> DEFAULT_DIRS = List.of("/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/lib/x86_64-linux-gnu",
            "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu");

    private NvmlPresence() {
    }

    /** True when NVML may be loadable in this process (its LD_LIBRARY_PATH, the system's cache and directories). */
    static boolean possible() {
        return possible(System.getenv("LD_LIBRARY_PATH"), Path.of("/etc/ld.so.cache"), DEFAULT_DIRS);
    }

    /** The same, from {@code ldLibraryPath} (null: unset), the loader's {@code cache} and {@code dirs}. */
    static boolean possible(String ldLibraryPath, Path cache, List<String> dirs) {
        if (ldLibraryPath != null) {
            for (String dir : ldLibraryPath.split(":")) {
                if (!dir.isEmpty() && Files.exists(Path.of(dir, GpuSampler.LIBRARY))) {
                    return true;
                }
            }
        }
        if (inCache(cache)) {
            return true;
        }
        return dirs.stream().anyMatch(d -> Files.exists(Path.of(d, GpuSampler.LIBRARY)));
    }

    /** The cache lists the library by name (its entries' strings are in the file as they are). */
    private static boolean inCache(Path cache) {
        try {
            if (!Files.isRegularFile(cache) || Files.size(cache) > 64L << 20) {
                return false;
            }
            return new String(Files.readAllBytes(cache), StandardCharsets.ISO_8859_1).contains(GpuSampler.LIBRARY);
        } catch (IOException e) {
            return true; // unread: let the loader decide
        }
    }
}
