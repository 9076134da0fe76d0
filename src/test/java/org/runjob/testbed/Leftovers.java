package org.runjob.testbed;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The processes a test saw start (workers, agents), killed after each test whatever it asserted,
 * so a failing test leaves nothing running for the next one:
 * {@code @RegisterExtension final Leftovers toClean = new Leftovers();}, then {@code toClean.addAll(pids)};
 * a process the test started itself ({@link #add(Process)}) is killed with every descendant it has then.
 */
public final class Leftovers implements AfterEachCallback {

    private final List<Long> pids = new CopyOnWriteArrayList<>();
    private final List<Process> processes = new CopyOnWriteArrayList<>();

    public void add(long pid) {
        pids.add(pid);
    }

    /** A process this test started (a runjob, say): it and its descendants are killed after the test. */
    public Process add(Process p) {
        processes.add(p);
        return p;
    }

    public void addAll(List<Long> more) {
        pids.addAll(more);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        processes.forEach(p -> p.descendants().forEach(ProcessHandle::destroyForcibly));
        processes.forEach(Process::destroyForcibly);
        processes.clear();
        Pids.killAll(pids);
        pids.clear();
    }
}
