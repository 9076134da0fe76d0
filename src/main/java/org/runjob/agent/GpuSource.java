package org.runjob.agent;

import java.util.List;
import java.util.function.Consumer;

import org.runjob.observe.Source;
import org.runjob.observe.Sources;
import org.runjob.protocol.WorkerStart;

/** The built-in observation source {@code gpus}: the node's GPUs through NVML ({@link GpuSampler}). */
final class GpuSource implements Source {

    @Override
    public String name() {
        return Sources.GPUS;
    }

    @Override
    public void start(long intervalMillis, List<Worker> workers, Consumer<String> emit) {
        GpuSampler.start(intervalMillis, workers.stream().map(w -> new WorkerStart(w.rank(), List.of(), w.env(), "")).toList(), emit);
    }
}
