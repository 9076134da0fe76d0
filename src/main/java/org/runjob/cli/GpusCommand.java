package org.runjob.cli;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.json.Json;
import org.runjob.node.Cluster;
import org.runjob.node.FanOut;
import org.runjob.node.NodeException;
import org.runjob.preflight.GpuPick;
import org.runjob.preflight.MachineGpus;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.Lease;
import org.runjob.report.GpuTable;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Launch;
import org.runjob.session.NodeSession;
import org.runjob.session.NodeStarter;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

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
        // a job whose nodes are a count asks about the nodes its allocation holds, never placeholder names
        Optional<Jobs.Resolved> resolved = Jobs.resolve(io, loaded.spec());
        if (resolved.isEmpty()) {
            return ExitCode.PREFLIGHT_FAILED;
        }
        JobSpec spec = resolved.get().spec();
        Map<String, GpuInventory> found = new LinkedHashMap<>();
        Map<String, Map<Integer, String>> leases = new LinkedHashMap<>();
        Map<String, String> leaseErrors = new LinkedHashMap<>();
        try (Cluster cluster = Launch.open(resolved.get().backend(), spec, io)) {
            NodeStarter starter = new NodeStarter(spec, cluster, io.env(), Optional.empty());
            MachineGpus machineGpus = new MachineGpus();
            try (FanOut fanOut = new FanOut(spec.nodes().size())) {
                fanOut.onEach(spec.nodes(), node -> probe(node, starter, machineGpus)).forEach((node, p) -> {
                    found.put(node.name(), p.gpus());
                    leases.put(node.name(), p.leases());
                    p.leaseError().ifPresent(e -> leaseErrors.put(node.name(), e));
                });
            }
        }
        if (options.output == JobOptions.Output.json) {
            io.out().println(Json.pretty(GpuTable.json(found, leases)));
        } else {
            GpuTable.print(found, leases, io.out());
        }
        io.out().flush();
        // GPUs are no use to a run that cannot lease them: say where, and why
        leaseErrors.forEach((node, why) -> io.err().println("runjob: " + node + ": GPU leases cannot be taken, so runs that use its GPUs"
                + " would fail or run unleased: " + why));
        boolean all = found.values().stream().allMatch(inv -> !inv.gpus().isEmpty());
        return all && leaseErrors.isEmpty() ? ExitCode.OK : ExitCode.PREFLIGHT_FAILED;
    }

    /** A node's GPUs, those of them another run holds (index to who), and why leases cannot be taken there. */
    private record Probed(GpuInventory gpus, Map<Integer, String> leases, Optional<String> leaseError) {

        Probed(GpuInventory gpus) {
            this(gpus, Map.of(), Optional.empty());
        }

        static Probed of(GpuInventory gpus, Lease.Answer a) {
            return new Probed(gpus, a.error().isPresent() ? Map.of() : a.held(), a.error());
        }
    }

    private static Probed probe(NodeSpec node, NodeStarter starter, MachineGpus machineGpus) {
        try {
            starter.reach(node);
            try (NodeSession session = starter.start(node)) {
                GpuInventory inv = machineGpus.of(session, session.hello(60_000));
                return inv.gpus().isEmpty() ? new Probed(inv) : Probed.of(inv, session.lease(Lease.Request.query(GpuPick.slots(inv.gpus()))));
            }
        } catch (NodeException | IOException e) {
            return new Probed(GpuInventory.none("unreachable: " + e.getMessage()));
        }
    }
}
