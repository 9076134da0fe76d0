package org.runjob.slurm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import org.runjob.node.BatchQueue;
import org.runjob.plan.ShellWords;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * Slurm's batch queue: a run is one {@code sbatch} job whose batch step is its coordinator, a
 * sweep one job array; how a job stands is read from {@code scontrol show job}, and
 * {@code scancel} stops it.
 */
final class SlurmQueue implements BatchQueue {

    static final SlurmQueue INSTANCE = new SlurmQueue();
    private static final String DEPENDENCY = "--dependency=";

    private SlurmQueue() {
    }

    /** {@code slurm.login_check}. */
    @Override
    public LoginCheck loginCheck(JobSpec spec) {
        return spec.backend().settings() instanceof SlurmSettings s ? s.loginCheck() : LoginCheck.REFUSE;
    }

    @Override
    public String loginCheckKey() {
        return "slurm.login_check";
    }

    /** {@code SLURM_RESTART_COUNT} of the batch step's environment. */
    @Override
    public Optional<Integer> restarts(Map<String, String> env) {
        return SlurmEnv.restartCount(env).map(Integer::parseInt);
    }

    /** {@code SLURM_ARRAY_TASK_ID}: the index Slurm gives each task of a job array. */
    @Override
    public String arrayTaskVariable() {
        return "SLURM_ARRAY_TASK_ID";
    }

    /**
     * {@code sbatch --parsable OPTIONS SCRIPT COORDINATOR...}: the allocation as sbatch options, the
     * coordinator in its batch step. A layout that needs a hostfile gets it as {@code folder/hostfile},
     * named to sbatch by {@code env SLURM_HOSTFILE=...}. Nodes given as a count keep off the Slurm
     * nodes among {@code avoid} ({@code --exclude}).
     */
    @Override
    public List<String> submit(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid,
                               Map<String, String> env) throws IOException {
        SlurmCommands commands = queued(spec, env);
        List<String> exclude = SlurmAddress.nodesOf(avoid);
        List<String> sbatch = commands.sbatch("runjob-" + spec.name(), comment(spec, folder), folder, script, coordinator, exclude);
        return withHostfile(commands, folder, sbatch);
    }

    /** The job's comment, what squeue -o %k and sacct show of it: "runjob:JOB/RUN_ID", or "runjob:JOB/sweep-ID" of a sweep. */
    static String comment(JobSpec spec, Path folder) {
        return "runjob:" + spec.name() + "/" + folder.getFileName();
    }

    /**
     * {@code sbatch --parsable --array=0-N%K ...}: {@link #submit}'s allocation as one job array;
     * empty for a heterogeneous job (Slurm runs no arrays of those). Each task's output is
     * {@code folder/slurm-ARRAYID_TASK.out}.
     */
    @Override
    public Optional<List<String>> submitArray(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid,
                                              int size, Optional<Integer> maxParallel, Map<String, String> env) throws IOException {
        SlurmCommands commands = queued(spec, env);
        if (commands.heterogeneous()) {
            return Optional.empty();
        }
        List<String> sbatch = commands.sbatchArray("runjob-" + spec.name(), comment(spec, folder), folder, script, coordinator,
                SlurmAddress.nodesOf(avoid), size, maxParallel);
        return Optional.of(withHostfile(commands, folder, sbatch));
    }

    /**
     * The commands of a job to be queued: a named node's {@code gpus: all} is the GPU count Slurm
     * has for it ({@code sinfo}'s Gres), as an interactive run finds it; nodes given as a count are
     * not known before the job runs, so their {@code all} is refused by {@link SlurmCommands#sbatch}.
     *
     * @throws IllegalArgumentException naming a node Slurm does not know, or why sinfo could not say
     */
    private static SlurmCommands queued(JobSpec spec, Map<String, String> env) {
        List<String> all = spec.nodes().stream().filter(n -> n.gpus() instanceof NodeSpec.GpuRequest.All).map(NodeSpec::name).toList();
        if (all.isEmpty() || spec.nodesUnnamed()) {
            return new SlurmCommands(spec, SlurmCommands.shapesOf(spec, Map.of()));
        }
        List<String> argv = List.of("sinfo", "--noheader", "--Node", "--nodes=" + String.join(",", all), "--format=" + SlurmNodeInfo.FORMAT);
        String out = SlurmClient.ask(argv, SlurmEnv.of(env))
                .orElseThrow(() -> new IllegalArgumentException("cannot run sinfo to count the GPUs of node " + all.get(0) + " (gpus: all)"));
        Map<String, SlurmNodeInfo> infos = SlurmNodeInfo.parse(out);
        Map<String, Integer> gpus = new LinkedHashMap<>();
        for (String node : all) {
            SlurmNodeInfo info = infos.get(node);
            if (info == null) {
                throw new IllegalArgumentException("node " + node + " asks for gpus: all, and Slurm has no node named '" + node + "'"
                        + (out.isBlank() ? "" : " (sinfo: " + out.strip().lines().findFirst().orElse("") + ")"));
            }
            gpus.put(node, info.gpus());
        }
        return new SlurmCommands(spec, SlurmCommands.shapesOf(spec, gpus));
    }

    /** {@code sbatch}, after {@code env SLURM_HOSTFILE=folder/hostfile} where the layout needs a hostfile (written there). */
    private static List<String> withHostfile(SlurmCommands commands, Path folder, List<String> sbatch) throws IOException {
        Optional<List<String>> hosts = commands.hostfile();
        if (hosts.isEmpty()) {
            return sbatch;
        }
        Path file = Files.write(folder.resolve("hostfile"), hosts.get());
        List<String> argv = new ArrayList<>(List.of("env", "SLURM_HOSTFILE=" + file));
        argv.addAll(sbatch);
        return argv;
    }

    /**
     * The sbatch command with its {@code --exclude} made anew from {@code avoid}, when its nodes are
     * Slurm's to pick (no {@code --nodelist} among sbatch's options, one component); a command that
     * names its nodes is run as it was. Only sbatch's options (before {@code script}) are read and
     * changed, never the coordinator's arguments.
     */
    @Override
    public List<String> again(List<String> command, Path script, Set<String> avoid) {
        int sbatch = command.indexOf("sbatch");
        int end = command.indexOf(script.toString());
        if (sbatch < 0 || end < sbatch) {
            return command;
        }
        List<String> options = command.subList(sbatch + 1, end);
        if (options.stream().anyMatch(w -> w.startsWith("--nodelist=")) || options.contains(":")) {
            return command;
        }
        List<String> argv = new ArrayList<>(command.subList(0, sbatch + 1));
        argv.addAll(options.stream().filter(w -> !w.startsWith("--exclude=")).toList());
        List<String> exclude = SlurmAddress.nodesOf(avoid);
        if (!exclude.isEmpty()) {
            argv.add("--exclude=" + String.join(",", exclude));
        }
        argv.addAll(command.subList(end, command.size()));
        return argv;
    }

    @Override
    public boolean lanes() {
        return true;
    }

    /**
     * {@code --job-name=NAME.LANE --dependency=singleton}: Slurm starts the job only once no job of
     * the same name and user that was queued before it runs. A {@code --dependency=D} of the job's
     * own ({@code slurm.alloc_args}) becomes {@code D,singleton}: both must hold.
     *
     * @throws IllegalArgumentException for a dependency that is "any of" ({@code ?}), or given without {@code =}
     */
    @Override
    public Optional<List<String>> inLane(List<String> command, Path script, String lane) {
        int sbatch = command.indexOf("sbatch");
        int end = command.indexOf(script.toString());
        if (sbatch < 0 || end < sbatch) {
            return Optional.empty();
        }
        List<String> options = command.subList(sbatch + 1, end);
        boolean own = options.stream().anyMatch(w -> w.startsWith(DEPENDENCY));
        List<String> argv = new ArrayList<>(command.subList(0, sbatch + 1));
        for (String w : options) {
            if (w.equals("-d") || w.equals("--dependency") || (w.startsWith("-d") && !w.startsWith("--"))) {
                throw new IllegalArgumentException("slurm.alloc_args gives a dependency as '" + w + "': write it --dependency=..., which"
                        + " --max-parallel joins with its own (singleton)");
            }
            if (w.startsWith(DEPENDENCY)) {
                if (w.contains("?")) {
                    throw new IllegalArgumentException("--max-parallel holds each run back with --dependency=singleton, which cannot join "
                            + w.substring(DEPENDENCY.length()) + " (any of, '?')");
                }
                argv.add(w + ",singleton");
            } else if (w.startsWith("--job-name=")) {
                argv.add(w + "." + lane);
                if (!own) {
                    argv.add(DEPENDENCY + "singleton");
                }
            } else {
                argv.add(w);
            }
        }
        argv.addAll(command.subList(end, command.size()));
        return Optional.of(argv);
    }

    /** {@code FOLDER/slurm-JOBID.out}, as sbatch's {@code --output} names it. */
    @Override
    public Optional<Path> output(Path folder, String jobId) {
        return Optional.of(folder.resolve("slurm-" + jobId + ".out"));
    }

    /** From the job's record ({@link SlurmEvents#queueState}): one line, a requeued job's hold included. */
    @Override
    public Optional<String> state(String jobId, Map<String, String> env) {
        return SlurmClient.job(jobId, SlurmEnv.of(env)).flatMap(SlurmEvents::queueState);
    }

    /** {@code scontrol show job}: RUNNING, with more {@code Restarts=} than {@code restartsSeen}. */
    @Override
    public boolean runsAgain(String jobId, int restartsSeen, Map<String, String> env) {
        return SlurmClient.job(jobId, SlurmEnv.of(env)).map(out -> SlurmEvents.running(out) && SlurmEvents.restarts(out) > restartsSeen)
                .orElse(false);
    }

    @Override
    public Optional<String> unstarted(String jobId, Map<String, String> env) {
        return SlurmClient.job(jobId, SlurmEnv.of(env)).flatMap(out -> SlurmEvents.unstarted(jobId, out));
    }

    @Override
    public Optional<String> cancel(String jobId, boolean now, Map<String, String> env) {
        boolean pending = state(jobId, env).map(s -> s.startsWith("queued") || s.startsWith("requeued")).orElse(false);
        List<String> argv = now || pending ? List.of("scancel", jobId) : List.of("scancel", "--batch", "--signal=TERM", jobId);
        String out = SlurmClient.ask(argv, SlurmEnv.of(env)).orElse("scancel did not answer").trim();
        return out.isEmpty() ? Optional.empty() : Optional.of(out);
    }

    /**
     * {@code scancel ARRAY} with {@code now}; else {@code scancel --state=PENDING ARRAY} (the waiting
     * tasks, a requeue hold's among them), then {@code scancel --batch --signal=TERM --state=RUNNING ARRAY}:
     * a task that starts between the two is signalled by the second.
     */
    @Override
    public Optional<String> cancelArray(String arrayId, boolean now, Map<String, String> env) {
        Map<String, String> slurmEnv = SlurmEnv.of(env);
        if (now) {
            return SlurmClient.failure(List.of("scancel", arrayId), slurmEnv);
        }
        Optional<String> pending = SlurmClient.failure(List.of("scancel", "--state=PENDING", arrayId), slurmEnv);
        Optional<String> running = SlurmClient.failure(List.of("scancel", "--batch", "--signal=TERM", "--state=RUNNING", arrayId), slurmEnv);
        return pending.isPresent() ? pending : running;
    }

    /** {@code sbatch --parsable} prints "ID" or "ID;CLUSTER" on its last line. */
    @Override
    public Optional<String> jobId(String output) {
        String id = output.lines().reduce((a, b) -> b).orElse("").split(";")[0].trim();
        return id.matches("\\d+") ? Optional.of(id) : Optional.empty();
    }

    /** {@code --test-only} (from {@code slurm.alloc_args}): sbatch says when it would start the job and queues nothing. */
    @Override
    public boolean asksOnly(List<String> command) {
        return command.contains("--test-only");
    }

    /** An option a #SBATCH line carries as it is: no quoting needed. */
    private static final Pattern PLAIN_OPTION = Pattern.compile("--[a-z-]+(=[A-Za-z0-9_=,:%@./+\\[\\]-]*)?");

    /**
     * What sbatch was asked, as {@code #SBATCH} lines (the same options are on its command line,
     * which wins: the lines are there for whoever reads the script, with {@code scontrol write
     * batch_script} or {@code sacct -B}). A heterogeneous job's components, and an option that
     * would need quoting, are shown in a comment instead.
     */
    @Override
    public String scriptHeader(List<String> command) {
        int from = command.indexOf("sbatch") + 1;
        int to = from;
        while (to < command.size() && command.get(to).startsWith("-") || to < command.size() && command.get(to).equals(":")) {
            to++;
        }
        List<String> options = command.subList(from, to).stream().filter(o -> !o.equals("--parsable")).toList();
        StringBuilder b = new StringBuilder();
        if (options.contains(":")) {
            b.append("# a heterogeneous job, its components between ':' as sbatch was asked:\n#   ").append(ShellWords.join(options)).append('\n');
        } else {
            b.append("# what sbatch was asked (the same options are on its command line):\n");
            for (String o : options) {
                b.append(PLAIN_OPTION.matcher(o).matches() ? "#SBATCH " : "#   (on the command line) ").append(o).append('\n');
            }
        }
        return b.toString();
    }
}
