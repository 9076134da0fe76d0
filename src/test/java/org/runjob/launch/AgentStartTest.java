package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.backends.Backends;
import org.runjob.logs.Console;
import org.runjob.logs.OutputRouter;
import org.runjob.plan.Inventory;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.plan.Planner;
import org.runjob.protocol.Frame;
import org.runjob.session.AgentChannel;
import org.runjob.session.Event;
import org.runjob.session.Interrupts;
import org.runjob.spec.SpecLoader;

/**
 * How agents start: all at once, and START goes out only when every one is up. The failure of an
 * agent to start cannot be provoked once preflight has passed, so these agents are stand-ins that
 * record what they are sent.
 */
class AgentStartTest {

    @TempDir
    Path tmp;

    /** A channel that records frames and whether it was closed, and never answers. */
    static final class Recording implements AgentChannel {
        final String node;
        final List<Frame.Type> sent = new ArrayList<>();
        volatile boolean closed;

        Recording(String node) {
            this.node = node;
        }

        @Override
        public String node() {
            return node;
        }

        @Override
        public void send(Frame frame) {
            sent.add(frame.type());
        }

        @Override
        public void forceClose() {
            closed = true;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    LaunchPlan plan() throws Exception {
        Path job = Files.writeString(tmp.resolve("three.yaml"), "name: three\nnodes:\n"
                + "  - {name: a, host: a.example.org, workers: 2}\n  - {name: b, host: b.example.org, workers: 1}\n"
                + "  - {name: c, host: c.example.org, workers: 1}\nentrypoint: {command: [python3, t.py]}\n");
        return Planner.plan(new SpecLoader(Map.of(), Backends.specs()).load(job, "three.yaml", List.of()).spec(), Inventory.unprobed(), "r1",
                OptionalInt.of(29500));
    }

    @Test
    void whenOneAgentCannotStartNoNodeIsSentStartAndTheOthersAreClosed() throws Exception {
        Map<String, Recording> channels = new ConcurrentHashMap<>();
        AgentStarter starter = (NodePlan node, BlockingQueue<Event> events) -> {
            if (node.name().equals("b")) {
                throw new IOException("exec request refused");
            }
            Recording r = new Recording(node.name());
            channels.put(node.name(), r);
            return r;
        };
        AttemptResult result;
        try (OutputRouter router = new OutputRouter(tmp, new Console(System.out, false, Set.of()))) {
            result = new Supervisor(plan(), 0, starter, router, Interrupts.none(), Clock.systemUTC(), 1000, StatusSink.NONE).run();
        }
        assertThat(channels.keySet()).containsExactlyInAnyOrder("a", "c");
        for (Recording r : channels.values()) {
            assertThat(r.sent).as(r.node).isEmpty();
            assertThat(r.closed).as(r.node).isTrue();
        }
        assertThat(result.rootCause().orElseThrow().rank()).isEqualTo(2);
        assertThat(result.ranks()).extracting(RankResult::rank, RankResult::state, r -> r.outcome().map(Outcome::describe).orElse(""))
                .containsExactly(
                        Tuple.tuple(0, WorkerState.STOPPED, "not started: the job stopped before its workers started: node b's agent did not start"),
                        Tuple.tuple(1, WorkerState.STOPPED, "not started: the job stopped before its workers started: node b's agent did not start"),
                        Tuple.tuple(2, WorkerState.LOST, "lost: cannot start the node's agent: exec request refused"),
                        Tuple.tuple(3, WorkerState.STOPPED, "not started: the job stopped before its workers started: node b's agent did not start"));
    }

    @Test
    void agentsStartTogetherNotOneAfterAnother() throws Exception {
        // each start blocks until all three have begun: one after another, this would never finish
        CountDownLatch all = new CountDownLatch(3);
        Map<String, Recording> channels = new ConcurrentHashMap<>();
        AgentStarter starter = (NodePlan node, BlockingQueue<Event> events) -> {
            all.countDown();
            try {
                if (!all.await(10, TimeUnit.SECONDS)) {
                    throw new IOException("started one at a time");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            Recording r = new Recording(node.name());
            channels.put(node.name(), r);
            // the agent says hello and is done at once, so the supervisor's loop ends
            events.add(new Event.Hello(node.name()));
            events.add(new Event.AgentDone(node.name()));
            return r;
        };
        AttemptResult result;
        try (OutputRouter router = new OutputRouter(tmp, new Console(System.out, false, Set.of()))) {
            result = new Supervisor(plan(), 0, starter, router, Interrupts.none(), Clock.systemUTC(), 1000, StatusSink.NONE).run();
        }
        assertThat(channels.values()).hasSize(3).allSatisfy(r -> assertThat(r.sent).startsWith(Frame.Type.START));
        assertThat(result.ranks()).extracting(RankResult::state).containsOnly(WorkerState.LOST);
    }

    @Test
    void anAgentThatEndsBeforeHelloStopsTheStartEverywhere() throws Exception {
        Map<String, Recording> channels = new ConcurrentHashMap<>();
        AgentStarter starter = (NodePlan node, BlockingQueue<Event> events) -> {
            Recording r = new Recording(node.name());
            channels.put(node.name(), r);
            // c's channel opened, but its JVM died at once (no java, out of memory): no HELLO
            events.add(node.name().equals("c") ? new Event.AgentLost("c", "its agent exited") : new Event.Hello(node.name()));
            return r;
        };
        AttemptResult result;
        try (OutputRouter router = new OutputRouter(tmp, new Console(System.out, false, Set.of()))) {
            result = new Supervisor(plan(), 0, starter, router, Interrupts.none(), Clock.systemUTC(), 1000, StatusSink.NONE).run();
        }
        assertThat(channels.values()).hasSize(3).allSatisfy(r -> {
            assertThat(r.sent).as(r.node).isEmpty();
            assertThat(r.closed).as(r.node).isTrue();
        });
        assertThat(result.rootCause().orElseThrow().rank()).isEqualTo(3);
        assertThat(result.ranks()).extracting(RankResult::rank, RankResult::state, r -> r.outcome().map(Outcome::describe).orElse(""))
                .containsExactly(
                        Tuple.tuple(0, WorkerState.STOPPED, "not started: the job stopped before its workers started: node c's agent did not start"),
                        Tuple.tuple(1, WorkerState.STOPPED, "not started: the job stopped before its workers started: node c's agent did not start"),
                        Tuple.tuple(2, WorkerState.STOPPED, "not started: the job stopped before its workers started: node c's agent did not start"),
                        Tuple.tuple(3, WorkerState.LOST, "lost: its agent ended before it was ready (its agent exited; its stderr is in runjob.log)"));
    }
}
