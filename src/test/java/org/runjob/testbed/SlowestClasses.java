package org.runjob.testbed;

import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints the ten slowest test classes, with their wall-clock seconds, when a test run ends
 * (registered through META-INF/services), so a run that got slower says where.
 */
public final class SlowestClasses implements TestExecutionListener {

    private static final int SHOWN = 10;
    private final Map<String, Long> started = new ConcurrentHashMap<>();
    private final Map<String, Long> took = new ConcurrentHashMap<>();
    private volatile long planStarted;

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        planStarted = System.nanoTime();
    }

    @Override
    public void executionStarted(TestIdentifier id) {
        if (id.getSource().orElse(null) instanceof ClassSource) {
            started.put(id.getUniqueId(), System.nanoTime());
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        Long start = started.remove(id.getUniqueId());
        if (start != null && id.getSource().orElse(null) instanceof ClassSource c) {
            took.merge(c.getClassName(), System.nanoTime() - start, Long::sum);
        }
    }

    @Override
    public void testPlanExecutionFinished(TestPlan plan) {
        if (took.isEmpty()) {
            return;
        }
        long sum = took.values().stream().mapToLong(Long::longValue).sum();
        StringBuilder out = new StringBuilder(String.format("slowest test classes (%.1f s of classes in %.1f s):%n",
                sum / 1e9, (System.nanoTime() - planStarted) / 1e9));
        took.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())).limit(SHOWN)
                .forEach(e -> out.append(String.format("  %7.1f s  %s%n", e.getValue() / 1e9, e.getKey())));
        System.out.print(out);
        System.out.flush();
    }
}
