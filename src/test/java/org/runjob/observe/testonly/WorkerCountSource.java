package org.runjob.observe.testonly;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.runjob.observe.Source;

/**
 * An observation source that lives only in the test sources, registered by one service line: each
 * sample says how many workers the node has, their ranks, and a count of samples so far.
 */
public final class WorkerCountSource implements Source {

    @Override
    public String name() {
        return "testonly_workers";
    }

    @Override
    public void start(long intervalMillis, List<Worker> workers, Consumer<String> emit) {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "testonly-source");
            t.setDaemon(true);
            return t;
        });
        String ranks = String.join(",", workers.stream().map(w -> Integer.toString(w.rank())).toList());
        long[] n = new long[1];
        timer.scheduleAtFixedRate(() -> emit.accept("{\"time\":\"" + Instant.now() + "\",\"workers\":" + workers.size() + ",\"ranks\":[" + ranks
                + "],\"sample\":" + ++n[0] + "}"), 0, intervalMillis, TimeUnit.MILLISECONDS);
    }
}
