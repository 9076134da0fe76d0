package org.runjob.session;

import java.io.IOException;

import org.runjob.protocol.Frame;

/**
 * The coordinator's end of one node agent: frames go out with {@link #send}; what comes back is put
 * on the supervisor's event queue by the channel itself. Local child processes and SSH exec channels
 * implement it alike.
 */
public interface AgentChannel extends AutoCloseable {

    String node();

    void send(Frame frame) throws IOException;

    /** True when the agent sent nothing, not even a PONG, for {@code nanos}. */
    default boolean silentFor(long nanos) {
        return false;
    }

    /** Last resort when the agent does not answer: end it, and whatever of its workers can be reached. */
    void forceClose();

    @Override
    void close();
}
