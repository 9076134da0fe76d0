package org.runjob.run;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code --ranks}: ranks and ranges as the plan prints them, {@code 0-3,7}. Empty means every rank.
 * {@link #parse} reads the text; {@link #outside} names the ranks a job of that world size lacks.
 */
public record RankSelection(Set<Integer> ranks) {

    public RankSelection {
        ranks = Set.copyOf(ranks);
    }

    /** @throws IllegalArgumentException naming the part that is no rank or range */
    public static RankSelection parse(List<String> parts) {
        Set<Integer> out = new TreeSet<>();
        for (String part : parts) {
            String p = part.strip();
            try {
                int dash = p.indexOf('-', 1);
                if (dash > 0) {
                    int from = Integer.parseInt(p.substring(0, dash));
                    int to = Integer.parseInt(p.substring(dash + 1));
                    if (from < 0 || to < from) {
                        throw new IllegalArgumentException("--ranks: '" + p + "' is no range (FROM-TO, FROM <= TO)");
                    }
                    for (int r = from; r <= to; r++) {
                        out.add(r);
                    }
                } else {
                    int r = Integer.parseInt(p);
                    if (r < 0) {
                        throw new NumberFormatException();
                    }
                    out.add(r);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--ranks: '" + p + "' is no rank or range (e.g. --ranks 0-3,7)");
            }
        }
        return new RankSelection(out);
    }

    /** Why this selection does not fit a job of {@code worldSize} ranks, if it does not. */
    public Optional<String> outside(int worldSize) {
        List<Integer> missing = ranks.stream().filter(r -> r >= worldSize).sorted().toList();
        if (missing.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("--ranks: rank" + (missing.size() == 1 ? " " : "s ") + String.join(", ", missing.stream().map(String::valueOf).toList())
                + (missing.size() == 1 ? " is" : " are") + " not in this job (world size " + worldSize + ": ranks 0-" + (worldSize - 1) + ")");
    }
}
