package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * The HEALTH request, sent before each attempt to every node it will run on: the GPUs the node's
 * workers use (their indices, in PCI bus order) must show no uncorrectable ECC error where
 * nvidia-smi tells, and each of the job's {@code failure.health_check} commands must exit 0 within
 * {@code timeoutMillis} (all together). Answered by one {@link Answer}: done, or failed with the
 * first problem found.
 *
 * @param env the variables the commands run with, over the agent's own (the job's and the node's env, and RUNJOB_NODE)
 */
public record HealthRequest(List<String> commands, List<Integer> gpus, long timeoutMillis, Map<String, String> env) {

    private static final byte FORMAT = 1;

    public HealthRequest {
        commands = List.copyOf(commands);
        gpus = List.copyOf(gpus);
        env = Map.copyOf(env);
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeByte(FORMAT);
            Wire.list(out, commands);
            Wire.list(out, gpus.stream().map(String::valueOf).toList());
            out.writeLong(timeoutMillis);
            Wire.map(out, env);
        });
    }

    /** @throws IllegalArgumentException for bytes that are not a HEALTH payload of this format */
    public static HealthRequest decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte format = in.readByte();
            if (format != FORMAT) {
                throw new IllegalArgumentException("HEALTH payload format " + format + ", expected " + FORMAT);
            }
            List<String> commands = Wire.list(in);
            List<Integer> gpus = Wire.list(in).stream().map(Integer::valueOf).toList();
            long timeout = in.readLong();
            Map<String, String> env = Wire.map(in);
            if (in.available() > 0) {
                throw new IllegalArgumentException("HEALTH payload with " + in.available() + " bytes after its end");
            }
            return new HealthRequest(commands, gpus, timeout, env);
        } catch (IOException | NumberFormatException e) {
            throw new IllegalArgumentException("a truncated or malformed HEALTH payload: " + e.getMessage());
        }
    }
}
