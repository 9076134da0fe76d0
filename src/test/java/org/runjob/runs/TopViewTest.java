package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class TopViewTest {

    @Test
    void jsonGivesAWholeStepAsAnIntegerAndTheRateAsANumberWithItsUnit() {
        TopView.Row row = new TopView.Row(0, "h1", "running", List.of(), Optional.of(1200.0), Optional.of(0.25),
                Optional.of(new TopView.Rate(4.0, "step/s", 2)), Optional.of(3L), Optional.empty());
        TopView.Row half = new TopView.Row(1, "h2", "running", List.of(), Optional.of(2.5), Optional.empty(),
                Optional.of(new TopView.Rate(812.25, "/s", 1)), Optional.empty(), Optional.empty());
        assertThat(TopView.json(List.of(row, half)).toString()).isEqualTo("[{\"rank\":0,\"node\":\"h1\",\"state\":\"running\",\"gpus\":[],"
                + "\"step\":1200,\"step_time_s\":0.25,\"rate\":4.0,\"rate_unit\":\"step/s\",\"last_output_age_s\":3,\"straggler\":null},"
                + "{\"rank\":1,\"node\":\"h2\",\"state\":\"running\",\"gpus\":[],\"step\":2.5,\"step_time_s\":null,\"rate\":812.25,\"rate_unit\":\"/s\","
                + "\"last_output_age_s\":null,\"straggler\":null}]");
        assertThat(TopView.text(List.of(row, half))).anySatisfy(l -> assertThat(l).contains("4.00 step/s")).anySatisfy(l -> assertThat(l)
                .contains("812.3/s"));
    }
}
