package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A WATCH_GPUS request: sample this machine's GPUs every {@code intervalMillis} and send each
 * sample as a SAMPLE frame of {@code gpus} until the channel ends, naming for each of {@code gpus} the runjob
 * run that holds its lease. Answered by one REPLY as soon as sampling is set up.
 */
public record GpuWatch(int intervalMillis, List<Lease.Slot> gpus) {

    /** The shortest interval an agent samples at. */
    public static final int MIN_INTERVAL_MILLIS = 250;

    public GpuWatch {
        if (intervalMillis < MIN_INTERVAL_MILLIS) {
            throw new IllegalArgumentException("a GPU watch samples at most every " + MIN_INTERVAL_MILLIS + " ms, not " + intervalMillis);
        }
        gpus = List.copyOf(gpus);
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeInt(intervalMillis);
            out.writeInt(gpus.size());
            for (Lease.Slot s : gpus) {
                out.writeInt(s.index());
                Wire.string(out, s.bus());
            }
        });
    }

    /** @throws ProtocolException for bytes that are not a WATCH_GPUS request */
    public static GpuWatch decode(byte[] bytes) throws ProtocolException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int interval = in.readInt();
            int n = Wire.count(in, 8, " GPUs");
            List<Lease.Slot> gpus = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                gpus.add(new Lease.Slot(in.readInt(), Wire.string(in)));
            }
            if (in.available() > 0) {
                throw new ProtocolException("a WATCH_GPUS request with " + in.available() + " bytes too many");
            }
            return new GpuWatch(interval, gpus);
        } catch (IOException | IllegalArgumentException e) {
            throw new ProtocolException("a bad WATCH_GPUS request: " + e.getMessage());
        }
    }
}
