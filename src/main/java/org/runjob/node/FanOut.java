package org.runjob.node;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one way runjob works on many nodes at once (preflight, agent starts, {@code runjob gpus}): a bounded pool of daemon threads (at most
 * {@link #MAX} nodes' blocking work at a time), results in node order. Close it when done.
 */
public final class FanOut implements AutoCloseable {

    /** Nodes worked on at once: blocking IO per node, not CPU, bounds this. */
    public static final int MAX = 32;

    private final ExecutorService pool;

    public FanOut(int nodes) {
        this.pool = Executors.newFixedThreadPool(Math.max(1, Math.min(MAX, nodes)), r -> {
            Thread t = new Thread(r, "node-work");
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs {@code work} for every item, in parallel; waits for all; results in the items' order. */
    public <K, T> Map<K, T> onEach(List<K> items, Function<K, T> work) {
        List<CompletableFuture<T>> futures = new ArrayList<>();
        for (K item : items) {
            futures.add(async(() -> work.apply(item)));
        }
        Map<K, T> out = new LinkedHashMap<>();
        for (int i = 0; i < items.size(); i++) {
            out.put(items.get(i), futures.get(i).join());
        }
        return out;
    }

    private <T> CompletableFuture<T> async(Supplier<T> work) {
        return CompletableFuture.supplyAsync(work, pool);
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
