package org.runjob.report;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A text table laid out like a printf format ({@code "%-16s %5s  %s"}): each {@code %s} is a
 * column ({@code -} or no number: left-aligned; its number: the column's least width), the text
 * between them the gap. A column is as wide as its widest cell, so a long cell moves the next
 * columns on every row, not only on its own. The last column is not padded and every line loses
 * its trailing blanks. A row of fewer cells than columns ends in a cell that spans the rest (it widens nothing), and
 * {@link #text} puts a line of its own between rows.
 */
public final class Table {

    private static final Pattern COLUMN = Pattern.compile("%(-?)(\\d*)s");

    private record Column(String before, boolean left, int least) {
    }

    private final List<Column> columns = new ArrayList<>();
    /** Rows ({@code List<String>}) and lines of text ({@code String}), in order. */
    private final List<Object> lines = new ArrayList<>();

    private Table(String layout) {
        Matcher m = COLUMN.matcher(layout);
        int at = 0;
        while (m.find()) {
            // a bare %s, as in printf, has no width to align in: left
            columns.add(new Column(layout.substring(at, m.start()), m.group(1).equals("-") || m.group(2).isEmpty(),
                    m.group(2).isEmpty() ? 0 : Integer.parseInt(m.group(2))));
            at = m.end();
        }
        if (columns.isEmpty() || at != layout.length()) {
            throw new IllegalArgumentException("a layout of %s columns with nothing after the last: " + layout);
        }
    }

    /** A table of {@code layout}'s columns, {@code header} its first row. */
    public static Table of(String layout, String... header) {
        Table t = new Table(layout);
        if (header.length != t.columns.size()) {
            throw new IllegalArgumentException(header.length + " headers for " + t.columns.size() + " columns");
        }
        return t.row((Object[]) header);
    }

    /** A row: each cell as {@link String#valueOf}; at most one cell per column. */
    public Table row(Object... cells) {
        if (cells.length == 0 || cells.length > columns.size()) {
            throw new IllegalArgumentException(cells.length + " cells for " + columns.size() + " columns");
        }
        lines.add(Arrays.stream(cells).map(String::valueOf).toList());
        return this;
    }

    /** A line of text between rows, as it is. */
    public Table text(String line) {
        lines.add(line);
        return this;
    }

    /** Every line, the header first. */
    public List<String> lines() {
        int[] widths = columns.stream().mapToInt(Column::least).toArray();
        for (Object line : lines) {
            if (line instanceof List<?> row) {
                int spanning = row.size() < columns.size() ? row.size() - 1 : -1;
                for (int i = 0; i < row.size(); i++) {
                    if (i != spanning) {
                        widths[i] = Math.max(widths[i], ((String) row.get(i)).length());
                    }
                }
            }
        }
        List<String> out = new ArrayList<>();
        for (Object line : lines) {
            if (line instanceof List<?> row) {
                StringBuilder b = new StringBuilder();
                for (int i = 0; i < row.size(); i++) {
                    Column c = columns.get(i);
                    String cell = (String) row.get(i);
                    boolean last = i == row.size() - 1;
                    String pad = " ".repeat(last && (c.left || row.size() < columns.size()) ? 0 : Math.max(0, widths[i] - cell.length()));
                    b.append(c.before).append(c.left ? cell + pad : pad + cell);
                }
                out.add(b.toString().stripTrailing());
            } else {
                out.add((String) line);
            }
        }
        return out;
    }

    public void print(PrintStream out) {
        lines().forEach(out::println);
    }
}
