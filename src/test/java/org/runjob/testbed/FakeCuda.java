package org.runjob.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The stand-in NVIDIA driver ({@code src/test/native/fakecuda.c}) for machines without a GPU:
 * compiled once per test JVM into {@code target/fakecuda/libcuda.so.1} (with the stand-in NVML,
 * {@code fakenvml.c}, as {@code libnvidia-ml.so.1} beside it), and put in front of a process
 * through {@code LD_LIBRARY_PATH}. JCuda's native library then links against it, so the
 * real probe, JSON, preflight and planning run end to end with GPUs a test chooses.
 */
public final class FakeCuda {

    public static final Path DIR = Path.of("target", "fakecuda").toAbsolutePath();
    private static final Path SOURCE = Path.of("src", "test", "native", "fakecuda.c");
    private static final Path NVML_SOURCE = Path.of("src", "test", "native", "fakenvml.c");
    private static boolean built;

    private FakeCuda() {
    }

    /** Builds the library (once); a machine without a C compiler skips, or fails in CI. */
    public static synchronized Path library() throws IOException {
        Path lib = DIR.resolve("libcuda.so.1");
        if (!built) {
            Testbed.require(Testbed.runs("cc", "--version"), "a C compiler (cc) for the stand-in CUDA driver");
            Files.createDirectories(DIR);
            Testbed.require(Testbed.runs("cc", "-shared", "-fPIC", "-Wall", "-Werror", "-O1", "-o", lib.toString(), SOURCE.toString()),
                    "the stand-in CUDA driver to compile (cc -shared " + SOURCE + ")");
            // the driver's NVML beside it, for the agents' GPU samples (same devices, values from FAKENVML_FILE)
            Path nvml = DIR.resolve("libnvidia-ml.so.1");
            Testbed.require(Testbed.runs("cc", "-shared", "-fPIC", "-Wall", "-Werror", "-O1", "-o", nvml.toString(), NVML_SOURCE.toString()),
                    "the stand-in NVML to compile (cc -shared " + NVML_SOURCE + ")");
            built = true;
        }
        return lib;
    }

    /**
     * This JVM's environment plus the stand-in driver with {@code gpus}: devices separated by
     * ';', each "name|total MiB|used MiB|major.minor|domain:bus:device" (see fakecuda.c).
     */
    public static Map<String, String> env(String gpus) throws IOException {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("LD_LIBRARY_PATH", library().getParent().toString());
        env.put("FAKECUDA_GPUS", gpus);
        return env;
    }
}
