package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.distribute.Sha256;
import org.runjob.protocol.Answer;
import org.runjob.protocol.FileManifest;
import org.runjob.protocol.FileNeeds;
import org.runjob.testbed.Poll;

/** One workdir serves the run's files to another over a real socket; what the receiver keeps, and what it refuses. */
class FileRelayTest {

    static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    /** The relay's handshake deadline in these tests. */
    static final int HANDSHAKE_MS = 2000;

    @TempDir
    Path tmp;
    Path from;
    Path to;
    FileManifest manifest;
    FileRelay server;
    int port;

    @BeforeEach
    void holder() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("src"));
        Files.write(src.resolve("data.bin"), pattern(3 << 20));
        Files.writeString(src.resolve("train.py"), "print('hi')\n");
        from = Files.createDirectories(tmp.resolve("a"));
        to = Files.createDirectories(tmp.resolve("b"));
        manifest = new FileManifest(List.of(
                new FileManifest.Entry("data/data.bin", 3 << 20, 1_700_000_000L, 0640, Sha256.of(src.resolve("data.bin"))),
                new FileManifest.Entry("train.py", 12, 1_700_000_100L, 0750, Sha256.of(src.resolve("train.py")))));
        FileReceiver a = new FileReceiver(from);
        assertThat(a.manifest(manifest.encode())).isEqualTo(FileNeeds.of(List.of(true, true)));
        a.data(0, Files.readAllBytes(src.resolve("data.bin")));
        a.data(0, new byte[0]);
        a.data(1, Files.readAllBytes(src.resolve("train.py")));
        a.data(1, new byte[0]);
        assertThat(said(a.data(-1, new byte[0]))).isEqualTo("ok " + ((3 << 20) + 12));
        server = new FileRelay(a, HANDSHAKE_MS);
        Answer serving = server.serve(KEY);
        assertThat(serving.ok()).isTrue();
        port = (int) serving.number();
        assertThat(port).isPositive();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + (i >> 12));
        }
        return b;
    }

    FileReceiver b;

    /** One receiver for the whole test, as one agent is for a run's attempts. */
    String fetch(String key) {
        if (b == null) {
            b = new FileReceiver(to);
        }
        b.manifest(manifest.encode());
        return said(new FileRelay(b).fetch("127.0.0.1", port, key));
    }

    /** An answer as a line: "ok BYTES" or "error REASON". */
    private static String said(Answer a) {
        return a.ok() ? "ok " + a.number() : "error " + a.failure().get();
    }

    List<String> leftIn(Path dir) throws Exception {
        try (var s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }

    @Test
    void manyIdleConnectionsCostAtMostMaxPeersThreadsAndLeaveTheRelayServing() throws Exception {
        List<Socket> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 2 * FileRelay.MAX_PEERS; i++) {
                Socket s = new Socket();
                try {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                } catch (IOException e) {
                    // the backlog is full: that connection waits or is dropped, as it should
                }
                idle.add(s);
            }
            Poll.until(() -> peerThreads() == FileRelay.MAX_PEERS, Duration.ofSeconds(10), "every peer slot taken by an idle connection");
            assertThat(peerThreads()).isEqualTo(FileRelay.MAX_PEERS);
        } finally {
            for (Socket s : idle) {
                s.close();
            }
        }
        // the idle ones end as their sockets close: a peer with the key is served
        assertThat(fetch(KEY)).isEqualTo("ok " + ((3 << 20) + 12));
    }

    @Test
    void aPeerThatTricklesItsProofIsCutAtTheDeadlineNotKeptByEachByte() throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            assertThat(s.getInputStream().readNBytes(32)).hasSize(32);
            // one byte of the 32-byte proof every 200 ms: each read is quick, the whole would take 6.4 s
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            boolean cut = false;
            while (!cut && System.nanoTime() < deadline) {
                try {
                    s.getOutputStream().write(0);
                    s.getOutputStream().flush();
                    TimeUnit.MILLISECONDS.sleep(200); // the trickle's pace, not a wait for the relay
                } catch (IOException e) {
                    cut = true;
                }
            }
            assertThat(cut).as("the relay closed a peer still proving its key after " + HANDSHAKE_MS + " ms").isTrue();
        }
        assertThat(fetch(KEY)).isEqualTo("ok " + ((3 << 20) + 12));
    }

    private static long peerThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("relay-peer") && t.isAlive()).count();
    }

    @Test
    void aPeerWithTheKeyGetsEveryFileWithItsBytesModeAndTime() throws Exception {
        assertThat(fetch(KEY)).isEqualTo("ok " + ((3 << 20) + 12));
        assertThat(Files.readAllBytes(to.resolve("data/data.bin"))).isEqualTo(pattern(3 << 20));
        assertThat(Files.readString(to.resolve("train.py"))).isEqualTo("print('hi')\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(to.resolve("data/data.bin")))).isEqualTo("rw-r-----");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(to.resolve("train.py")))).isEqualTo("rwxr-x---");
        assertThat(Files.getLastModifiedTime(to.resolve("train.py")).to(TimeUnit.SECONDS)).isEqualTo(1_700_000_100L);
        assertThat(leftIn(to)).containsExactly("data/data.bin", "train.py");
        // only the files still needed are asked for: a second fetch after one file is there sends the other
        Files.delete(to.resolve("train.py"));
        assertThat(fetch(KEY)).isEqualTo("ok 12");
    }

    @Test
    void aWrongKeyGetsNothing() throws Exception {
        String wrong = "f" + KEY.substring(1);
        assertThat(fetch(wrong)).isEqualTo("error relay from 127.0.0.1:" + port + ": the peer refused the relay key");
        assertThat(leftIn(to)).isEmpty();
    }

    @Test
    void bytesChangedOnTheServingNodeArriveDamagedAndAreNotKept() throws Exception {
        byte[] changed = pattern(3 << 20);
        changed[12345] ^= 1;
        Files.write(from.resolve("data/data.bin"), changed);
        String answer = fetch(KEY);
        assertThat(answer).startsWith("error cannot write data/data.bin: arrived damaged (3145728 of 3145728 bytes, SHA-256 ");
        assertThat(leftIn(to)).isEmpty();
        // the same receiver takes the next attempt from the start
        Files.write(from.resolve("data/data.bin"), pattern(3 << 20));
        assertThat(fetch(KEY)).isEqualTo("ok " + ((3 << 20) + 12));
        assertThat(Files.readAllBytes(to.resolve("data/data.bin"))).isEqualTo(pattern(3 << 20));
    }

    @Test
    void aSymlinkOnTheServingNodeIsNotFollowed() throws Exception {
        Path secret = Files.writeString(tmp.resolve("secret"), "not for peers\n");
        Files.delete(from.resolve("train.py"));
        Files.createSymbolicLink(from.resolve("train.py"), secret);
        String answer = fetch(KEY);
        assertThat(answer).startsWith("error relay from 127.0.0.1:" + port + ": cannot read train.py: ");
        assertThat(leftIn(to)).containsExactly("data/data.bin");
        assertThat(new String(Files.readAllBytes(to.resolve("data/data.bin")), StandardCharsets.ISO_8859_1))
                .doesNotContain("not for peers");
    }

    @Test
    void aClosedServerIsRefusedAndTheReceiverKeepsNothing() throws Exception {
        server.closeServer();
        assertThat(fetch(KEY)).isEqualTo("error relay from 127.0.0.1:" + port + ": Connection refused");
        assertThat(leftIn(to)).isEmpty();
    }

    @Test
    void theRelaysListeningSocketIsGoneWhenCloseServerReturns() throws Exception {
        // a socket closed while its acceptor blocks in accept stays open until that thread leaves
        // accept; closeServer waits for it, so this process holds the relay's listening socket no more
        // when it returns. Judged by the kernel's socket (its inode) among this process's descriptors,
        // not by a connect (another test of this build may bind the freed port at once, and a connect
        // to a free local port can meet itself) nor by /proc/net (a process another test starts in that
        // moment inherits every descriptor until its exec closes them).
        for (int i = 0; i < 100; i++) {
            int p = (int) server.serve(KEY).number();
            List<String> listening = listeningInodes(p);
            assertThat(listening).as("attempt %d: the relay listens on port %d", i, p).isNotEmpty();
            assertThat(heldHere(listening)).as("attempt %d: this process holds the relay's socket", i).isNotEmpty();
            server.closeServer();
            assertThat(heldHere(listening)).as("attempt %d: port %d still held after closeServer", i, p).isEmpty();
        }
    }

    /** Which of the socket inodes {@code inodes} this process holds a descriptor of, from /proc/self/fd. */
    private static List<String> heldHere(List<String> inodes) throws IOException {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : fds) {
                String target;
                try {
                    target = Files.readSymbolicLink(fd).toString();
                } catch (IOException e) {
                    continue; // closed since the listing (the listing's own descriptor among them)
                }
                for (String inode : inodes) {
                    if (target.equals("socket:[" + inode + "]")) {
                        out.add(inode);
                    }
                }
            }
        }
        return out;
    }

    /** The inodes of the sockets in state LISTEN on local port {@code port} (IPv4 and IPv6), from /proc/net. */
    private static List<String> listeningInodes(int port) throws IOException {
        String hexPort = String.format(":%04X", port);
        List<String> out = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path t = Path.of(table);
            if (!Files.exists(t)) {
                continue;
            }
            List<String> lines = Files.readAllLines(t);
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 9 && f[1].endsWith(hexPort) && f[3].equals("0A")) {
                    out.add(f[9]);
                }
            }
        }
        return out;
    }
}
