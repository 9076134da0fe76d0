package org.runjob.protocol;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The length-prefixed pieces the binary payloads are made of: a string is its UTF-8 length (an
 * int) and bytes, a list its size and items, a map its size and key/value pairs. A length that
 * points past the payload's end is an {@link IOException}, never a large allocation.
 */
final class Wire {

    private Wire() {
    }

    /** What writes one payload's pieces. */
    interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    /** The bytes {@code writer} writes: the one place a payload is made (a byte array does not fail). */
    static byte[] bytes(Writer writer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static void string(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    static String string(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > in.available()) {
            throw new IOException("string of " + n + " bytes");
        }
        return new String(in.readNBytes(n), StandardCharsets.UTF_8);
    }

    static void list(DataOutputStream out, List<String> items) throws IOException {
        out.writeInt(items.size());
        for (String s : items) {
            string(out, s);
        }
    }

    static List<String> list(DataInputStream in) throws IOException {
        int n = count(in);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(string(in));
        }
        return out;
    }

    static void map(DataOutputStream out, Map<String, String> map) throws IOException {
        out.writeInt(map.size());
        for (Map.Entry<String, String> e : map.entrySet()) {
            string(out, e.getKey());
            string(out, e.getValue());
        }
    }

    static Map<String, String> map(DataInputStream in) throws IOException {
        int n = count(in);
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            map.put(string(in), string(in));
        }
        return map;
    }

    /** A count of items of at least 4 bytes each: never more than the payload can hold. */
    private static int count(DataInputStream in) throws IOException {
        return count(in, 4, "");
    }

    /** A count of items of at least {@code minBytes} each, {@code what} named in the refusal: never more than the payload can hold. */
    static int count(DataInputStream in, int minBytes, String what) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > in.available() / minBytes) {
            throw new IOException("count of " + n + what);
        }
        return n;
    }
}
