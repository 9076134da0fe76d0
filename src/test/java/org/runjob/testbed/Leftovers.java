package org.runjob.testbed;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The processes a test saw start (workers, agents), killed after each test whatever it asserted,
 * so a failing test leaves nothing running for the next one:
 * {@code @RegisterExtension final Leftovers toClean = new Leftovers();}, then {@code toClean.addAll(pids)}.
 */
public final class Leftovers implements AfterEachCallback {

    private final List<Long> pids = new CopyOnWriteArrayList<>();

    public void add(long pid) {
        pids.add(pid);
    }

    public void addAll(List<Long> more) {
        pids.addAll(more);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Pids.killAll(pids);
        pids.clear();
    }
}
