package org.runjob.launch;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;

import org.runjob.agent.Exit;
import org.runjob.agent.Frame;

/**
 * Reads an agent's frames and puts them on the supervisor's queue as events, on its own thread.
 * The stream's end is {@link Event.AgentDone} after a DONE frame, else {@link Event.AgentLost}.
 * Remembers each worker's pid and process-tree token (from STARTED) for last-resort cleanup.
 */
final class FramePump {

    private final String node;
    private final Map<Long, String> workerTokens = new ConcurrentHashMap<>();

    FramePump(String node) {
        this.node = node;
    }

    Map<Long, String> workerTokens() {
        return workerTokens;
    }

    void start(InputStream stream, BlockingQueue<Event> events) {
        Thread t = new Thread(() -> pump(stream, events), "agent-" + node);
        t.setDaemon(true);
        t.start();
    }

    private void pump(InputStream stream, BlockingQueue<Event> events) {
        boolean done = false;
        String reason = "its agent exited";
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(stream, 65536))) {
            Frame f;
            while ((f = Frame.readFrom(in)) != null) {
                switch (f.type()) {
                    case STARTED -> {
                        long pid = ByteBuffer.wrap(f.payload()).getLong();
                        workerTokens.put(pid, new String(f.payload(), 8, f.payload().length - 8, StandardCharsets.UTF_8));
                        events.add(new Event.Started(node, f.rank(), pid));
                    }
                    case STDOUT -> events.add(new Event.Output(node, f.rank(), false, f.payload()));
                    case STDERR -> events.add(new Event.Output(node, f.rank(), true, f.payload()));
                    case EXITED -> events.add(new Event.Exited(node, f.rank(), Exit.decode(f.payload())));
                    case HELLO -> events.add(new Event.Hello(node));
                    case DONE -> done = true;
                    default -> { }
                }
            }
        } catch (IOException e) {
            reason = "the connection to its agent broke: " + e.getMessage();
        }
        events.add(done ? new Event.AgentDone(node) : new Event.AgentLost(node, reason));
    }
}
