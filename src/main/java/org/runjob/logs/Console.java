package org.runjob.logs;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
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

    /** @param ranks the ranks to show; empty shows every rank */
    public Console(OutputStream out, boolean colour, Set<Integer> ranks) {
        this.out = out;
        this.colour = colour;
        this.ranks = Set.copyOf(ranks);
    }

    void line(String node, int rank, boolean stderr, byte[] prefixed, byte[] prefix) throws IOException {
        if (!ranks.isEmpty() && !ranks.contains(rank)) {
            return;
        }
        if (colour) {
            String c = colours.computeIfAbsent(node, n -> COLOURS[colours.size() % COLOURS.length]);
            out.write((c + new String(prefix, StandardCharsets.UTF_8) + RESET).getBytes(StandardCharsets.UTF_8));
            out.write(prefixed, prefix.length, prefixed.length - prefix.length);
        } else {
            out.write(prefixed);
        }
    }

    void flush() throws IOException {
        out.flush();
    }
}
