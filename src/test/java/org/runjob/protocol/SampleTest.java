package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class SampleTest {

    @Test
    void aSampleIsItsSourcesNameANewlineAndItsLine() {
        byte[] payload = Sample.encode("gpus", "{\"time\":\"t\",\"none\":\"kein Treiber – no driver\"}");
        assertThat(new String(payload, StandardCharsets.UTF_8)).isEqualTo("gpus\n{\"time\":\"t\",\"none\":\"kein Treiber – no driver\"}");
        Sample s = Sample.decode(payload);
        assertThat(s.source()).isEqualTo("gpus");
        assertThat(new String(s.line(), StandardCharsets.UTF_8)).isEqualTo("{\"time\":\"t\",\"none\":\"kein Treiber – no driver\"}");
        assertThatThrownBy(() -> Sample.decode("{\"no\":\"name\"}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("a SAMPLE payload without its source's name");
    }
}
