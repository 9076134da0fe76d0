package org.runjob.slurm;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.plan.ShellWords;
import org.runjob.spec.GpuAuthority;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * {@code backend: slurm}: the job is one Slurm allocation ({@code salloc}, one component per node
 * shape) and each node's agent one step of it ({@code srun}); Slurm gives each step its GPUs.
 */
public final class SlurmBackend implements Backend {

    @Override
    public String name() {
        return "slurm";
    }

    @Override
    public Cluster open(JobSpec spec, Map<String, String> env, Consumer<String> progress, BooleanSupplier interrupted) {
        return new SlurmCluster(spec, env, progress, interrupted);
    }

    @Override
    public List<String> notes(JobSpec spec) {
        return SlurmCommands.notes(spec);
    }

    /** The allocation, then one step per node that runs runjob's agent. */
    @Override
    public DryRun dryRun(JobSpec spec) {
        SlurmCommands commands = new SlurmCommands(spec, SlurmCommands.shapesOf(spec, Map.of()));
        List<String> lines = new ArrayList<>();
        Optional<List<String>> hostfile = commands.hostfile();
        hostfile.ifPresent(h -> lines.add("SLURM_HOSTFILE: a file of " + h.size() + " lines: " + String.join(" ", h)));
        lines.add((hostfile.isPresent() ? "SLURM_HOSTFILE=FILE " : "") + ShellWords.join(commands.salloc("runjob-" + spec.name())));
        for (NodeSpec node : spec.nodes()) {
            lines.add(ShellWords.join(commands.step(SlurmCommands.JOB_ID_AT_LAUNCH, node.name(), List.of("sh", "-c", "BOOTSTRAP")))
                    .replace("sh -c BOOTSTRAP", "<runjob's agent bootstrap>"));
        }
        return new DryRun("one allocation, then one step per node that runs runjob's agent (it starts the node's workers)", lines);
    }

    @Override
    public boolean queues() {
        return true;
    }

    /** {@code sbatch --parsable OPTIONS SCRIPT COORDINATOR...}: the allocation as sbatch options, the coordinator in its batch step. */
    @Override
    public Optional<List<String>> queue(JobSpec spec, Path folder, Path script, List<String> coordinator) {
        SlurmCommands commands = new SlurmCommands(spec, SlurmCommands.shapesOf(spec, Map.of()));
        return Optional.of(commands.sbatch("runjob-" + spec.name(), folder, script, coordinator));
    }

    @Override
    public Optional<String> queued(String jobId, Map<String, String> env) {
        String out = SlurmCommands.ask(List.of("squeue", "-h", "-j", jobId, "-o", "%T %r"), SlurmEnv.of(env)).orElse("").trim();
        String first = out.split("\\s+")[0];
        if (!first.matches("[A-Z_]+") || out.contains("Invalid job id")) {
            return Optional.empty(); // gone from the queue, or squeue could not say
        }
        return Optional.of(out.startsWith("PENDING") ? "queued (" + out.substring("PENDING".length()).trim() + ")" : "running");
    }

    @Override
    public Optional<String> cancel(String jobId, boolean now, Map<String, String> env) {
        boolean pending = queued(jobId, env).map(s -> s.startsWith("queued")).orElse(false);
        List<String> argv = now || pending ? List.of("scancel", jobId) : List.of("scancel", "--batch", "--signal=TERM", jobId);
        String out = SlurmCommands.ask(argv, SlurmEnv.of(env)).orElse("scancel did not answer").trim();
        return out.isEmpty() ? Optional.empty() : Optional.of(out);
    }

    @Override
    public GpuAuthority gpus() {
        return GpuAuthority.SCHEDULER_ASSIGNED;
    }
}
