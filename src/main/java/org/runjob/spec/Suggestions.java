package org.runjob.spec;

import java.util.Collection;
import java.util.Comparator;
import java.util.Locale;
import java.util.Optional;

/** "Did you mean": the known name closest to a misspelt one, if it is close enough to be the intent. */
final class Suggestions {

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
        return levenshtein(w, c);
    }

    /** Insertions, deletions and substitutions that turn {@code a} into {@code b} (two rows of the usual table). */
    static int levenshtein(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }
}
