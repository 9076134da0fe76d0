package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;
import org.runjob.protocol.Frame;

/**
 * Bytes an agent cannot take end it with exit {@value Agent#EXIT_FAULT} and a reason, on stderr and
 * in a NOTICE to the coordinator; never a silent exit 0.
 * It replaces System.err and asserts what the agent wrote there exactly: nothing runs beside it.
 */
@Isolated
class AgentFaultTest {

    @TempDir
    Path tmp;

    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    private PrintStream realErr;

    @BeforeEach
    void captureStderr() {
        realErr = System.err;
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreStderr() {
        System.setErr(realErr);
    }

    /** What the agent sent (its frames' types and the NOTICE's text) and how it exited, after {@code bytes}. */
    private record Ended(List<Frame.Type> frames, String notice, int exit, String stderr) {
    }

    private Ended feed(byte[] bytes) throws Exception {
        PipedOutputStream toAgent = new PipedOutputStream();
        PipedInputStream agentIn = new PipedInputStream(toAgent, 1 << 16);
        PipedInputStream fromAgent = new PipedInputStream(1 << 16);
        PipedOutputStream agentOut = new PipedOutputStream(fromAgent);
        Agent agent = new Agent(agentIn, agentOut, new HashMap<>(System.getenv()), tmp, 1 << 20);
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(agent::run);
        DataInputStream in = new DataInputStream(fromAgent);
        List<Frame.Type> types = new ArrayList<>();
        types.add(Frame.readFrom(in).type());
        toAgent.write(bytes);
        toAgent.close(); // what follows the bytes is the channel's end
        String notice = "";
        for (Frame f = Frame.readFrom(in); f != null; f = Frame.readFrom(in)) {
            types.add(f.type());
            if (f.type() == Frame.Type.NOTICE) {
                notice = new String(f.payload(), StandardCharsets.UTF_8);
            }
            if (f.type() == Frame.Type.DONE) {
                break;
            }
        }
        return new Ended(types, notice, exit.get(10, TimeUnit.SECONDS), stderr.toString(StandardCharsets.UTF_8));
    }

    private static byte[] frame(int type, int rank, int length, byte[] payload) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(b);
        out.writeByte(type);
        out.writeInt(rank);
        out.writeInt(length);
        out.write(payload);
        return b.toByteArray();
    }

    @Test
    void anUnknownFrameTypeEndsTheAgentWithItsReason() throws Exception {
        Ended e = feed(frame(99, -1, 0, new byte[0]));
        assertThat(e.exit()).isEqualTo(Agent.EXIT_FAULT);
        assertThat(e.frames()).containsExactly(Frame.Type.HELLO, Frame.Type.NOTICE, Frame.Type.DONE);
        assertThat(e.notice()).isEqualTo("agent: bad frame from runjob: unknown frame type 99 (a runjob of another version?): stopping every worker");
        assertThat(e.stderr()).isEqualTo("runjob agent: bad frame from runjob: unknown frame type 99 (a runjob of another version?)\n");
    }

    @Test
    void aBadLengthEndsTheAgentWithItsReason() throws Exception {
        Ended e = feed(frame(Frame.Type.PING.code(), -1, -5, new byte[0]));
        assertThat(e.exit()).isEqualTo(Agent.EXIT_FAULT);
        assertThat(e.notice()).isEqualTo("agent: bad frame from runjob: bad length -5 in a PING frame (at most 16777216)"
                + " (a runjob of another version?): stopping every worker");
    }

    @Test
    void aFrameThatEndsEarlyEndsTheAgentWithItsReason() throws Exception {
        Ended e = feed(frame(Frame.Type.LEASE.code(), -1, 100, "query".getBytes(StandardCharsets.UTF_8)));
        assertThat(e.exit()).isEqualTo(Agent.EXIT_FAULT);
        assertThat(e.notice()).startsWith("agent: bad frame from runjob: the stream ended inside a LEASE frame's payload");
    }

    @Test
    void aFrameMeantForTheCoordinatorIsRefused() throws Exception {
        Ended e = feed(frame(Frame.Type.HELLO.code(), -1, 0, new byte[0]));
        assertThat(e.exit()).isEqualTo(Agent.EXIT_FAULT);
        assertThat(e.notice()).startsWith("agent: bad frame from runjob: a HELLO frame goes to the coordinator, not to an agent");
    }

    @Test
    void aRequestWhosePayloadIsNotItsGrammarIsRefusedNamingBoth() throws Exception {
        Ended e = feed(frame(Frame.Type.CONNECT.code(), -1, 1, "x".getBytes(StandardCharsets.UTF_8)));
        assertThat(e.exit()).isEqualTo(Agent.EXIT_FAULT);
        assertThat(e.notice()).isEqualTo("agent: bad frame from runjob: a CONNECT payload that is no request: request format 120,"
                + " expected 1 (a runjob of another version?): stopping every worker");
        // a request of protocol 3 (text) where protocol 4 sends a record
        Ended lease = feed(frame(Frame.Type.LEASE.code(), -1, 6, "query\n".getBytes(StandardCharsets.UTF_8)));
        assertThat(lease.exit()).isEqualTo(Agent.EXIT_FAULT);
        assertThat(lease.notice()).startsWith("agent: bad frame from runjob: a LEASE payload that is no request: LEASE request format 113,"
                + " expected 1");
    }

    @Test
    void aStartOfAnotherFormatIsRefusedNamingIt() throws Exception {
        Ended e = feed(frame(Frame.Type.START.code(), -1, 1, new byte[] {9}));
        assertThat(e.exit()).isEqualTo(Agent.EXIT_FAULT);
        assertThat(e.notice()).startsWith("agent: bad frame from runjob: START payload format 9, expected 5");
    }

    @Test
    void aClosedChannelIsNoFault() throws Exception {
        Ended e = feed(new byte[0]);
        assertThat(e.exit()).isZero();
        assertThat(e.frames()).containsExactly(Frame.Type.HELLO, Frame.Type.DONE);
        assertThat(e.stderr()).isEmpty();
    }
}
