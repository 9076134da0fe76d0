package org.runjob.testbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Slurm cluster on this machine: munged, slurmctld on the bridge of {@link SshTestbed#forSlurm()}
 * (a testbed of its own, so these tests run beside the other testbed tests), and one
 * slurmd in each of the network namespaces of its hosts h1, h2 and h3 (started with {@code nsenter
 * --net}; {@code ip netns exec} would hide the cgroup mounts slurmd needs), so each node has its
 * own address and the same job file runs under both backends. The nodes share this machine's
 * filesystem, as Slurm nodes on a shared home do. Each node has 4 CPUs and 2 fake GPUs (character
 * devices with NVIDIA's major number in gres.conf); {@code KillWait=5}; the backfill scheduler, which
 * alone starts heterogeneous jobs, runs every second. Torn down at JVM exit:
 * jobs cancelled, daemons, step daemons and tasks killed, the nodes' cgroups removed.
 */
public final class SlurmTestbed {

    public static final int NODES = 3;
    public static final int KILL_WAIT_S = 5;
    private static final int PORT = 16917;
    private static SlurmTestbed instance;

    private final Path dir;
    private final SshTestbed hosts;
    private boolean ownMunge;

    private SlurmTestbed(Path dir, SshTestbed hosts) {
        this.dir = dir;
        this.hosts = hosts;
    }

    /** Why the cluster cannot run here, or null when it can. */
    public static String missing() {
        String ssh = SshTestbed.missing();
        if (ssh != null) {
            return ssh;
        }
        for (String daemon : List.of("/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/bin/srun", "/usr/bin/salloc")) {
            if (!Files.isExecutable(Path.of(daemon))) {
                return daemon + " (Debian: slurm-wlm, munge)";
            }
        }
        return null;
    }

    public static synchronized SlurmTestbed get() throws IOException, InterruptedException {
        if (instance == null) {
            SlurmTestbed t = new SlurmTestbed(Files.createTempDirectory("runjob-slurm-"), SshTestbed.forSlurm());
            Runtime.getRuntime().addShutdownHook(new Thread(t::close, "slurm-teardown"));
            t.start();
            instance = t;
        }
        return instance;
    }

    /** SLURM_CONF for Slurm's commands (and runjob) to find this cluster. */
    public Map<String, String> env() {
        return Map.of("SLURM_CONF", conf().toString());
    }

    public Path conf() {
        return dir.resolve("slurm.conf");
    }

    public SshTestbed hosts() {
        return hosts;
    }

    private void start() throws IOException, InterruptedException {
        Files.createDirectories(dir.resolve("state"));
        Files.createDirectories(dir.resolve("log"));
        Files.createDirectories(dir.resolve("run"));
        Files.createDirectories(dir.resolve("dev"));
        for (int i = 0; i < 2; i++) {
            sh("mknod", dir.resolve("dev/nvidia" + i).toString(), "c", "195", Integer.toString(i));
        }
        String host = out("hostname", "-s").trim();
        List<String> conf = new ArrayList<>(List.of(
                "ClusterName=rjt",
                "SlurmctldHost=" + host + "(" + hosts.subnet() + ".1)",
                "SlurmctldPort=" + PORT,
                "SlurmdPort=" + (PORT + 1),
                "SlurmUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                "StateSaveLocation=" + dir.resolve("state/ctld"),
                "SlurmdSpoolDir=" + dir.resolve("state/%n"),
                "SlurmctldPidFile=" + dir.resolve("run/slurmctld.pid"),
                "SlurmdPidFile=" + dir.resolve("run/slurmd-%n.pid"),
                "SlurmctldLogFile=" + dir.resolve("log/slurmctld.log"),
                "SlurmdLogFile=" + dir.resolve("log/slurmd-%n.log"),
                "ProctrackType=proctrack/cgroup",
                "TaskPlugin=task/cgroup,task/affinity",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SlurmdParameters=config_overrides",
                "ReturnToService=2",
                "MpiDefault=none",
                "KillWait=" + KILL_WAIT_S,
                // as on sites whose jobs are not requeueable unless they ask: a run that needs a requeue says --requeue
                "JobRequeue=0",
                // heterogeneous jobs start only from the backfill scheduler: every second here, not every 30 s
                "SchedulerParameters=bf_interval=1",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "GresTypes=gpu"));
        for (int i = 1; i <= NODES; i++) {
            conf.add("NodeName=h" + i + " NodeAddr=" + hosts.host(i).address() + " CPUs=4 RealMemory=1000 Gres=gpu:2 State=UNKNOWN");
        }
        conf.add("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP");
        Files.writeString(conf(), String.join("\n", conf) + "\n");
        Files.writeString(dir.resolve("cgroup.conf"), "CgroupPlugin=autodetect\nConstrainCores=no\nConstrainRAMSpace=no\nConstrainDevices=no\n");
        Files.writeString(dir.resolve("gres.conf"), "AutoDetect=off\nName=gpu File=" + dir.resolve("dev") + "/nvidia[0-1]\n");
        startMunge();
        sh("slurmctld", "-f", conf().toString());
        for (int i = 1; i <= NODES; i++) {
            Files.createDirectories(dir.resolve("state/h" + i));
            sh("nsenter", "--net=/run/netns/" + hosts.host(i).namespace(), "slurmd", "-f", conf().toString(), "-N", "h" + i);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!out("sinfo", "-h", "-o", "%T %D").trim().equals("idle " + NODES)) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the Slurm nodes did not become idle: " + out("sinfo", "-N") + tail("slurmctld.log"));
            }
            Thread.sleep(100);
        }
    }

    private void startMunge() throws IOException, InterruptedException {
        if (Testbed.runs("sh", "-c", "munge -n </dev/null | unmunge >/dev/null")) {
            return;
        }
        Path key = Path.of("/etc/munge/munge.key");
        if (!Files.exists(key) || Files.size(key) == 0) {
            Files.createDirectories(key.getParent());
            byte[] bytes = new byte[1024];
            new SecureRandom().nextBytes(bytes);
            Files.write(key, bytes);
        }
        sh("chown", "munge:munge", key.toString());
        sh("chmod", "400", key.toString());
        Files.createDirectories(Path.of("/run/munge"));
        sh("chown", "munge:munge", "/run/munge");
        sh("runuser", "-u", "munge", "--", "/usr/sbin/munged");
        ownMunge = true;
        Poll.until(() -> Testbed.runs("sh", "-c", "munge -n </dev/null | unmunge >/dev/null"), Duration.ofSeconds(20), "munged answers");
    }

    /** Jobs in the queue (squeue's lines, empty when none). */
    public String queue() throws IOException, InterruptedException {
        return out("squeue", "-h", "-o", "%i %T %j").trim();
    }

    /** Processes of Slurm steps still on the nodes: slurmstepd and the tasks in the nodes' cgroups. */
    public List<Long> tasks() throws IOException {
        List<Long> pids = new ArrayList<>();
        for (Path procs : cgroupProcs()) {
            for (String line : Files.readAllLines(procs)) {
                if (!line.isBlank()) {
                    pids.add(Long.parseLong(line.trim()));
                }
            }
        }
        return Pids.living(pids);
    }

    private List<Path> cgroupProcs() throws IOException {
        List<Path> out = new ArrayList<>();
        Path root = Path.of("/sys/fs/cgroup/freezer");
        for (int i = 1; i <= NODES; i++) {
            Path node = root.resolve("slurm_h" + i);
            if (Files.isDirectory(node)) {
                try (Stream<Path> s = Files.walk(node)) {
                    s.filter(p -> p.getFileName().toString().equals("cgroup.procs") && p.toString().contains("/step_")).forEach(out::add);
                }
            }
        }
        return out;
    }

    public String tail(String log) {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("log").resolve(log));
            return "\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    synchronized void close() {
        try {
            run("scancel", "--user=root");
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (!queue().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            run("scontrol", "shutdown");
            deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (daemonsAlive() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            for (Path pid : pidFiles()) {
                ProcessHandle.of(Long.parseLong(Files.readString(pid).trim())).ifPresent(ProcessHandle::destroyForcibly);
            }
            ProcessHandle.allProcesses().filter(p -> p.info().command().orElse("").endsWith("slurmstepd"))
                    .filter(p -> environOf(p.pid()).contains("SLURM_CONF=" + conf())).forEach(ProcessHandle::destroyForcibly);
            for (Path procs : cgroupProcs()) {
                for (String line : Files.readAllLines(procs)) {
                    if (!line.isBlank()) {
                        ProcessHandle.of(Long.parseLong(line.trim())).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
            }
            Thread.sleep(200);
            for (String controller : List.of("freezer", "cpuset", "devices", "memory", "cpu,cpuacct")) {
                for (int i = 1; i <= NODES; i++) {
                    run("find", "/sys/fs/cgroup/" + controller + "/slurm_h" + i, "-depth", "-type", "d", "-exec", "rmdir", "{}", ";");
                }
            }
            if (ownMunge && Files.exists(Path.of("/run/munge/munged.pid"))) {
                run("sh", "-c", "kill $(cat /run/munge/munged.pid)");
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            // best effort
        }
    }

    private boolean daemonsAlive() throws IOException {
        for (Path pid : pidFiles()) {
            if (!Pids.living(List.of(Long.parseLong(Files.readString(pid).trim()))).isEmpty()) {
                return true;
            }
        }
        return false;
    }

    private List<Path> pidFiles() throws IOException {
        try (Stream<Path> s = Files.list(dir.resolve("run"))) {
            return s.filter(p -> p.getFileName().toString().endsWith(".pid")).toList();
        }
    }

    private static String environOf(long pid) {
        try {
            return new String(Files.readAllBytes(Path.of("/proc/" + pid + "/environ")), StandardCharsets.UTF_8).replace('\0', '\n');
        } catch (IOException e) {
            return "";
        }
    }

    /** What {@code argv} (a Slurm command, with the testbed's SLURM_CONF) printed, stdout and stderr together. */
    public String out(String... argv) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().put("SLURM_CONF", conf().toString());
        Process p = pb.start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(60, TimeUnit.SECONDS);
        return text;
    }

    private void run(String... argv) throws IOException, InterruptedException {
        out(argv);
    }

    private void sh(String... argv) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().put("SLURM_CONF", conf().toString());
        Process p = pb.start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", argv) + " failed: " + text + tail("slurmctld.log"));
        }
    }
}
