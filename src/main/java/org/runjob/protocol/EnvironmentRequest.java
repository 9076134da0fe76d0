package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The ENVIRONMENT request: activate a node's environment, run its setup when due, and say what the
 * workers' program is there ({@link EnvironmentReply}). Sent once per node in preflight, after its
 * files are shipped.
 *
 * @param program     the entrypoint's program (argv[0]) as the job file names it
 * @param interpreter {@code venv}, {@code conda}, {@code python} or empty, with {@code interpreterValue}
 * @param setupKey    the setup's content key (hex): an unchanged key skips it; empty without setup
 * @param setup       {@link Setup#CHECK} reports whether setup is due and runs nothing
 * @param shipped     whether the job's files were shipped: a relative {@code source} script missing
 *                    then is an error; before (a {@code check}) it is skipped
 * @param env         the variables the environment is activated with, over the agent's own (the job's and the node's env)
 */
public record EnvironmentRequest(String program, String interpreter, String interpreterValue, List<String> modules, List<String> sources,
                                 List<String> setupCommands, long setupTimeoutMillis, String setupKey, Setup setup, boolean shipped,
                                 Map<String, String> env, Optional<ContainerStart> container) {

    private static final byte FORMAT = 1;

    /** Whether setup runs: when due, always, or never (only says whether it is due). */
    public enum Setup { WHEN_DUE, FORCE, CHECK }

    public EnvironmentRequest {
        Objects.requireNonNull(program, "program");
        modules = List.copyOf(modules);
        sources = List.copyOf(sources);
        setupCommands = List.copyOf(setupCommands);
        env = Map.copyOf(env);
        Objects.requireNonNull(container, "container");
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeByte(FORMAT);
            Wire.string(out, program);
            Wire.string(out, interpreter);
            Wire.string(out, interpreterValue);
            Wire.list(out, modules);
            Wire.list(out, sources);
            Wire.list(out, setupCommands);
            out.writeLong(setupTimeoutMillis);
            Wire.string(out, setupKey);
            out.writeByte(setup.ordinal());
            out.writeBoolean(shipped);
            Wire.map(out, env);
            out.writeBoolean(container.isPresent());
            if (container.isPresent()) {
                container.get().encode(out);
            }
        });
    }

    /** @throws IllegalArgumentException for bytes that are not an ENVIRONMENT payload of this format */
    public static EnvironmentRequest decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte format = in.readByte();
            if (format != FORMAT) {
                throw new IllegalArgumentException("ENVIRONMENT payload format " + format + ", expected " + FORMAT);
            }
            String program = Wire.string(in);
            String interpreter = Wire.string(in);
            String value = Wire.string(in);
            List<String> modules = Wire.list(in);
            List<String> sources = Wire.list(in);
            List<String> setup = Wire.list(in);
            long timeout = in.readLong();
            String key = Wire.string(in);
            int mode = in.readByte();
            if (mode < 0 || mode >= Setup.values().length) {
                throw new IllegalArgumentException("ENVIRONMENT payload with setup mode " + mode);
            }
            boolean shipped = in.readBoolean();
            Map<String, String> env = Wire.map(in);
            Optional<ContainerStart> container = in.readBoolean() ? Optional.of(ContainerStart.decode(in)) : Optional.empty();
            return new EnvironmentRequest(program, interpreter, value, modules, sources, setup, timeout, key, Setup.values()[mode], shipped,
                    env, container);
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated ENVIRONMENT payload", e);
        }
    }
}
