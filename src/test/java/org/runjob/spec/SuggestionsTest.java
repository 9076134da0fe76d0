package org.runjob.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** "Did you mean": the distance it is built on, and which names it offers. */
class SuggestionsTest {

    @Test
    void theDistanceCountsInsertionsDeletionsAndSubstitutions() {
        assertThat(Suggestions.levenshtein("kitten", "sitting")).isEqualTo(3);
        assertThat(Suggestions.levenshtein("", "abc")).isEqualTo(3);
        assertThat(Suggestions.levenshtein("abc", "")).isEqualTo(3);
        assertThat(Suggestions.levenshtein("flaw", "lawn")).isEqualTo(2);
        assertThat(Suggestions.levenshtein("same", "same")).isZero();
    }

    @Test
    void aCloseNameIsOfferedASwapCountsAsOneEditAndAFarOneIsNot() {
        List<String> keys = List.of("host", "port", "user", "gpus", "workdir");
        assertThat(Suggestions.closest("hots", keys)).contains("host");
        assertThat(Suggestions.closest("HOST", keys)).contains("host");
        assertThat(Suggestions.closest("wrokdir", keys)).contains("workdir");
        assertThat(Suggestions.closest("workdirectory", keys)).isEmpty();
        assertThat(Suggestions.closest("xy", keys)).isEmpty();
    }
}
