package org.runjob.session;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;

import org.runjob.protocol.Frame;

/** The sending half every agent channel shares: frames written to the agent's stdin, flushed one by one. */
abstract class StreamAgentChannel implements AgentChannel {

    private final String node;
    private final DataOutputStream out;

    StreamAgentChannel(String node, OutputStream agentStdin) {
        this.node = node;
        this.out = new DataOutputStream(new BufferedOutputStream(agentStdin, 65536));
    }

    @Override
    public final String node() {
        return node;
    }

    @Override
    public final synchronized void send(Frame frame) throws IOException {
        frame.writeTo(out);
        out.flush();
    }

    /** Closes the agent's stdin: it then stops its workers and exits. */
    final void closeStdin() {
        try {
            out.close();
        } catch (IOException e) {
            // already closed
        }
    }
}
