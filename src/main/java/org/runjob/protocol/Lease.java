package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The LEASE request and its REPLY, both format byte 1. A request is {@code PICK} (lease the first
 * {@code count} of {@code gpus} that no other run holds, or none), {@code HOLD} (lease each one
 * free) or {@code QUERY} (lease nothing), for run {@code run} of job {@code job}, the GPUs by
 * index and PCI bus id in the order to try. The answer names the GPUs leased, those another run
 * holds (with its holder), those free (a query), or why no lease could be taken safely.
 */
public final class Lease {

    private static final byte FORMAT = 1;

    private Lease() {
    }

    public enum Kind { PICK, HOLD, QUERY }

    /** One GPU to lease: its index on the node and its PCI bus id (the lease file's name). */
    public record Slot(int index, String bus) {
    }

    public record Request(Kind kind, int count, String job, String run, List<Slot> gpus) {

        public Request {
            gpus = List.copyOf(gpus);
        }

        public static Request pick(int count, String job, String run, List<Slot> gpus) {
            return new Request(Kind.PICK, count, job, run, gpus);
        }

        public static Request hold(String job, String run, List<Slot> gpus) {
            return new Request(Kind.HOLD, gpus.size(), job, run, gpus);
        }

        public static Request query(List<Slot> gpus) {
            return new Request(Kind.QUERY, 0, "", "", gpus);
        }

        public byte[] encode() {
            return Wire.bytes(out -> {
                out.writeByte(FORMAT);
                out.writeByte(kind.ordinal());
                out.writeInt(count);
                Wire.string(out, job);
                Wire.string(out, run);
                out.writeInt(gpus.size());
                for (Slot s : gpus) {
                    out.writeInt(s.index());
                    Wire.string(out, s.bus());
                }
            });
        }

        /** @throws IllegalArgumentException for bytes that are not a LEASE request of this format */
        public static Request decode(byte[] bytes) {
            try (DataInputStream in = open(bytes, "LEASE request")) {
                int kind = in.readUnsignedByte();
                if (kind >= Kind.values().length) {
                    throw new IllegalArgumentException("LEASE request of kind " + kind);
                }
                int count = in.readInt();
                String job = Wire.string(in);
                String run = Wire.string(in);
                int n = Wire.count(in, 8, " GPUs");
                List<Slot> gpus = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    gpus.add(new Slot(in.readInt(), Wire.string(in)));
                }
                end(in, "LEASE request");
                return new Request(Kind.values()[kind], count, job, run, gpus);
            } catch (IOException e) {
                throw new IllegalArgumentException("a truncated LEASE request", e);
            }
        }
    }

    /** What the agent answered: the GPUs it leased, those another run holds (index to holder), those free, or why it could not. */
    public record Answer(List<Integer> leased, Map<Integer, String> held, List<Integer> free, Optional<String> error) {

        public Answer {
            leased = List.copyOf(leased);
            held = Collections.unmodifiableMap(new LinkedHashMap<>(held));
            free = List.copyOf(free);
        }

        public static Answer failed(String why) {
            return new Answer(List.of(), Map.of(), List.of(), Optional.of(why.isEmpty() ? "no reason given" : why));
        }

        public byte[] encode() {
            return Wire.bytes(out -> {
                out.writeByte(FORMAT);
                Wire.string(out, error.orElse(""));
                ints(out, leased);
                out.writeInt(held.size());
                for (Map.Entry<Integer, String> e : held.entrySet()) {
                    out.writeInt(e.getKey());
                    Wire.string(out, e.getValue());
                }
                ints(out, free);
            });
        }

        /** @throws IllegalArgumentException for bytes that are not a LEASE answer of this format */
        public static Answer decode(byte[] bytes) {
            try (DataInputStream in = open(bytes, "LEASE answer")) {
                String error = Wire.string(in);
                List<Integer> leased = ints(in);
                int n = Wire.count(in, 8, " held GPUs");
                Map<Integer, String> held = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    held.put(in.readInt(), Wire.string(in));
                }
                List<Integer> free = ints(in);
                end(in, "LEASE answer");
                return new Answer(leased, held, free, error.isEmpty() ? Optional.empty() : Optional.of(error));
            } catch (IOException e) {
                throw new IllegalArgumentException("a truncated LEASE answer", e);
            }
        }

        private static void ints(DataOutputStream out, List<Integer> values) throws IOException {
            out.writeInt(values.size());
            for (int v : values) {
                out.writeInt(v);
            }
        }

        private static List<Integer> ints(DataInputStream in) throws IOException {
            int n = Wire.count(in, 4, " GPUs");
            List<Integer> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(in.readInt());
            }
            return out;
        }
    }

    private static DataInputStream open(byte[] bytes, String what) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        int format = in.readUnsignedByte();
        if (format != FORMAT) {
            throw new IllegalArgumentException(what + " format " + format + ", expected " + FORMAT);
        }
        return in;
    }

    private static void end(DataInputStream in, String what) throws IOException {
        if (in.available() > 0) {
            throw new IllegalArgumentException("a " + what + " with " + in.available() + " bytes too many");
        }
    }
}
