package org.runjob.logs;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Worker lines on runjob's stdout, each prefixed {@code [node/rank]} (stderr lines
 * {@code [node/rank:err]}), coloured per node on a terminal unless NO_COLOR is set, restricted to
 * the ranks asked for with {@code --ranks} (all ranks are still recorded in the run folder).
 */
public final class Console {

    private static final String[] COLOURS = {"\u001b[36m", "\u001b[33m", "\u001b[35m", "\u001b[32m", "\u001b[34m", "\u001b[91m"};
    private static final String RESET = "\u001b[0m";

    private final OutputStream out;
    private final boolean colour;
    private final Set<Integer> ranks;
    private final Map<String, String> colours = new HashMap<>();
    private final Map<byte[], byte[]> coloured = new IdentityHashMap<>();

    /** @param ranks the ranks to show; empty shows every rank */
    public Console(OutputStream out, boolean colour, Set<Integer> ranks) {
        this.out = out;
        this.colour = colour;
        this.ranks = Set.copyOf(ranks);
    }

    /** Writes {@code prefix}, the line slice and a newline, unless the rank is filtered out. */
    void line(String node, int rank, byte[] prefix, byte[] buf, int off, int len) throws IOException {
        if (!ranks.isEmpty() && !ranks.contains(rank)) {
            return;
        }
        out.write(colour ? coloured.computeIfAbsent(prefix, p -> colourOf(node, p)) : prefix);
        out.write(buf, off, len);
        out.write('\n');
    }

    private byte[] colourOf(String node, byte[] prefix) {
        String c = colours.computeIfAbsent(node, n -> COLOURS[colours.size() % COLOURS.length]);
        return (c + new String(prefix, StandardCharsets.UTF_8) + RESET).getBytes(StandardCharsets.UTF_8);
    }

    void flush() throws IOException {
        out.flush();
    }
}
