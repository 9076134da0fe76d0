package org.runjob.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TableTest {

    @Test
    void cellsWithinTheLeastWidthsLineUpAsPrintfWould() {
        Table t = Table.of("%-6s %4s  %s", "node", "rank", "last line").row("a", 0, "hello").row("b", 12, "");
        assertThat(t.lines()).containsExactly(
                "node   rank  last line",
                "a         0  hello",
                "b        12");
        assertThat(t.lines().get(1)).isEqualTo(String.format("%-6s %4s  %s", "a", 0, "hello"));
    }

    @Test
    void aLongCellWidensItsColumnOnEveryRow() {
        Table t = Table.of("%-4s %3s  %s", "node", "n", "x").row("gpu-node-17", 1, "y").row("b", 100, "z");
        assertThat(t.lines()).containsExactly(
                "node          n  x",
                "gpu-node-17   1  y",
                "b           100  z");
    }

    @Test
    void aShortRowsLastCellSpansTheRestAndTextLinesWidenNothing() {
        Table t = Table.of("%-4s %5s  %-6s %s", "node", "index", "model", "free")
                .row("a", "-", "no GPU: the driver is not loaded on this node")
                .text("a line of its own, longer than any column")
                .row("b", 0, "H200", "139 GiB");
        assertThat(t.lines()).containsExactly(
                "node index  model  free",
                "a        -  no GPU: the driver is not loaded on this node",
                "a line of its own, longer than any column",
                "b        0  H200   139 GiB");
    }

    @Test
    void aRightAlignedLastColumnIsPaddedOnItsLeft() {
        assertThat(Table.of("%-3s %6s", "a", "dur").row("x", "1.5 s").row("y", "120 s").lines())
                .containsExactly("a      dur", "x    1.5 s", "y    120 s");
    }

    @Test
    void aLayoutOrRowThatDoesNotFitIsRefused() {
        assertThatThrownBy(() -> Table.of("%-3s %s", "one")).hasMessage("1 headers for 2 columns");
        assertThatThrownBy(() -> Table.of("%s |", "a")).hasMessageContaining("nothing after the last");
        assertThatThrownBy(() -> Table.of("%s", "a").row("b", "c")).hasMessage("2 cells for 1 columns");
    }
}
