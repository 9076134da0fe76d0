package org.runjob.launch;

import java.io.IOException;

import org.runjob.agent.Frame;

/**
 * The coordinator's end of one node agent: frames go out with {@link #send}; what comes back is put
 * on the supervisor's event queue by the channel itself. Local child processes and SSH exec channels
 * implement it alike.
 */
interface AgentChannel extends AutoCloseable {

    String node();

    void send(Frame frame) throws IOException;

    /** Last resort when the agent does not answer: end it, and whatever of its workers can be reached. */
    void forceClose();

    @Override
    void close();
}
