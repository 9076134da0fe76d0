package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class SecureLinkTest {

    /** Two ends joined by a loopback socket, what each sends also copied into {@code c2sWire} and {@code s2cWire}. */
    /** The client's socket of the last {@link #pair}. */
    private Socket clientSocket;

    private SecureLink[] pair(byte[] clientSecret, byte[] serverSecret, ByteArrayOutputStream c2sWire, ByteArrayOutputStream s2cWire)
            throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<SecureLink> server = CompletableFuture.supplyAsync(() -> {
                try {
                    Socket s = listener.accept();
                    return SecureLink.server(s.getInputStream(), tee(s.getOutputStream(), s2cWire), s, serverSecret);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            Socket c = new Socket(listener.getInetAddress(), listener.getLocalPort());
            c.setSoTimeout(10_000);
            clientSocket = c;
            SecureLink client = SecureLink.client(c.getInputStream(), tee(c.getOutputStream(), c2sWire), c, clientSecret);
            return new SecureLink[] {client, server.get(10, TimeUnit.SECONDS)};
        }
    }

    private SecureLink[] pair(byte[] clientSecret, byte[] serverSecret) throws Exception {
        return pair(clientSecret, serverSecret, new ByteArrayOutputStream(), new ByteArrayOutputStream());
    }

    private static OutputStream tee(OutputStream out, ByteArrayOutputStream copy) {
        return new OutputStream() {
            @Override
            public synchronized void write(int b) throws IOException {
                copy.write(b);
                out.write(b);
            }

            @Override
            public void flush() throws IOException {
                out.flush();
            }
        };
    }

    @Test
    void recordsGoBothWaysWithTheirType() throws Exception {
        byte[] k = SecureLink.newSecret();
        SecureLink[] ends = pair(k, k);
        ends[0].send(HostRecords.Type.EXEC, HostRecords.argv(List.of("python3", "-c", "print(1)")));
        SecureLink.Record r = ends[1].receive();
        assertThat(r.kind()).contains(HostRecords.Type.EXEC);
        assertThat(HostRecords.argv(r.payload())).containsExactly("python3", "-c", "print(1)");
        ends[1].send(HostRecords.Type.STDOUT, "1\n");
        assertThat(ends[0].receive().text()).isEqualTo("1\n");
    }

    @Test
    void aClientWithoutTheSecretIsRefusedAtHello() {
        assertThatThrownBy(() -> pair(SecureLink.newSecret(), SecureLink.newSecret())).isInstanceOf(ProtocolException.class)
                .hasMessage("the other side did not say hello");
    }

    @Test
    void aRecordedServerCannotBeReplayedToANewClient() throws Exception {
        byte[] k = SecureLink.newSecret();
        ByteArrayOutputStream s2c = new ByteArrayOutputStream();
        SecureLink[] ends = pair(k, k, new ByteArrayOutputStream(), s2c);
        ends[1].send(HostRecords.Type.STARTED, "42");
        byte[] recorded = s2c.toByteArray();
        assertThatThrownBy(() -> SecureLink.client(new ByteArrayInputStream(recorded), new ByteArrayOutputStream(), () -> { }, k))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("failed its check");
    }

    @Test
    void theWireCarriesNoPlaintext() throws Exception {
        byte[] k = SecureLink.newSecret();
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        SecureLink[] ends = pair(k, k, wire, new ByteArrayOutputStream());
        ends[0].send(HostRecords.Type.STDIN, "WANDB_API_KEY=secret-value");
        assertThat(ends[1].receive().text()).isEqualTo("WANDB_API_KEY=secret-value");
        assertThat(wire.toString(StandardCharsets.ISO_8859_1)).startsWith(SecureLink.MAGIC).doesNotContain("secret-value");
    }

    @Test
    void aClosedLinkReadsAsItsEndAndACutOneAsCut() throws Exception {
        byte[] k = SecureLink.newSecret();
        SecureLink[] ends = pair(k, k);
        ends[0].send(HostRecords.Type.STDIN, "last");
        ends[0].close();
        assertThat(ends[1].receive().text()).isEqualTo("last");
        assertThat(ends[1].receive()).isNull();
        assertThat(ends[1].receive()).isNull();
        assertThatThrownBy(() -> ends[0].send(HostRecords.Type.STDIN, "after")).isInstanceOf(IOException.class).hasMessage("the link is closed");

        SecureLink[] cut = pair(k, k);
        cut[0].send(HostRecords.Type.STDIN, "before");
        clientSocket.close(); // a TCP close with no close record: a dead peer, or one forged by someone on the path
        assertThat(cut[1].receive().text()).isEqualTo("before");
        assertThatThrownBy(cut[1]::receive).isInstanceOf(EOFException.class).hasMessage("the link was cut: it ended without a close record");
    }

    @Test
    void eachNodeHasItsOwnKeyAndOneNodesKeyOpensNoOther() throws Exception {
        byte[] k = SecureLink.newSecret();
        assertThat(SecureLink.nodeKey(k, "h1")).hasSize(32).isNotEqualTo(SecureLink.nodeKey(k, "h2")).isNotEqualTo(k)
                .isEqualTo(SecureLink.nodeKey(k, "h1"));
        assertThatThrownBy(() -> pair(SecureLink.nodeKey(k, "h1"), SecureLink.nodeKey(k, "h2"))).isInstanceOf(ProtocolException.class)
                .hasMessage("the other side did not say hello");
        SecureLink[] ends = pair(SecureLink.nodeKey(k, "h2"), SecureLink.nodeKey(k, "h2"));
        ends[0].send(HostRecords.Type.STOP, new byte[0]);
        assertThat(ends[1].receive().kind()).contains(HostRecords.Type.STOP);
    }

    @Test
    void eachConnectionSendsAFreshX25519Key() throws Exception {
        byte[] k = SecureLink.newSecret();
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        ByteArrayOutputStream second = new ByteArrayOutputStream();
        pair(k, k, first, new ByteArrayOutputStream());
        pair(k, k, second, new ByteArrayOutputStream());
        int from = SecureLink.MAGIC.length() + SecureLink.KEY_BYTES;
        byte[] a = Arrays.copyOfRange(first.toByteArray(), from, from + SecureLink.PUBLIC_KEY_BYTES);
        byte[] b = Arrays.copyOfRange(second.toByteArray(), from, from + SecureLink.PUBLIC_KEY_BYTES);
        // the X.509 header of an X25519 key, then 32 bytes of key that differ per connection
        assertThat(HexFormat.of().formatHex(a, 0, 12)).isEqualTo("302a300506032b656e032100");
        assertThat(a).isNotEqualTo(b);
    }

    @Test
    void aHostedRunLineRoundTrips() {
        byte[] k = SecureLink.newSecret();
        HostedRun run = HostedRun.parse(new HostedRun(k, Map.of("h1", new HostedRun.Endpoint("10.0.0.1", 4242))).toLine());
        assertThat(run.secret()).isEqualTo(k);
        assertThat(run.hosts()).containsExactly(Map.entry("h1", new HostedRun.Endpoint("10.0.0.1", 4242)));
        assertThatThrownBy(() -> HostedRun.parse("not a line")).isInstanceOf(IllegalArgumentException.class);
    }
}
