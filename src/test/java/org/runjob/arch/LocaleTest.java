package org.runjob.arch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.report.GpuTable;

/** Numbers runjob prints read the same in every locale: a German one printed "0,4s" and "16,0 GiB". */
class LocaleTest {

    /** A format of a number with a fraction ({@code %.1f}, {@code %f}, {@code %e}) in a String.format or formatted call. */
    private static final Pattern FORMAT = Pattern.compile("(String\\.format\\((?!Locale)[^;]*\"[^\"]*%[-0-9.]*[fe][^\"]*\")"
            + "|(\"[^\"]*%[-0-9.]*[fe][^\"]*\"\\.formatted\\()");

    @Test
    void noFractionIsFormattedInTheDefaultLocale() throws Exception {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                List<String> lines = Files.readAllLines(f);
                for (int i = 0; i < lines.size(); i++) {
                    Matcher m = FORMAT.matcher(lines.get(i));
                    if (m.find()) {
                        found.add(f + ":" + (i + 1) + ": " + lines.get(i).strip());
                    }
                }
            }
        }
        assertThat(found).as("give Locale.ROOT").isEmpty();
    }

    @Test
    void aGermanLocalePrintsTheSameTable() {
        Locale before = Locale.getDefault();
        Locale.setDefault(Locale.GERMANY);
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            GpuTable.print(Map.of("box", new GpuInventory(List.of(new Gpu(0, "V100", 16L << 30, 15L << 29, 7, 0, "0000:3b:00")), 1, Optional.empty())),
                    Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8));
            assertThat(out.toString(StandardCharsets.UTF_8)).contains("16.0 GiB    7.5 GiB").doesNotContain(",0 GiB");
        } finally {
            Locale.setDefault(before);
        }
    }
}
