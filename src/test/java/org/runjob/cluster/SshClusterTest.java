package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.distribute.Sha256;
import org.runjob.session.PinnedJar;
import org.runjob.testbed.FakeCuda;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;
import org.runjob.testbed.RunjobProcess;
import org.runjob.testbed.SshTestbed;
import org.runjob.testbed.Testbed;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Jobs on real sshd hosts in network namespaces: DDP, unequal counts, ports, host keys, preflight, faults. */
@OnSshTestbed
class SshClusterTest {

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
    }

    @AfterEach
    void cleanUp() throws Exception {
        jobs.reconnectAll();
    }

    static void requireTorch() {
        Testbed.require(Testbed.runs("/usr/bin/python3", "-c", "import torch.distributed"), "PyTorch for /usr/bin/python3 (python3-torch)");
    }

    static Map<Integer, List<String>> rows(String out) {
        Map<Integer, List<String>> rows = new HashMap<>();
        Matcher m = Pattern.compile("\\[h\\d/(\\d)] rank (\\d) trained on row (0\\.\\d)").matcher(out);
        while (m.find()) {
            assertThat(m.group(1)).isEqualTo(m.group(2));
            rows.computeIfAbsent(Integer.parseInt(m.group(2)), r -> new ArrayList<>()).add(m.group(3));
        }
        return rows;
    }

    static Map<Integer, String> weights(String out) {
        Map<Integer, String> w = new HashMap<>();
        Matcher m = Pattern.compile("\\[h\\d/(\\d)] rank (\\d) weights (\\[.*])").matcher(out);
        while (m.find()) {
            w.put(Integer.parseInt(m.group(2)), m.group(3));
        }
        return w;
    }

    /** A preflight cell's full text, from the one run of {@code job} under {@code logs} (the table cuts long cells). */
    static String detail(Path logs, String job, String node, String check) throws Exception {
        try (var runs = Files.list(logs.resolve(job))) {
            JsonNode preflight = JsonMapper.builder().build().readTree(Files.readString(runs.findFirst().orElseThrow().resolve("preflight.json")));
            for (JsonNode n : preflight.get("nodes")) {
                if (n.get("node").stringValue().equals(node)) {
                    return n.get("checks").get(check).get("detail").stringValue();
                }
            }
        }
        throw new AssertionError("no node " + node + " in the preflight of " + job);
    }

    JsonNode runFile(String job, String file) throws Exception {
        try (var runs = Files.list(jobs.logs.resolve(job))) {
            Path run = runs.findFirst().orElseThrow();
            return JsonMapper.builder().build().readTree(Files.readString(run.resolve(file)));
        }
    }

    @Test
    void seedDdpOnTwoHostsOfTwoWorkersWithoutSettingTheInterface() throws Exception {
        requireTorch();
        SshTestbed.Host h1 = jobs.bed.host(1);
        Path job = jobs.job("seed", jobs.node(h1, 2) + jobs.node(jobs.bed.host(2), 2), List.of(ClusterJobs.DDP),
                List.of("python3", "train.py"), "rendezvous: {port: 29522}\n", Map.of());
        Cli r = jobs.run(job);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(h1.port()).isEqualTo(30430);
        assertThat(rows(r.out())).containsExactlyInAnyOrderEntriesOf(Map.of(0, List.of("0.1"), 1, List.of("0.2"),
                2, List.of("0.3"), 3, List.of("0.4")));
        Map<Integer, String> w = weights(r.out());
        assertThat(w).hasSize(4);
        assertThat(w.values()).as("identical weights on every rank").containsOnly(w.get(0));
        assertThat(r.err()).contains("preflight: ok\n");
        assertThat(detail(jobs.logs, "seed", "h1", "ssh")).isEqualTo("root@10.203.0.11:30430");
        assertThat(detail(jobs.logs, "seed", "h1", "rendezvous")).isEqualTo("listens :29522 via eth0");
        // inside a namespace the hostname resolves to 127.0.0.1: gloo works only because runjob exported eth0
        for (JsonNode worker : runFile("seed", "plan.json").get("workers")) {
            assertThat(worker.get("env").get("GLOO_SOCKET_IFNAME").stringValue()).isEqualTo("eth0");
            assertThat(worker.get("env").get("MASTER_ADDR").stringValue()).isEqualTo(h1.address());
        }
    }

    @Test
    void unequalCountsTwoPlusOneGiveWorldSizeThree() throws Exception {
        requireTorch();
        Path job = jobs.job("unequal", jobs.node(jobs.bed.host(2), 2) + jobs.node(jobs.bed.host(3), 1), List.of(ClusterJobs.DDP),
                List.of("python3", "train.py"), "rendezvous: {port: auto}\n", Map.of());
        Cli r = jobs.run(job);
        assertThat(r.code()).as(r.err()).isZero();
        // DistributedSampler pads 4 rows to 6 for 3 ranks: rank r gets rows r and r+3 (mod 4)
        assertThat(rows(r.out())).containsExactlyInAnyOrderEntriesOf(Map.of(0, List.of("0.1", "0.4"), 1, List.of("0.2", "0.1"),
                2, List.of("0.3", "0.2")));
        Map<Integer, String> w = weights(r.out());
        assertThat(w).hasSize(3);
        assertThat(w.values()).containsOnly(w.get(0));
        JsonNode plan = runFile("unequal", "plan.json");
        assertThat(plan.get("world_size").intValue()).isEqualTo(3);
        assertThat(plan.get("nodes").get(1).get("ranks").toString()).isEqualTo("[2]");
    }

    @Test
    void gpusAllOnAV100NodeAndAnA30NodeCountsForItselfOverSsh() throws Exception {
        FakeCuda.library();
        SshTestbed.Host h1 = jobs.bed.host(1);
        SshTestbed.Host h2 = jobs.bed.host(2);
        Path job = jobs.job("hetero-gpus", jobs.gpuNode(h1) + jobs.gpuNode(h2) + jobs.gpuNode(jobs.bed.host(3)), List.of(),
                List.of("python3", "-c", "'import os; e = os.environ; print(e[\"RANK\"], e[\"LOCAL_RANK\"], e[\"WORLD_SIZE\"], "
                        + "e[\"CUDA_VISIBLE_DEVICES\"])'"), "", Map.of());
        Cli gpus = Cli.run(System.getenv(), "gpus", job.toString());
        // h1's login environment sets CUDA_VISIBLE_DEVICES=1: the probe still sees both GPUs, in bus order
        assertThat(gpus.out()).isEqualTo(
                "node           index  model                             total       free  cc    bus id            held by\n"
                + "h1                 0  Tesla V100-PCIE-16GB           16.0 GiB   16.0 GiB  7.0   00000000:3B:00.0  -\n"
                + "h1                 1  Tesla V100-PCIE-16GB           16.0 GiB   16.0 GiB  7.0   00000000:86:00.0  -\n"
                + "h2                 0  NVIDIA A30                     24.0 GiB   24.0 GiB  8.0   00000000:17:00.0  -\n"
                + "h3                 -  no CUDA device (the driver found no GPU)\n");
        assertThat(gpus.code()).isEqualTo(3);

        Cli refused = jobs.run(job);
        assertThat(refused.code()).isEqualTo(3);
        assertThat(refused.err()).contains("FAIL h3 gpus: gpus: all, but no CUDA device (the driver found no GPU)\n");

        Path two = jobs.job("hetero-gpus", jobs.gpuNode(h1) + jobs.gpuNode(h2), List.of(),
                List.of("python3", "-c", "'import os; e = os.environ; print(e[\"RANK\"], e[\"LOCAL_RANK\"], e[\"WORLD_SIZE\"], "
                        + "e[\"CUDA_VISIBLE_DEVICES\"])'"), "", Map.of());
        Cli r = jobs.run(two);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().sorted()).containsExactly("[h1/0] 0 0 3 0,1", "[h1/1] 1 1 3 0,1", "[h2/2] 2 0 3 0");
        assertThat(r.err()).contains("warn h2 gpus: 1 of 1 NVIDIA A30: model NVIDIA A30 differs from node h1's Tesla V100-PCIE-16GB\n");
    }

    @Test
    void gpuCountsArePickedPerNodeOverSshAndLeasedWhileTheRunLasts() throws Exception {
        FakeCuda.library();
        SshTestbed.Host h1 = jobs.bed.host(1);
        SshTestbed.Host h2 = jobs.bed.host(2);
        String show = "'import os, time; e = os.environ; print(e[\"RANK\"], e[\"CUDA_VISIBLE_DEVICES\"], flush=True); time.sleep(float(e.get(\"HOLD_S\", \"0\")))'";
        Path job = jobs.job("picked", jobs.gpuNode(h1).replace("gpus: all", "gpus: {count: 2}")
                + jobs.gpuNode(h2).replace("gpus: all", "gpus: {count: 1}"), List.of(), List.of("python3", "-c", show), "", Map.of());
        Cli r = jobs.run(job);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().sorted()).containsExactly("[h1/0] 0 0,1", "[h1/1] 1 0,1", "[h2/2] 2 0");
        String summary = Files.readString(Files.list(jobs.logs.resolve("picked")).findFirst().orElseThrow()
                .resolve("summary.json"));
        assertThat(summary).contains("00000000:3B:00.0").contains("00000000:86:00.0").contains("00000000:17:00.0");

        // while a run holds h2's only GPU, runjob gpus shows its lease and a second run finds no free GPU there
        Process holding = RunjobProcess.start(jobs.dir, jobs.job("holding", jobs.gpuNode(h2).replace("gpus: all", "gpus: {count: 1}").replace("work-h2", "work-holding"),
                List.of(), List.of("python3", "-c", show), "", Map.of("HOLD_S", "600")));
        try {
            Poll.until(() -> Cli.run(System.getenv(), "gpus", job.toString()).out().contains("of job holding"),
                    Duration.ofSeconds(60), "h2's GPU leased by the holding run");
            Cli busy = jobs.run(job);
            assertThat(busy.code()).isEqualTo(3);
            assertThat(busy.err()).containsPattern("FAIL h2 gpus: needs 1 free GPU, 0 of 1 are; GPU 0: held by run \\S+ of job holding "
                    + "\\(user root, since ");
        } finally {
            holding.destroy();
            holding.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void anAddressWhereNoHostAnswersFailsPreflightWithinTheTimeoutAndStartsNothing() throws Exception {
        Path job = jobs.job("nohost", jobs.node(jobs.bed.host(2), 1) + jobs.node("ghost", SshTestbed.SUBNET + ".99", 22, 1),
                jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "", Map.of());
        Instant start = Instant.now();
        Cli r = jobs.run(job);
        Duration took = Duration.between(start, Instant.now());
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL ghost ssh: node ghost (10.203.0.99:22): no answer within 3 s\n")
                .contains("preflight failed: nothing was started\n");
        assertThat(took).isLessThan(Duration.ofSeconds(3 + 5));
        try (var pidFiles = Files.list(jobs.pids)) {
            assertThat(pidFiles).as("no worker started on the reachable node").isEmpty();
        }
    }

    @Test
    void aHostThatAnswersButIsSlowToHandshakeIsTriedAgainNotFailed() throws Exception {
        // h2's sshd behind a loopback proxy whose first connection answers TCP but never speaks SSH, as a host
        // too loaded to finish the handshake within the connect timeout does
        SshTestbed.Host h2 = jobs.bed.host(2);
        AtomicInteger connections = new AtomicInteger();
        List<Socket> held = new CopyOnWriteArrayList<>();
        try (ServerSocket proxy = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!proxy.isClosed()) {
                    try {
                        Socket in = proxy.accept();
                        if (connections.incrementAndGet() == 1) {
                            held.add(in); // silent
                            continue;
                        }
                        Socket out = new Socket(h2.address(), 22);
                        held.add(in);
                        held.add(out);
                        pipe(in, out);
                        pipe(out, in);
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            Path known = Files.writeString(tmp.resolve("known_hosts_slow"), "");
            Path job = jobs.job("slow", jobs.node("h2", "127.0.0.1", proxy.getLocalPort(), 1), jobs.worker("flaky.py"),
                    List.of("python3", "flaky.py"), "", Map.of());
            Cli r = jobs.run(job, "--set", "ssh.known_hosts=" + known, "--set", "ssh.host_key_policy=accept-new");
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("[h2/0] rank 0 attempt 0 restarts 0\n");
            assertThat(connections.get()).as("the silent connection, then the one that logged in").isGreaterThanOrEqualTo(2);
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
    }

    private static void pipe(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            try {
                from.getInputStream().transferTo(to.getOutputStream());
            } catch (IOException e) {
                // closed
            }
        });
        t.setDaemon(true);
        t.start();
    }

    @Test
    void unknownHostKeyIsRefusedUnderStrictWithItsFingerprintAndAcceptedUnderAcceptNew() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        Path empty = Files.writeString(tmp.resolve("known_hosts"), "");
        Path job = jobs.job("hostkey", jobs.node(h2, 1), jobs.worker("flaky.py"), List.of("python3", "flaky.py"), "", Map.of());
        Cli strict = jobs.run(job, "--set", "ssh.known_hosts=" + empty);
        assertThat(strict.code()).isEqualTo(3);
        assertThat(strict.err()).contains("FAIL h2 ssh: node h2 (10.203.0.12:22): unknown host key ssh-ed25519 "
                + jobs.bed.fingerprint(h2) + " (not in " + empty + ")");
        assertThat(Files.readString(empty)).isEmpty();

        Cli accept = jobs.run(job, "--set", "ssh.known_hosts=" + empty, "--set", "ssh.host_key_policy=accept-new");
        assertThat(accept.code()).as(accept.err()).isZero();
        assertThat(accept.out()).contains("[h2/0] rank 0 attempt 0 restarts 0\n");
        assertThat(Files.readString(empty)).contains(h2.address()).contains(jobs.bed.publicKey(h2).split(" ")[1]);
    }

    @Test
    void aChangedHostKeyIsRefusedUnderBothPolicies() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        SshTestbed.Host h3 = jobs.bed.host(3);
        // known_hosts says h2 has h3's key: exactly what a changed key looks like
        Path wrong = Files.writeString(tmp.resolve("known_hosts"), h2.knownHostsName() + " " + jobs.bed.publicKey(h3) + "\n");
        Path job = jobs.job("changed", jobs.node(h2, 1), jobs.worker("flaky.py"), List.of("python3", "flaky.py"), "", Map.of());
        for (String policy : List.of("strict", "accept-new")) {
            Cli r = jobs.run(job, "--set", "ssh.known_hosts=" + wrong, "--set", "ssh.host_key_policy=" + policy);
            assertThat(r.code()).as(policy).isEqualTo(3);
            assertThat(r.err()).as(policy).contains("FAIL h2 ssh: node h2 (10.203.0.12:22): the host key has CHANGED (ssh-ed25519 "
                    + jobs.bed.fingerprint(h2) + ")");
            assertThat(Files.readString(wrong)).as(policy).isEqualTo(h2.knownHostsName() + " " + jobs.bed.publicKey(h3) + "\n");
        }
    }

    @Test
    void aRendezvousPortAlreadyTakenOnTheMasterFailsPreflightNamingIt() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        Process squatter = jobs.bed.execIn(h2, "python3", "-c",
                "import socket, time\ns = socket.create_server(('0.0.0.0', 29533))\ntime.sleep(120)");
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!Testbed.runs("ip", "netns", "exec", h2.namespace(), "python3", "-c",
                    "import socket; socket.create_connection(('127.0.0.1', 29533), timeout=1)")) {
                assertThat(System.nanoTime()).as("squatter listening").isLessThan(deadline);
            }
            Path job = jobs.job("portused", jobs.node(h2, 1) + jobs.node(jobs.bed.host(3), 1), jobs.worker("sleeper.py"),
                    List.of("python3", "sleeper.py"), "rendezvous: {port: 29533}\n", Map.of());
            Instant start = Instant.now();
            Cli r = jobs.run(job);
            assertThat(r.code()).isEqualTo(3);
            assertThat(r.err()).contains("FAIL h2 rendezvous: port 29533 cannot be bound:").contains("preflight failed: nothing was started\n");
            assertThat(Duration.between(start, Instant.now())).isLessThan(Duration.ofSeconds(10));
        } finally {
            squatter.destroyForcibly();
        }
    }

    @Test
    void cuttingANodesLinkMidRunLosesItAndLeavesNoWorkerOnceItIsBack() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        SshTestbed.Host h3 = jobs.bed.host(3);
        Path job = jobs.job("linkcut", jobs.node(h2, 1) + jobs.node(h3, 1), jobs.worker("sleeper.py"),
                List.of("python3", "sleeper.py"), "failure: {grace_period_s: 1}\n", Map.of());
        Process runjob = jobs.start(job);
        List<Long> pids = jobs.awaitPids(2, Duration.ofSeconds(60));
        toClean.addAll(pids);
        Instant cut = Instant.now();
        jobs.bed.link(h3, false);
        assertThat(runjob.waitFor(30, TimeUnit.SECONDS)).isTrue();
        Duration noticed = Duration.between(cut, Instant.now());
        assertThat(runjob.exitValue()).isEqualTo(1);
        assertThat(jobs.stderrOf(job)).contains("root cause: rank 1 (local rank 0) on node h3: lost: node h3 lost");
        // keepalive: 1 s x 5 unanswered, plus the teardown of h2's worker, plus the fresh connection (connect_timeout_s 3) that
        // shows h3 lost before it is quarantined
        assertThat(noticed).isLessThan(Duration.ofSeconds(5 + 1 + 6 + 3));
        assertThat(Pids.living(List.of(pids.get(0)))).as("h2's worker was stopped").isEmpty();
        jobs.bed.link(h3, true);
        // h3's agent misses the coordinator's heartbeats (15 s) or sshd drops the session, and stops its worker
        Pids.awaitGone(pids, Duration.ofSeconds(30), "h3's worker after the link came back");
    }

    @Test
    void sigkillOfRunjobLeavesNoWorkerOnAnyNode() throws Exception {
        Path job = jobs.job("sigkill", jobs.node(jobs.bed.host(2), 2) + jobs.node(jobs.bed.host(3), 1), jobs.worker("sleeper.py"),
                List.of("python3", "sleeper.py"), "failure: {grace_period_s: 1}\n", Map.of("IGNORE_TERM", "1"));
        Process runjob = jobs.start(job);
        List<Long> pids = jobs.awaitPids(3, Duration.ofSeconds(60));
        toClean.addAll(pids);
        runjob.destroyForcibly();
        assertThat(runjob.waitFor(10, TimeUnit.SECONDS)).isTrue();
        // the TCP connections close with runjob: sshd closes each agent's stdin; TERM (ignored), KILL after 1 s
        Pids.awaitGone(pids, Duration.ofSeconds(1 + 6 + 5), "every worker after kill -9 of runjob");
    }

    @Test
    void checkAloneReportsEveryNodeAndExitsZero() throws Exception {
        Path job = jobs.job("check", jobs.node(jobs.bed.host(1), 1) + jobs.node(jobs.bed.host(2), 1), jobs.worker("sleeper.py"),
                List.of("python3", "sleeper.py"), "", Map.of());
        Cli r = Cli.run(System.getenv(), "check", "--output", "json", job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode report = JsonMapper.builder().build().readTree(r.out());
        assertThat(report.get("ok").booleanValue()).isTrue();
        for (JsonNode node : report.get("nodes")) {
            assertThat(node.get("socket_interface").stringValue()).isEqualTo("eth0");
            for (String check : List.of("ssh", "java", "workdir", "disk", "program", "rendezvous")) {
                assertThat(node.get("checks").get(check).get("status").stringValue()).as(check).isIn("ok", "warn");
            }
        }
        // what python3 is on the node: the interpreter it runs, its version, torch's where it has torch
        assertThat(report.get("nodes").get(1).get("checks").get("program").get("detail").stringValue())
                .matches("python3 -> /\\S*python3(\\.\\d+)? \\(Python 3\\.\\d+\\.\\d+(, torch \\S+)?\\)");
        // check ships none of the job's files; the agent jar is in the user's cache, named by its content
        assertThat(tmp.resolve("work-h2/sleeper.py")).doesNotExist();
        assertThat(tmp.resolve("work-h2/.runjob/runjob.jar")).doesNotExist();
        PinnedJar jar = PinnedJar.agent();
        Path cached = jobs.bed.cache().resolve("runjob/agents/" + jar.sha256() + ".jar");
        assertThat(Sha256.of(cached)).isEqualTo(jar.sha256());
        assertThat(Files.getPosixFilePermissions(cached)).isEqualTo(PosixFilePermissions.fromString("rw-------"));

        // the agents' class-data archive, cut short (it would crash every later agent's JVM): made again, never used
        Path archive = cached.resolveSibling(jar.sha256() + ".jsa");
        Path sum = cached.resolveSibling(jar.sha256() + ".jsa.sum");
        Poll.until(() -> Files.isRegularFile(archive) && Files.isRegularFile(sum), Duration.ofSeconds(30), "the agents' class-data archive");
        try (FileChannel ch = FileChannel.open(archive, StandardOpenOption.WRITE)) {
            ch.truncate(100_000);
        }
        Cli again = Cli.run(System.getenv(), "check", job.toString());
        assertThat(again.code()).as(again.err()).isZero();
        Poll.until(() -> Files.isRegularFile(sum) && cksum(archive).equals(read(sum)), Duration.ofSeconds(30),
                "the archive made again, with its checksum");
        assertThat(Files.size(archive)).isGreaterThan(100_000);
    }

    /** What {@code cksum < FILE} prints, or "" when it cannot be read. */
    private static String cksum(Path file) {
        try {
            Process p = new ProcessBuilder("sh", "-c", "cksum < \"$0\"", file.toString()).start();
            String out = new String(p.getInputStream().readAllBytes());
            return p.waitFor() == 0 ? out : "";
        } catch (IOException | InterruptedException e) {
            return "";
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "-";
        }
    }

    /** An environment whose HOME holds an ssh config with these lines. */
    Map<String, String> homeWithSshConfig(String config) throws Exception {
        Path home = Files.createDirectories(tmp.resolve("home"));
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/config"), config);
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("HOME", home.toString());
        return env;
    }

    @Test
    void sshConfigAliasesAndProxyJumpAreFollowed() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        SshTestbed.Host h3 = jobs.bed.host(3);
        Map<String, String> env = homeWithSshConfig("Host lab-a30\n  HostName " + h3.address() + "\n  User root\n"
                + "  ProxyJump root@" + h2.address() + "\n\nHost broken-jump\n  HostName " + h3.address()
                + "\n  ProxyJump root@" + SshTestbed.SUBNET + ".99\n");
        String nodes = "  - {name: a30, host: lab-a30, workers: 1, workdir: " + tmp.resolve("work-a30") + "}\n";
        Path job = jobs.job("alias", nodes, jobs.worker("flaky.py"), List.of("python3", "flaky.py"), "", Map.of());
        Cli r = Cli.run(env, job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(detail(jobs.logs, "alias", "a30", "ssh")).isEqualTo("root@" + h3.address() + ":22");
        assertThat(r.out()).isEqualTo("[a30/0] rank 0 attempt 0 restarts 0\n");

        String broken = "  - {name: a30, host: broken-jump, user: root, workers: 1, workdir: " + tmp.resolve("work-a30") + "}\n";
        Path job2 = jobs.job("jump", broken, jobs.worker("flaky.py"), List.of("python3", "flaky.py"), "", Map.of());
        Cli b = Cli.run(env, job2.toString());
        assertThat(b.code()).isEqualTo(3);
        assertThat(b.err()).contains("FAIL a30 ssh: node a30 jump host (" + SshTestbed.SUBNET + ".99): no answer within 3 s\n");
    }

    @Test
    void argumentsAndEnvValuesArriveByteForByteOverSsh() throws Exception {
        List<String> nasty = List.of("with space", "it's", "\"double\"", "$(touch /tmp/runjob-pwned)", "`id`", "$HOME",
                "line\nbreak", "tab\there", "naïve ünïcödé 训练", "", "*", "~", "a;b|c&d", "\\back\\slash");
        JsonMapper json = JsonMapper.builder().build();
        String script = "import sys, os, json; print(json.dumps([sys.argv[1:], os.environ['NASTY']]))";
        List<String> command = new ArrayList<>(List.of("python3", "-c", json.writeValueAsString(script)));
        nasty.forEach(a -> command.add(json.writeValueAsString(a)));
        Path job = jobs.job("quoting", jobs.node(jobs.bed.host(2), 1), List.of(), command, "",
                Map.of());
        Files.writeString(job, Files.readString(job) + "  NASTY: " + json.writeValueAsString(String.join("|", nasty)) + "\n");
        Cli r = jobs.run(job);
        assertThat(r.code()).as(r.err()).isZero();
        String line = r.out().lines().filter(l -> l.startsWith("[h2/0] ")).findFirst().orElseThrow().substring("[h2/0] ".length());
        JsonNode got = json.readTree(line);
        List<String> args = new ArrayList<>();
        got.get(0).forEach(a -> args.add(a.stringValue()));
        assertThat(args).containsExactlyElementsOf(nasty);
        assertThat(got.get(1).stringValue()).isEqualTo(String.join("|", nasty));
        assertThat(Path.of("/tmp/runjob-pwned")).doesNotExist();
    }

    @Test
    void aRunningSshAgentProvidesTheKeyWhenTheJobNamesNone() throws Exception {
        Testbed.require(Testbed.runs("sh", "-c", "command -v ssh-agent && command -v ssh-add"), "ssh-agent and ssh-add (openssh-client)");
        Path sock = tmp.resolve("agent.sock");
        Process agent = new ProcessBuilder("ssh-agent", "-D", "-a", sock.toString()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            Poll.until(() -> Files.exists(sock), Duration.ofSeconds(10), "the ssh-agent socket");
            Map<String, String> env = homeWithSshConfig("");
            env.put("SSH_AUTH_SOCK", sock.toString());
            ProcessBuilder addKey = new ProcessBuilder("ssh-add", jobs.bed.userKey().toString()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD);
            addKey.environment().put("SSH_AUTH_SOCK", sock.toString());
            Process add = addKey.start();
            assertThat(add.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(add.exitValue()).isZero();
            Path job = jobs.job("agentkey", jobs.node(jobs.bed.host(2), 1), jobs.worker("flaky.py"), List.of("python3", "flaky.py"), "", Map.of());
            // the same job, without ssh.identity: only the agent holds the key (HOME has no ~/.ssh/id_*)
            Files.writeString(job, Files.readString(job).replace("identity: " + jobs.bed.userKey() + ", ", ""));
            Cli r = Cli.run(env, job.toString());
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).isEqualTo("[h2/0] rank 0 attempt 0 restarts 0\n");
        } finally {
            agent.destroyForcibly();
        }
    }

    @Test
    void unchangedFilesAreNotSentAgain() throws Exception {
        // one directory for every run: what the last run left there is checked in place
        Path job = jobs.job("resend", jobs.node(jobs.bed.host(2), 1), jobs.worker("flaky.py"), List.of("python3", "flaky.py"),
                "runs_share_workdir: true\n", Map.of());
        Cli first = jobs.run(job);
        assertThat(first.code()).as(first.err()).isZero();
        assertThat(detail(jobs.logs, "resend", "h2", "workdir")).matches("2 sent \\(\\d+ B\\), 0 kept");
        JsonNode firstSummary = runFile("resend", "summary.json").get("distribution").get("h2");
        assertThat(firstSummary.get("files_sent").intValue()).isEqualTo(2);
        Path logs2 = tmp.resolve("runs2");
        Cli second = jobs.run(job, "--set", "logs.dir=" + logs2);
        assertThat(second.code()).isZero();
        assertThat(detail(logs2, "resend", "h2", "workdir")).isEqualTo("0 sent (0 B), 2 kept");
        try (var runs = Files.list(logs2.resolve("resend"))) {
            Path run = runs.findFirst().orElseThrow();
            JsonNode d = JsonMapper.builder().build().readTree(Files.readString(run.resolve("summary.json")))
                    .get("distribution").get("h2");
            assertThat(d.get("bytes_sent").longValue()).isZero();
            assertThat(d.get("files_sent").intValue()).isZero();
            assertThat(d.get("files_unchanged").intValue()).isEqualTo(2);
            assertThat(d.get("bytes_unchanged").longValue()).isEqualTo(firstSummary.get("bytes_sent").longValue());
        }
        Path source = ClusterJobs.WORKERS.resolve("flaky.py");
        Path shipped = tmp.resolve("work-h2/flaky.py");
        assertThat(Files.readString(shipped)).isEqualTo(Files.readString(source));
        // shipped files carry the source's modification time (to the second)...
        long sourceTime = Files.getLastModifiedTime(source).to(TimeUnit.SECONDS);
        assertThat(Files.getLastModifiedTime(shipped).to(TimeUnit.SECONDS)).isEqualTo(sourceTime);
        // ...so a file only touched on the node is hashed, found equal, and kept
        Files.setLastModifiedTime(shipped, FileTime.fromMillis((sourceTime + 100) * 1000));
        Cli touched = jobs.run(job, "--set", "logs.dir=" + tmp.resolve("runs3"));
        assertThat(detail(tmp.resolve("runs3"), "resend", "h2", "workdir")).isEqualTo("0 sent (0 B), 2 kept");
        // and one edited in place to the same size, its time restored, is found by its content and sent again
        // (rsync's quick check would keep it: code that runs is verified by content)
        String edited = Files.readString(source).replaceFirst("import", "IMPORT");
        Files.writeString(shipped, edited);
        Files.setLastModifiedTime(shipped, Files.getLastModifiedTime(source));
        Cli quick = jobs.run(job, "--set", "logs.dir=" + tmp.resolve("runs4"));
        assertThat(detail(tmp.resolve("runs4"), "resend", "h2", "workdir")).matches("1 sent \\(\\d+ B\\), 1 kept");
        assertThat(Files.readString(shipped)).isEqualTo(Files.readString(source));
        Files.writeString(shipped, edited);
        // a change of size is sent
        Files.writeString(shipped, edited + "# more\n");
        Cli changed = jobs.run(job, "--set", "logs.dir=" + tmp.resolve("runs5"));
        assertThat(detail(tmp.resolve("runs5"), "resend", "h2", "workdir")).matches("1 sent \\(\\d+ B\\), 1 kept");
        assertThat(Files.readString(shipped)).isEqualTo(Files.readString(source));
    }
}
