package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.runjob.protocol.HostRecords;
import org.runjob.protocol.ProtocolException;
import org.runjob.protocol.SecureLink;
import org.runjob.testbed.Poll;

/** A node host in this JVM: it starts programs only for a holder of the run's secret, carries their streams, and ends on STOP. */
class NodeHostTest {

    @Test
    void startsProgramsForTheSecretsHolderOnlyAndEndsOnStop() throws Exception {
        byte[] secret = SecureLink.newSecret();
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(said, true, StandardCharsets.US_ASCII);
        CompletableFuture<Integer> host = CompletableFuture.supplyAsync(() -> NodeHost.main(List.of("r1"),
                new ByteArrayInputStream((SecureLink.hex(secret) + "\n").getBytes(StandardCharsets.US_ASCII)), out));
        Poll.until(() -> said.toString(StandardCharsets.US_ASCII).startsWith(HostRecords.LISTENING), Duration.ofSeconds(10), "the host's port");
        int port = Integer.parseInt(said.toString(StandardCharsets.US_ASCII).substring(HostRecords.LISTENING.length()).trim());

        assertThatThrownBy(() -> link(port, SecureLink.newSecret())).isInstanceOf(ProtocolException.class);

        try (SecureLink link = link(port, secret)) {
            link.send(HostRecords.Type.EXEC, HostRecords.argv(List.of("sh", "-c", "read line; echo \"got $line\"; echo oops >&2; exit 3")));
            assertThat(link.receive().kind()).contains(HostRecords.Type.STARTED);
            link.send(HostRecords.Type.STDIN, "hello\n");
            link.send(HostRecords.Type.STDIN_EOF, new byte[0]);
            StringBuilder stdout = new StringBuilder();
            StringBuilder stderr = new StringBuilder();
            String exit = null;
            while (exit == null) {
                SecureLink.Record r = link.receive();
                byte type = r.type();
                switch (r.kind().orElseThrow(() -> new AssertionError("record " + type))) {
                    case STDOUT -> stdout.append(r.text());
                    case STDERR -> stderr.append(r.text());
                    case EXIT -> exit = r.text();
                    default -> throw new AssertionError("record " + r.type());
                }
            }
            assertThat(stdout).hasToString("got hello\n");
            assertThat(stderr).hasToString("oops\n");
            assertThat(exit).isEqualTo("3");
        }
        // the program over, the host closes the connection after EXIT: a silent client (its node lost power) holds nothing
        try (SecureLink link = link(port, secret)) {
            link.send(HostRecords.Type.EXEC, HostRecords.argv(List.of("true")));
            assertThat(link.receive().kind()).contains(HostRecords.Type.STARTED);
            assertThat(link.receive().kind()).contains(HostRecords.Type.EXIT);
            assertThat(link.receive()).as("the end of the connection, not a 10 s read timeout").isNull();
        }

        // a connection that never proves the secret is cut at the handshake's deadline, however steadily its bytes come
        try (Socket slow = new Socket(InetAddress.getLoopbackAddress(), port)) {
            // the right magic, then the client's key a byte at a time: each read gets a byte well within any per-read timeout
            slow.getOutputStream().write(SecureLink.MAGIC.getBytes(StandardCharsets.US_ASCII));
            long t0 = System.nanoTime();
            boolean cut = false;
            while (!cut && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30)) {
                try {
                    slow.getOutputStream().write('x');
                    slow.getOutputStream().flush();
                    Thread.sleep(500);
                } catch (IOException e) {
                    cut = true;
                }
            }
            assertThat(cut).as("a byte every 0.5 s for 30 s is cut off").isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(NodeHost.HANDSHAKE_MS / 1000 + 5));
        }

        try (SecureLink link = link(port, secret)) {
            link.send(HostRecords.Type.STOP, new byte[0]);
            assertThat(link.receive().kind()).contains(HostRecords.Type.EXIT);
        }
        assertThat(host.get(10, TimeUnit.SECONDS)).isZero();
    }

    private static SecureLink link(int port, byte[] secret) throws Exception {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
        s.setSoTimeout(10_000);
        OutputStream o = s.getOutputStream();
        return SecureLink.client(s.getInputStream(), o, s, secret);
    }
}
