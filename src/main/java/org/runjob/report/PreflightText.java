package org.runjob.report;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

import org.runjob.preflight.Cell;
import org.runjob.preflight.Check;
import org.runjob.preflight.NodeReport;
import org.runjob.preflight.PreflightReport;

import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The preflight table (a row per node, a column per check) followed by every warning and failure
 * in full; as JSON, the same with the GPU inventories of the nodes that were probed.
 */
public final class PreflightText {

    private static final int WIDTH = 26;

    private PreflightText() {
    }

    public static void print(PreflightReport report, PrintStream out) {
        StringBuilder header = new StringBuilder(String.format("%-14s", "node"));
        for (Check c : Check.values()) {
            header.append(String.format(" %-" + WIDTH + "s", c.label()));
        }
        out.println(header.toString().stripTrailing());
        for (NodeReport n : report.nodes()) {
            StringBuilder row = new StringBuilder(String.format("%-14s", n.node()));
            for (Check c : Check.values()) {
                row.append(String.format(" %-" + WIDTH + "s", short_(n.cells().get(c))));
            }
            out.println(row.toString().stripTrailing());
        }
        details(report).forEach(out::println);
        out.println(report.ok() ? "preflight: ok" : "preflight failed: nothing was started");
        out.flush();
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
                    details.add((cell.status() == Cell.Status.FAIL ? "FAIL " : "warn ") + n.node() + " " + c.label() + ": " + cell.text());
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
        return text.length() <= WIDTH ? text : text.substring(0, WIDTH - 3) + "...";
    }

    public static ObjectNode json(PreflightReport report) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("ok", report.ok());
        var nodes = root.putArray("nodes");
        for (NodeReport n : report.nodes()) {
            ObjectNode node = nodes.addObject();
            node.put("node", n.node());
            node.put("socket_interface", n.socketInterface().orElse(null));
            ObjectNode checks = node.putObject("checks");
            for (Check c : Check.values()) {
                Cell cell = n.cells().get(c);
                checks.putObject(c.label()).put("status", cell.status().name().toLowerCase(java.util.Locale.ROOT)).put("detail", cell.text());
            }
        }
        root.set("gpus", GpuTable.json(report.gpus()).get("nodes"));
        return root;
    }
}
