package org.runjob.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.Optional;
import java.util.function.Supplier;

import org.runjob.agent.gpu.GpuInventory;
import org.runjob.launch.NodeSession;
import org.runjob.launch.NodeStarter;
import org.runjob.node.Cluster;
import org.runjob.node.FanOut;
import org.runjob.node.NodeException;
import org.runjob.preflight.GpuInventories;
import org.runjob.report.GpuTable;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code runjob gpus FILE}: every node's GPUs (index in PCI bus order, model, memory, compute
 * capability, bus id), probed with JCuda on the node. Exit 0 when every node has a CUDA driver and
 * at least one GPU, 3 otherwise (a node without a driver or GPU, or unreachable), 2 for a bad file.
 */
@Command(name = "gpus", mixinStandardHelpOptions = true,
        description = "Show every node's GPUs (model, memory total/free, compute capability, PCI bus id); starts nothing.")
final class GpusCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "FILE", description = "The job file.")
    String file;

    @Mixin
    JobOptions options;

    GpusCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        SpecLoader.Loaded loaded = Jobs.load(io, file, options.sets);
        if (loaded == null) {
            return ExitCode.INVALID;
        }
        JobSpec spec = loaded.spec();
        Map<String, GpuInventory> found = new LinkedHashMap<>();
        try (Cluster cluster = Clusters.of(spec, io.env(), Optional.empty(), io.err())) {
            NodeStarter starter = new NodeStarter(spec, cluster, io.env(), Optional.empty());
            Supplier<GpuInventory> localGpus = GpuInventories.localOnce(io.env());
            try (FanOut fanOut = new FanOut(spec.nodes().size())) {
                fanOut.onEach(spec.nodes(), node -> probe(node, starter, localGpus)).forEach((node, inv) -> found.put(node.name(), inv));
            }
        }
        if (options.output == JobOptions.Output.json) {
            io.out().println(JsonMapper.builder().build().writerWithDefaultPrettyPrinter().writeValueAsString(GpuTable.json(found)));
        } else {
            GpuTable.print(found, io.out());
        }
        io.out().flush();
        boolean all = found.values().stream().allMatch(inv -> !inv.gpus().isEmpty());
        return all ? ExitCode.OK : ExitCode.PREFLIGHT_FAILED;
    }

    private static GpuInventory probe(NodeSpec node, NodeStarter starter, Supplier<GpuInventory> localGpus) {
        if (node.local()) {
            return localGpus.get();
        }
        try {
            starter.reach(node);
            try (NodeSession session = starter.start(node)) {
                session.hello(60_000);
                return session.gpus();
            }
        } catch (NodeException | java.io.IOException e) {
            return GpuInventory.none("unreachable: " + e.getMessage());
        }
    }
}
