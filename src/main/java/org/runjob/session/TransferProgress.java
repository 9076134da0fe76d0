package org.runjob.session;

import java.util.function.Consumer;

/** Reports a transfer of a large file at most once a second, and at its end. */
final class TransferProgress {

    /** Files at least this big report their progress. */
    static final long MIN_BYTES = 8L << 20;

    private final String name;
    private final long size;
    private final Consumer<String> sink;
    private long done;
    private long last = System.nanoTime();

    TransferProgress(String name, long size, Consumer<String> sink) {
        this.name = name;
        this.size = size;
        this.sink = size >= MIN_BYTES ? sink : line -> { };
    }

    void add(long bytes) {
        done += bytes;
        if (done == size) {
            sink.accept(name + " 100% of " + (size >> 20) + " MiB");
        } else if (System.nanoTime() - last > 1_000_000_000L) {
            last = System.nanoTime();
            sink.accept(name + " " + (done * 100 / size) + "% of " + (size >> 20) + " MiB");
        }
    }
}
