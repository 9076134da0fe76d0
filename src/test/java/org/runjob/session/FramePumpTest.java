package org.runjob.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.runjob.protocol.Frame;

class FramePumpTest {

    private static byte[] frames(int n) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        DataOutputStream data = new DataOutputStream(out);
        for (int i = 0; i < n; i++) {
            new Frame(Frame.Type.STDOUT, 0, ("line " + i + "\n").getBytes()).writeTo(data);
        }
        data.flush();
        return out.toByteArray();
    }

    @Test
    void aStreamThatEndsWithoutAGoodbyeIsLostWithAReasonThatDoesNotClaimTheAgentExited() throws Exception {
        BlockingQueue<Event> sink = new LinkedBlockingQueue<>();
        new FramePump("n1", sink).start(new ByteArrayInputStream(frames(1)));
        assertThat(sink.poll(10, TimeUnit.SECONDS)).isInstanceOf(Event.Output.class);
        Event end = sink.poll(10, TimeUnit.SECONDS);
        assertThat(end).isEqualTo(new Event.AgentLost("n1", "its agent's stream ended: the agent exited, or the link to it broke"));
    }

    @Test
    @Timeout(60)
    void aRedirectMovesTheEventsOfAFullSinkOnInOrderAndTheReaderGoesOn() throws Exception {
        BlockingQueue<Event> inbox = new ArrayBlockingQueue<>(2);
        FramePump pump = new FramePump("n1", inbox);
        pump.start(new ByteArrayInputStream(frames(50)));
        // the inbox is full and nobody reads it: the reader waits, holding no lock
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (inbox.remainingCapacity() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        BlockingQueue<Event> events = new LinkedBlockingQueue<>();
        pump.redirect(events);
        List<String> lines = new ArrayList<>();
        while (lines.size() < 50) {
            Event e = events.poll(10, TimeUnit.SECONDS);
            assertThat(e).as("line %d", lines.size()).isNotNull();
            if (e instanceof Event.Output o) {
                lines.add(new String(o.bytes()).strip());
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            expected.add("line " + i);
        }
        assertThat(lines).isEqualTo(expected);
        assertThat(inbox).isEmpty();
    }
}
