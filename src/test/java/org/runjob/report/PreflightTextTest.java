package org.runjob.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import org.junit.jupiter.api.Test;
import org.runjob.preflight.Cell;
import org.runjob.preflight.Check;
import org.runjob.preflight.NodeReport;
import org.runjob.preflight.PreflightReport;

/** The preflight table fits 100 columns on a terminal (elsewhere nothing is cut), keeps failures in full below it, and colours its words on a terminal. */
class PreflightTextTest {

    static PreflightReport report() {
        Map<Check, Cell> v100 = new EnumMap<>(Check.class);
        v100.put(Check.LOGIN, Cell.ok("root@202.201.252.102:30430"));
        v100.put(Check.JAVA, Cell.ok("17"));
        v100.put(Check.WORKDIR, Cell.ok("2 sent (7 MiB), 0 kept; workdir shared by v100, a30: shipped once"));
        v100.put(Check.DISK, Cell.warn("812 MiB free"));
        v100.put(Check.PROGRAM, Cell.ok("python3"));
        v100.put(Check.ENVIRONMENT, Cell.ok("ok"));
        v100.put(Check.GPUS, Cell.ok("2 x Tesla V100-PCIE-16GB"));
        v100.put(Check.RENDEZVOUS, Cell.ok("listens :29522 via eth0"));
        Map<Check, Cell> a30 = new EnumMap<>(v100);
        a30.put(Check.LOGIN, Cell.ok("root@202.201.252.101:22"));
        a30.put(Check.RENDEZVOUS, Cell.fail("cannot reach 202.201.252.102:29522: Connection refused"));
        return new PreflightReport(List.of(new NodeReport("v100", v100, Optional.of("eth0")), new NodeReport("a30", a30, Optional.empty())),
                OptionalInt.empty(), Map.of(), "202.201.252.102");
    }

    static String print(boolean colour) {
        return print(colour, PreflightText.MAX_WIDTH);
    }

    static String print(boolean colour, int width) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PreflightText.print(report(), new PrintStream(b, true, StandardCharsets.UTF_8), colour, width);
        return b.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theTableFitsAHundredColumnsAndDetailsFollowInFull() {
        String out = print(false);
        List<String> lines = out.lines().toList();
        assertThat(lines.get(0)).startsWith("node  ssh  ").contains("rendezvous");
        assertThat(lines.subList(0, 3)).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(100));
        assertThat(lines.get(1)).startsWith("v100  ok root@").contains("ok 17").contains("warn 812 ...").contains("ok python3");
        assertThat(lines.get(2)).startsWith("a30   ok root@2...  ok 17  ").endsWith("  FAIL");
        assertThat(lines.subList(3, lines.size())).containsExactly("warn v100 disk: 812 MiB free", "warn a30 disk: 812 MiB free",
                "FAIL a30 rendezvous: cannot reach 202.201.252.102:29522: Connection refused", "preflight failed: nothing was started");
    }

    @Test
    void notOnATerminalNoCellIsCut() {
        List<String> lines = print(false, Integer.MAX_VALUE).lines().toList();
        assertThat(lines.get(1)).isEqualTo("v100  ok root@202.201.252.102:30430  ok 17  "
                + "ok 2 sent (7 MiB), 0 kept; workdir shared by v100, a30: shipped once  warn 812 MiB free  ok python3  ok   "
                + "ok 2 x Tesla V100-PCIE-16GB  ok listens :29522 via eth0");
        assertThat(lines).noneMatch(l -> l.contains("..."));
    }

    @Test
    void onATerminalOkWarnAndFailAreColoured() {
        String out = print(true);
        assertThat(out).contains("\u001b[32mok\u001b[0m 17").contains("\u001b[33mwarn\u001b[0m 812 ...").contains("\u001b[31mFAIL\u001b[0m");
        assertThat(out.lines().skip(3)).noneMatch(l -> l.contains("\u001b["));
    }
}
