package org.runjob.report;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.runjob.json.Json;
import org.runjob.preflight.Cell;
import org.runjob.preflight.Check;
import org.runjob.preflight.NodeReport;
import org.runjob.preflight.PreflightReport;

import tools.jackson.databind.node.ObjectNode;

/**
 * The preflight table (a row per node, a column per check, on a terminal at most
 * {@value #MAX_WIDTH} columns wide, elsewhere every cell in full) followed by every warning and failure in full, and each node's program in full where the
 * table cut it; as JSON, the same with the GPU inventories
 * of the nodes that were probed.
 */
public final class PreflightText {

    /** The table's width at most: a 100-column terminal shows it unwrapped. */
    public static final int MAX_WIDTH = 100;
    private static final String GREEN = "\u001b[32m";
    private static final String YELLOW = "\u001b[33m";
    private static final String RED = "\u001b[31m";
    private static final String RESET = "\u001b[0m";

    private PreflightText() {
    }

    public static void print(PreflightReport report, PrintStream out) {
        print(report, out, false, MAX_WIDTH);
    }

    /**
     * The table, then every warning and failure in full, then the verdict. Columns are as wide as
     * their cells, the widest cut (with "...") until the table fits {@code maxWidth} columns
     * ({@link #MAX_WIDTH} for a terminal; a file or pipe gets {@code Integer.MAX_VALUE}, so nothing
     * is cut); with {@code colour}, ok is green, warn yellow and FAIL red.
     */
    public static void print(PreflightReport report, PrintStream out, boolean colour, int maxWidth) {
        List<String> header = new ArrayList<>(List.of("node"));
        for (Check c : Check.values()) {
            header.add(report.label(c));
        }
        List<List<String>> rows = new ArrayList<>();
        for (NodeReport n : report.nodes()) {
            List<String> row = new ArrayList<>(List.of(n.node()));
            for (Check c : Check.values()) {
                row.add(short_(n.cells().get(c)));
            }
            rows.add(row);
        }
        int[] widths = widths(header, rows, maxWidth);
        out.println(line(header, widths, false));
        for (List<String> row : rows) {
            out.println(line(row, widths, colour));
        }
        details(report).forEach(out::println);
        // what runs on each node (the interpreter behind python3, its version) is worth its full text
        int program = header.indexOf(report.label(Check.PROGRAM));
        for (NodeReport n : report.nodes()) {
            Cell cell = n.cells().get(Check.PROGRAM);
            if (cell != null && cell.status() == Cell.Status.OK && short_(cell).length() > widths[program]) {
                out.println("ok   " + n.node() + " " + report.label(Check.PROGRAM) + ": " + cell.text());
            }
        }
        out.println(report.ok() ? "preflight: ok" : "preflight failed: nothing was started");
        out.flush();
    }

    /** Each column's width: its widest cell, the widest columns narrowed until all fit (never below 4, nor the node names). */
    static int[] widths(List<String> header, List<List<String>> rows, int maxWidth) {
        int[] w = new int[header.size()];
        for (int i = 0; i < w.length; i++) {
            w[i] = header.get(i).length();
            for (List<String> row : rows) {
                w[i] = Math.max(w[i], row.get(i).length());
            }
        }
        while (Arrays.stream(w).sum() + 2 * (w.length - 1) > maxWidth) {
            int widest = 1;
            for (int i = 1; i < w.length; i++) {
                widest = w[i] > w[widest] ? i : widest;
            }
            if (w[widest] <= 4) {
                break;
            }
            w[widest]--;
        }
        return w;
    }

    private static String line(List<String> cells, int[] widths, boolean colour) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            String cell = cells.get(i);
            String text = cell.length() <= widths[i] ? cell : cell.substring(0, Math.max(1, widths[i] - 3)) + "...";
            String padded = String.format("%-" + widths[i] + "s", text);
            if (colour && i > 0) {
                String c = cell.startsWith("ok") ? GREEN : cell.startsWith("warn") ? YELLOW : cell.startsWith("FAIL") ? RED : null;
                if (c != null) {
                    int word = cell.startsWith("warn") ? 4 : cell.startsWith("FAIL") ? 4 : 2;
                    padded = c + padded.substring(0, Math.min(word, padded.length())) + RESET + padded.substring(Math.min(word, padded.length()));
                }
            }
            b.append(i == 0 ? "" : "  ").append(padded);
        }
        return b.toString().stripTrailing();
    }

    /**
     * Only the warnings, one line each ("warn NODE CHECK: TEXT"): what a run of local nodes, which
     * prints no table when all is well, still owes the user.
     */
    public static void printWarnings(PreflightReport report, PrintStream out) {
        details(report).forEach(line -> out.println("runjob: " + line));
        out.flush();
    }

    private static List<String> details(PreflightReport report) {
        List<String> details = new ArrayList<>();
        for (NodeReport n : report.nodes()) {
            for (Check c : Check.values()) {
                Cell cell = n.cells().get(c);
                if (cell.status() == Cell.Status.FAIL || cell.status() == Cell.Status.WARN) {
                    details.add((cell.status() == Cell.Status.FAIL ? "FAIL " : "warn ") + n.node() + " " + report.label(c) + ": " + cell.text());
                }
            }
        }
        return details;
    }

    private static String short_(Cell cell) {
        String text = switch (cell.status()) {
            case OK -> cell.text().equals("ok") ? "ok" : "ok " + cell.text();
            case WARN -> "warn " + cell.text();
            case FAIL -> "FAIL";
            case SKIPPED -> "-";
        };
        return text;
    }

    public static ObjectNode json(PreflightReport report) {
        ObjectNode root = Json.object();
        root.put("ok", report.ok());
        var nodes = root.putArray("nodes");
        for (NodeReport n : report.nodes()) {
            ObjectNode node = nodes.addObject();
            node.put("node", n.node());
            node.put("socket_interface", n.socketInterface().orElse(null));
            ObjectNode checks = node.putObject("checks");
            for (Check c : Check.values()) {
                Cell cell = n.cells().get(c);
                checks.putObject(report.label(c)).put("status", cell.status().name().toLowerCase(Locale.ROOT)).put("detail", cell.text());
            }
        }
        root.set("gpus", GpuTable.json(report.gpus(), Map.of()).get("nodes"));
        return root;
    }
}
