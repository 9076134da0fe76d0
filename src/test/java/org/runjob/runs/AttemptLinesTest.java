package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.runjob.json.Json;

/** status's goodput line, from an ended run's summary. */
class AttemptLinesTest {

    @Test
    void theGoodputLineSaysWhatItCounts() {
        assertThat(AttemptLines.goodput(Json.read("{\"goodput\": 0.634, \"goodput_basis\": \"steps\", \"redone_steps\": 20.0,"
                + " \"attempts\": [{}, {}]}"))).contains("goodput 0.63: training not redone (20 steps redone), over the run's wall time");
        assertThat(AttemptLines.goodput(Json.read("{\"goodput\": 0.0, \"goodput_basis\": \"running\", \"attempts\": [{}, {}]}")))
                .contains("goodput 0.00: the attempts' running time (no steps reported: redone work not told apart), over the run's wall time");
        assertThat(AttemptLines.goodput(Json.read("{\"goodput\": 1.0, \"goodput_basis\": \"running\", \"attempts\": [{}]}"))).isEmpty();
        assertThat(AttemptLines.goodput(Json.read("{\"attempts\": [{}, {}]}"))).isEmpty();
    }
}
