package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NVML is looked for where the loader looks, without loading it: LD_LIBRARY_PATH, the loader's cache, the default directories. */
class NvmlPresenceTest {

    @TempDir
    Path tmp;

    @Test
    void theLibraryIsFoundInLdLibraryPathTheCacheOrADefaultDirectoryAndNowhereElse() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        Path driver = Files.createDirectories(tmp.resolve("driver"));
        Files.writeString(driver.resolve("libnvidia-ml.so.1"), "");
        Path noCache = tmp.resolve("no-cache");
        Path cache = Files.write(tmp.resolve("ld.so.cache"), ("glibc-ld.so.cache1.1\0libc.so.6\0/lib/x86_64-linux-gnu/libc.so.6\0"
                + "libnvidia-ml.so.1\0/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\0").getBytes());
        Path otherCache = Files.write(tmp.resolve("other.cache"), "glibc-ld.so.cache1.1\0libc.so.6\0libnvidia-ml.so\0".getBytes());

        assertThat(NvmlPresence.possible(empty + "::" + driver, noCache, List.of())).isTrue();
        assertThat(NvmlPresence.possible(null, cache, List.of())).isTrue();
        assertThat(NvmlPresence.possible(null, noCache, List.of(empty.toString(), driver.toString()))).isTrue();
        // libnvidia-ml.so (the development link) is not the .so.1 the agent loads
        assertThat(NvmlPresence.possible(empty.toString(), otherCache, List.of(empty.toString()))).isFalse();
        assertThat(NvmlPresence.possible(null, noCache, List.of())).isFalse();
        assertThat(NvmlPresence.possible("", noCache, List.of(tmp.resolve("missing").toString()))).isFalse();
    }
}
