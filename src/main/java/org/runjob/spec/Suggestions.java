package org.runjob.spec;

import java.util.Collection;
import java.util.Comparator;
import java.util.Locale;
import java.util.Optional;

import org.apache.commons.text.similarity.LevenshteinDistance;

/** "Did you mean": the known name closest to a misspelt one, if it is close enough to be the intent. */
final class Suggestions {

    private static final LevenshteinDistance DISTANCE = new LevenshteinDistance(3);

    private Suggestions() {
    }

    /**
     * The candidate within edit distance (a swap of neighbours counting as one) 0 (names up to 2 characters), 1 (up to 4), 2 (up to 8) or 3 of
     * {@code wrong}, compared case-insensitively; ties go to the candidate listed first.
     */
    static Optional<String> closest(String wrong, Collection<String> candidates) {
        String w = wrong.toLowerCase(Locale.ROOT);
        int limit = w.length() <= 2 ? 0 : w.length() <= 4 ? 1 : w.length() <= 8 ? 2 : 3;
        return candidates.stream()
                .filter(c -> distance(w, c) <= limit)
                .min(Comparator.comparingInt(c -> distance(w, c)));
    }

    /** Levenshtein distance, except that two swapped neighbours ("hots" for "host") count as one edit. */
    private static int distance(String w, String candidate) {
        String c = candidate.toLowerCase(Locale.ROOT);
        if (w.length() == c.length() && w.length() > 1) {
            for (int i = 0; i + 1 < w.length(); i++) {
                if (w.charAt(i) != c.charAt(i)) {
                    String swapped = w.substring(0, i) + w.charAt(i + 1) + w.charAt(i) + w.substring(i + 2);
                    if (swapped.equals(c)) {
                        return 1;
                    }
                    break;
                }
            }
        }
        int d = DISTANCE.apply(w, c);
        return d < 0 ? Integer.MAX_VALUE : d;
    }
}
