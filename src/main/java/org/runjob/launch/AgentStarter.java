package org.runjob.launch;

import java.io.IOException;
import java.util.concurrent.BlockingQueue;

import org.runjob.plan.NodePlan;
import org.runjob.session.AgentChannel;
import org.runjob.session.Event;

/** Starts the agent of one node; its frames arrive on {@code events}. */
@FunctionalInterface
interface AgentStarter {
    AgentChannel start(NodePlan node, BlockingQueue<Event> events) throws IOException;
}
