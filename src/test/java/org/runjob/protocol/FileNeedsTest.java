package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class FileNeedsTest {

    @Test
    void theNeedsOfEveryFileAndAFailureComeBackAsTheyWent() {
        FileNeeds some = FileNeeds.of(List.of(true, false, true));
        assertThat(FileNeeds.decode(some.encode())).isEqualTo(some);
        assertThat(some.encode()).hasSize(1 + 4 + 4 + 3);
        FileNeeds none = FileNeeds.failed("no space left in workdir /w: needs 3.0 MiB, 1.0 MiB free");
        assertThat(FileNeeds.decode(none.encode())).isEqualTo(new FileNeeds(Optional.of("no space left in workdir /w: needs 3.0 MiB, 1.0 MiB free"),
                List.of()));
        assertThat(FileNeeds.failed("").failure()).contains("no reason given");
    }

    @Test
    void anotherFormatACountPastTheEndAndExtraBytesAreRefused() {
        byte[] bytes = FileNeeds.of(List.of(true, true)).encode();
        byte[] other = bytes.clone();
        other[0] = 2;
        assertThatThrownBy(() -> FileNeeds.decode(other)).hasMessage("FILES answer format 2, expected 1");
        assertThatThrownBy(() -> FileNeeds.decode(Arrays.copyOf(bytes, bytes.length - 1))).hasMessage("a truncated FILES answer");
        assertThatThrownBy(() -> FileNeeds.decode(Arrays.copyOf(bytes, bytes.length + 2))).hasMessage("a FILES answer with 2 bytes too many");
    }
}
