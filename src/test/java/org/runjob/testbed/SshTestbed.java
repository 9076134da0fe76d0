package org.runjob.testbed;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real cluster on this machine: each host is a Linux network namespace on a bridge (veth pairs),
 * running its own OpenSSH sshd with a generated host key; one user key logs in to all. Each of the
 * two testbeds ({@link #get()} and {@link #forSlurm()}) is started once per test JVM, torn down by a
 * shutdown hook (and any leftovers of an earlier run are removed first).
 *
 * <p>Needs root, iproute2 and openssh-server. The namespaces share this machine's file system: all
 * hosts see one home directory and one cache ({@link #cache()}), as nodes with an NFS home do, and
 * a workdir path given to several hosts is a shared workdir. h3's login shell runs a slow, noisy rc
 * file. Every login's podman reads {@link Podman#CONF}. Tests give each host its own workdir unless they test sharing.
 */
public final class SshTestbed {

    /** One host: its namespace, address on the bridge, sshd port and host public key. */
    public record Host(String name, String namespace, String veth, String address, int port, Path hostKey) {

        /** The machine as runjob's quarantine names it: HOST:PORT. */
        public String machine() {
            return address + ":" + port;
        }

        public String knownHostsName() {
            return port == 22 ? address : "[" + address + "]:" + port;
        }
    }

    /** The shared testbed's subnet: its bridge is .1, host hN is .1N. */
    public static final String SUBNET = "10.203.0";
    /** The user a test creates for password login on h3, which accepts nothing else from it. */
    public static final String PASSWORD_USER = "rjtpw";
    private static SshTestbed shared;
    private static SshTestbed forSlurm;

    /** Names of the namespaces (PREFIX1...), their veths (PREFIXv1...) and the bridge (PREFIXbr0). */
    private final String prefix;
    private final String subnet;
    /** The PCI domain of the stand-in GPUs' bus ids, so two testbeds never lease the same GPU. */
    private final String pciDomain;
    private final Path dir;
    private final List<Host> hosts = new ArrayList<>();
    private final List<Process> sshds = new ArrayList<>();
    private final Path userKey;
    private final Path knownHosts;

    private SshTestbed(String prefix, String subnet, String pciDomain, Path dir) {
        this.prefix = prefix;
        this.subnet = subnet;
        this.pciDomain = pciDomain;
        this.dir = dir;
        this.userKey = dir.resolve("id_ed25519");
        this.knownHosts = dir.resolve("known_hosts");
    }

    /** Why the testbed cannot run here, or null when it can. */
    public static String missing() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "root (for network namespaces)";
        }
        if (!Files.isExecutable(Path.of("/usr/sbin/sshd"))) {
            return "OpenSSH's sshd (Debian: openssh-server)";
        }
        if (!Files.isExecutable(Path.of("/usr/sbin/ip")) && !Files.isExecutable(Path.of("/sbin/ip")) && !Files.isExecutable(Path.of("/usr/bin/ip"))) {
            return "ip (Debian: iproute2)";
        }
        return null;
    }

    /** The shared testbed: h1 (sshd on port 30430, like the seed's V100 server), h2, h3 and h4 (port 22; no java on h4's PATH). */
    public static synchronized SshTestbed get() throws IOException, InterruptedException {
        if (shared == null) {
            shared = started("rjt", SUBNET, "0000", new int[] {30430, 22, 22, 22});
        }
        return shared;
    }

    /**
     * The Slurm cluster's hosts: h1-h3 laid out as {@link #get()}'s are, on a bridge, subnet
     * (10.205.0; the benches use 10.204.0) and namespaces of their own, so the Slurm tests run beside the other testbed tests.
     */
    public static synchronized SshTestbed forSlurm() throws IOException, InterruptedException {
        if (forSlurm == null) {
            forSlurm = started("rjs", "10.205.0", "0001", new int[] {30430, 22, 22});
        }
        return forSlurm;
    }

    private static SshTestbed started(String prefix, String subnet, String pciDomain, int[] ports) throws IOException, InterruptedException {
        SshTestbed t = new SshTestbed(prefix, subnet, pciDomain, Files.createTempDirectory("runjob-testbed-" + prefix + "-"));
        Runtime.getRuntime().addShutdownHook(new Thread(t::close, prefix + "-teardown"));
        t.start(ports);
        return t;
    }

    /** This testbed's subnet ("10.203.0"): its bridge is .1, host hN is .1N. */
    public String subnet() {
        return subnet;
    }

    public List<Host> hosts() {
        return hosts;
    }

    public Host host(int i) {
        return hosts.get(i - 1);
    }

    public Path userKey() {
        return userKey;
    }

    public Path knownHosts() {
        return knownHosts;
    }

    public Path dir() {
        return dir;
    }

    private void start(int[] ports) throws IOException, InterruptedException {
        removeLeftovers();
        Podman.configure();
        Files.createDirectories(Path.of("/run/sshd"));
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", userKey.toString());
        Files.copy(dir.resolve("id_ed25519.pub"), dir.resolve("authorized_keys"));
        String bridge = prefix + "br0";
        sh("ip", "link", "add", bridge, "type", "bridge");
        sh("ip", "addr", "add", subnet + ".1/24", "dev", bridge);
        sh("ip", "link", "set", bridge, "up");
        StringBuilder known = new StringBuilder();
        for (int i = 1; i <= ports.length; i++) {
            String ns = prefix + i;
            String veth = prefix + "v" + i;
            String addr = subnet + "." + (10 + i);
            sh("ip", "netns", "add", ns);
            sh("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns);
            sh("ip", "link", "set", veth, "master", bridge, "up");
            sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", "eth0");
            sh("ip", "-n", ns, "link", "set", "eth0", "up");
            sh("ip", "-n", ns, "link", "set", "lo", "up");
            sh("ip", "-n", ns, "route", "add", "default", "via", subnet + ".1");
            Path hostKey = dir.resolve("host-" + i);
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey.toString());
            Host h = new Host("h" + i, ns, veth, addr, ports[i - 1], hostKey);
            hosts.add(h);
            Path config = dir.resolve("sshd-" + i + ".conf");
            String gpus = fakeGpus(i).replace("0000:", pciDomain + ":");
            String env = "SHLVL=1 LD_LIBRARY_PATH=" + FakeCuda.DIR + " CONTAINERS_CONF=" + Podman.CONF + " \"FAKECUDA_GPUS=" + gpus + "\""
                    + " FAKENVML_FILE=" + nvmlFile(i) + " FAKENVML_PROCS=" + nvmlProcesses(i)
                    + (i == 1 ? " CUDA_VISIBLE_DEVICES=1" : "") + (i == 3 ? " BASH_ENV=" + slowRc() : "")
                    + (i == 4 ? " PATH=" + pathWithoutJava() : "");
            Files.writeString(config, String.join("\n",
                    "Port " + h.port(),
                    "ListenAddress " + addr,
                    "HostKey " + hostKey,
                    "PidFile " + dir.resolve("sshd-" + i + ".pid"),
                    "AuthorizedKeysFile " + dir.resolve("authorized_keys"),
                    "PermitRootLogin prohibit-password",
                    // h3 also takes passwords, and only a password from the throw-away user PASSWORD_USER
                    "PasswordAuthentication " + (i == 3 ? "yes" : "no"),
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "MaxStartups 100",
                    "ClientAliveInterval 2",
                    "ClientAliveCountMax 3",
                    // bash skips ~/.bashrc (pyenv here) when SHLVL is set: measure runjob, not shell start-up;
                    // the stand-in CUDA driver gives each host its GPUs (h1 also has a stray CUDA_VISIBLE_DEVICES)
                    // every host shares one home (root's) and one cache, as nodes with an NFS home do;
                    // h3's login shell runs a slow rc file that prints to stdout and stderr (BASH_ENV)
                    "Subsystem sftp internal-sftp",
                    "LogLevel ERROR",
                    // sshd takes the first SetEnv that applies: root's (with the shared cache), else everyone's
                    "Match User root",
                    "  SetEnv " + env + " XDG_CACHE_HOME=" + cache(),
                    "Match all",
                    "  SetEnv " + env,
                    i == 3 ? "Match User " + PASSWORD_USER + "\n  AuthenticationMethods password" : "", ""));
            // a mount namespace of its own per host, as ip netns exec makes, but keeping /sys (and so the cgroup
            // mounts podman's runtime needs), which ip netns exec mounts anew for the network namespace
            Process sshd = new ProcessBuilder("unshare", "--mount", "--propagation", "slave", "nsenter", "--net=/run/netns/" + ns, "--",
                    "/usr/sbin/sshd", "-D", "-e", "-f", config.toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("sshd-" + i + ".log").toFile()).start();
            sshds.add(sshd);
            String pub = Files.readString(dir.resolve("host-" + i + ".pub")).trim();
            known.append(h.knownHostsName()).append(' ').append(pub.substring(0, pub.lastIndexOf(' '))).append('\n');
        }
        Files.writeString(knownHosts, known.toString());
        for (Host h : hosts) {
            awaitListening(h, Duration.ofSeconds(20));
        }
    }

    /** The per-user cache every host shares (XDG_CACHE_HOME): where agents keep runjob's jar. */
    public Path cache() {
        return dir.resolve("cache");
    }

    /** Removes every runtime runjob sent to h4 (the shared cache's), so a test sees the first send whatever ran before it. */
    public void forgetRuntimes() throws IOException, InterruptedException {
        Process rm = new ProcessBuilder("rm", "-rf", cache().resolve("runjob/runtimes").toString()).inheritIO().start();
        if (!rm.waitFor(30, TimeUnit.SECONDS) || rm.exitValue() != 0) {
            throw new IOException("cannot remove " + cache().resolve("runjob/runtimes"));
        }
    }

    /** h4's PATH: every program of /usr/bin but java, as on a GPU server with Python and no JRE. */
    private Path pathWithoutJava() throws IOException {
        Path bin = dir.resolve("nojava-bin");
        if (!Files.isDirectory(bin)) {
            Files.createDirectories(bin);
            try (var programs = Files.list(Path.of("/usr/bin"))) {
                for (Path p : programs.toList()) {
                    String name = p.getFileName().toString();
                    if (!name.startsWith("java")) {
                        Files.createSymbolicLink(bin.resolve(name), p);
                    }
                }
            }
        }
        return bin;
    }

    /**
     * h3's login rc file: slow, and noisy on stdout and stderr, like a conda or pyenv init; while
     * {@link #slowLoginFlag} exists it takes 20 s more (a login waiting on a lock or a slow NFS home).
     */
    private Path slowRc() throws IOException {
        Path rc = dir.resolve("slow-rc.sh");
        if (!Files.exists(rc)) {
            Files.writeString(rc, "echo 'Welcome to h3 (conda base activated)'\necho 'rm: cannot remove /tmp/x: No such file' >&2\n"
                    + "sleep 0.2\n[ -e '" + slowLoginFlag() + "' ] && sleep 20\ntrue\n");
        }
        return rc;
    }

    /** While this file exists, every login to h3 takes 20 s more. */
    public Path slowLoginFlag() {
        return dir.resolve("slow-login");
    }

    /** Host {@code i}'s stand-in NVML's process list ({@code fakenvml.c}: lines "index pid usedMiB"); absent: none. */
    public Path nvmlProcesses(int i) {
        return dir.resolve("nvml-procs-" + i);
    }

    /**
     * The file the stand-in NVML of host {@code i} reads its GPUs' values from ({@code fakenvml.c}:
     * a line per GPU, "utilization% usedMiB powerMilliwatts temperatureC smClockMHz"); absent: defaults.
     */
    public Path nvmlFile(int i) {
        return dir.resolve("nvml-h" + i + ".txt");
    }

    /**
     * The GPUs the stand-in driver gives host {@code i} (see {@link FakeCuda}): h1 two V100s,
     * listed out of PCI bus order; h2 one A30; the others none.
     */
    public static String fakeGpus(int i) {
        return switch (i) {
            case 1 -> "Tesla V100-PCIE-16GB|16384|0|7.0|0000:86:00;Tesla V100-PCIE-16GB|16384|0|7.0|0000:3b:00";
            case 2 -> "NVIDIA A30|24576|0|8.0|0000:17:00";
            default -> "";
        };
    }

    /** The host's public key line for known_hosts ("ssh-ed25519 AAAA..."). */
    public String publicKey(Host h) throws IOException {
        String pub = Files.readString(Path.of(h.hostKey() + ".pub")).trim();
        return pub.substring(0, pub.lastIndexOf(' '));
    }

    /** ssh-keygen's SHA256 fingerprint of the host key. */
    public String fingerprint(Host h) throws IOException, InterruptedException {
        String out = shOut("ssh-keygen", "-l", "-E", "sha256", "-f", h.hostKey() + ".pub");
        return out.split(" ")[1];
    }

    /** Cuts the host off (its veth on the bridge goes down) or reconnects it. */
    public void link(Host h, boolean up) throws IOException, InterruptedException {
        sh("ip", "link", "set", h.veth(), up ? "up" : "down");
    }

    /** Runs {@code argv} in the mount namespace of the host's sshd (what its logins see); returns its output. */
    public String inMounts(Host h, String... argv) throws IOException, InterruptedException {
        long pid = sshds.get(hosts.indexOf(h)).pid();
        List<String> cmd = new ArrayList<>(List.of("nsenter", "-t", Long.toString(pid), "-m", "--"));
        cmd.addAll(List.of(argv));
        return shOut(cmd.toArray(String[]::new));
    }

    /** Starts {@code argv} inside the host's namespace. */
    public Process execIn(Host h, String... argv) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", h.namespace()));
        cmd.addAll(List.of(argv));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    private static void awaitListening(Host h, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(h.address(), h.port()), 500);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("sshd on " + h.name() + " did not start: " + e.getMessage());
                }
                Thread.sleep(50);
            }
        }
    }

    synchronized void close() {
        for (Process p : sshds) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        removeLeftovers();
    }

    private void removeLeftovers() {
        try {
            for (String ns : shOut("ip", "netns", "list").split("\n")) {
                String name = ns.split(" ")[0].trim();
                if (name.matches(prefix + "\\d+")) {
                    killIn(name);
                    run("ip", "netns", "del", name);
                }
            }
            for (String line : shOut("ip", "-o", "link", "show").split("\n")) {
                String[] parts = line.split(": ");
                if (parts.length > 1) {
                    String name = parts[1].split("@")[0];
                    if (name.matches(prefix + "v\\d+") || name.equals(prefix + "br0")) {
                        run("ip", "link", "del", name);
                    }
                }
            }
        } catch (IOException | InterruptedException e) {
            // best effort
        }
    }

    /** Kills every process left in a namespace (sshd, agents, workers of a failed test). */
    private static void killIn(String ns) throws IOException, InterruptedException {
        for (String pid : shOut("ip", "netns", "pids", ns).split("\\s+")) {
            if (pid.matches("\\d+")) {
                ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    private static void sh(String... argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", argv) + " failed: " + out);
        }
    }

    private static void run(String... argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    private static String shOut(String... argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor(30, TimeUnit.SECONDS);
        return out;
    }
}
