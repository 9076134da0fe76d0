package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The REPLY to FILES: per file of the manifest, in its order, whether the node needs it (false:
 * it holds the same bytes already), or why it takes none (a bad manifest, no room on the disk).
 */
public record FileNeeds(Optional<String> failure, List<Boolean> needed) {

    private static final byte FORMAT = 1;

    public FileNeeds {
        needed = List.copyOf(needed);
    }

    public static FileNeeds of(List<Boolean> needed) {
        return new FileNeeds(Optional.empty(), needed);
    }

    public static FileNeeds failed(String why) {
        return new FileNeeds(Optional.of(why.isEmpty() ? "no reason given" : why), List.of());
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeByte(FORMAT);
            Wire.string(out, failure.orElse(""));
            out.writeInt(needed.size());
            for (boolean n : needed) {
                out.writeBoolean(n);
            }
        });
    }

    /** @throws IllegalArgumentException for bytes that are not an answer to FILES of this format */
    public static FileNeeds decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte format = in.readByte();
            if (format != FORMAT) {
                throw new IllegalArgumentException("FILES answer format " + format + ", expected " + FORMAT);
            }
            String why = Wire.string(in);
            int n = Wire.count(in, 1, " files");
            List<Boolean> needed = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                needed.add(in.readBoolean());
            }
            if (in.available() > 0) {
                throw new IllegalArgumentException("a FILES answer with " + in.available() + " bytes too many");
            }
            return new FileNeeds(why.isEmpty() ? Optional.empty() : Optional.of(why), needed);
        } catch (IOException e) {
            throw new IllegalArgumentException("a truncated FILES answer", e);
        }
    }
}
