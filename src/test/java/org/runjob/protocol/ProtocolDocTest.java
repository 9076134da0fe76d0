package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/** docs/protocol.md's table of frame types is the catalogue: every type, its id and direction, and nothing else. */
class ProtocolDocTest {

    private static final Pattern ROW = Pattern.compile("(?m)^\\| `([A-Z_]+)` \\| (\\d+) \\| (to agent|to coordinator) \\|");

    @Test
    void theDocsListEveryFrameTypeWithItsIdAndDirection() throws Exception {
        Map<String, String> documented = new LinkedHashMap<>();
        Matcher m = ROW.matcher(Files.readString(Path.of("docs/protocol.md")));
        while (m.find()) {
            documented.put(m.group(1), m.group(2) + " " + m.group(3));
        }
        Map<String, String> catalogue = Arrays.stream(Frame.Type.values()).collect(Collectors.toMap(Enum::name,
                t -> t.code() + " " + (t.direction() == Frame.Direction.TO_AGENT ? "to agent" : "to coordinator"),
                (a, b) -> a, LinkedHashMap::new));
        assertThat(documented).containsExactlyEntriesOf(catalogue);
    }
}
