package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.protocol.Exit;
import org.runjob.protocol.Frame;
import org.runjob.protocol.StartRequest;
import org.runjob.protocol.WorkerStart;

/** The agent in this JVM, driven over pipes by hand, with real worker processes. */
class AgentTest {

    @TempDir
    Path tmp;

    /** An agent on pipes: frames go in through {@link #send}, come out of {@link #in}. */
    static final class Harness {
        final PipedOutputStream toAgent = new PipedOutputStream();
        final DataOutputStream out = new DataOutputStream(toAgent);
        final DataInputStream in;
        final CompletableFuture<Integer> exit;

        Harness(Path spill, int fromAgentBuffer, long spoolMemory) throws Exception {
            PipedInputStream agentIn = new PipedInputStream(toAgent, 1 << 16);
            PipedInputStream fromAgent = new PipedInputStream(fromAgentBuffer);
            PipedOutputStream agentOut = new PipedOutputStream(fromAgent);
            this.in = new DataInputStream(fromAgent);
            Agent agent = new Agent(agentIn, agentOut, new HashMap<>(System.getenv()), spill, spoolMemory);
            this.exit = CompletableFuture.supplyAsync(agent::run);
        }

        void start(WorkerStart w, long heartbeatMs) throws Exception {
            new Frame(Frame.Type.START, -1, new StartRequest(List.of(w), 1000, heartbeatMs).encode()).writeTo(out);
            out.flush();
        }
    }

    @Test
    void aCoordinatorThatDoesNotReadNeverBlocksAWorker() throws Exception {
        Path spill = Files.createDirectories(tmp.resolve("spill"));
        Harness h = new Harness(spill, 1 << 16, 1 << 20);

        Path done = tmp.resolve("done");
        // 32 MiB of output, far more than the pipe (64 KiB) and the spool's memory (1 MiB) hold
        String script = "import sys\nb = b'y' * 65535 + b'\\n'\nfor _ in range(512): sys.stdout.buffer.write(b)\n"
                + "sys.stdout.flush()\nopen('" + done + "', 'w').close()\n";
        h.start(new WorkerStart(0, List.of("python3", "-c", script), Map.of("RANK", "0"), tmp.toString()), 0);

        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!Files.exists(done) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(done).as("the worker finished writing while nobody read the agent").exists();

        DataInputStream in = h.in;
        long bytes = 0;
        Exit exited = null;
        boolean sawDone = false;
        Frame f;
        while (!sawDone && (f = Frame.readFrom(in)) != null) {
            switch (f.type()) {
                case STDOUT -> bytes += f.payload().length;
                case EXITED -> exited = Exit.Report.decode(f.payload()).exit();
                case DONE -> sawDone = true;
                default -> { }
            }
        }
        assertThat(bytes).isEqualTo(512L * 65536);
        assertThat(exited).isEqualTo(new Exit.Code(0, false));
        assertThat(h.exit.get(10, TimeUnit.SECONDS)).isZero();
        try (var files = Files.list(spill)) {
            assertThat(files).as("the spill file is removed").isEmpty();
        }
    }

    @Test
    void aProgramThatIsNotThereIsReportedAsNotStarted() throws Exception {
        Harness h = new Harness(tmp, 1 << 20, 1 << 20);
        h.start(new WorkerStart(0, List.of("no-such-program-here"), Map.of(), tmp.toString()), 0);
        DataInputStream in = h.in;
        Exit exited = null;
        for (Frame f = Frame.readFrom(in); f != null && f.type() != Frame.Type.DONE; f = Frame.readFrom(in)) {
            if (f.type() == Frame.Type.EXITED) {
                exited = Exit.Report.decode(f.payload()).exit();
            }
        }
        assertThat(exited).isEqualTo(new Exit.NotStarted("cannot start no-such-program-here: not found on the node's PATH"));
        assertThat(h.exit.get(10, TimeUnit.SECONDS)).isZero();
    }

    @Test
    void anAgentThatHearsNothingForItsHeartbeatTimeoutStopsItsWorkers() throws Exception {
        Harness h = new Harness(tmp, 1 << 20, 1 << 20);
        h.start(new WorkerStart(0, List.of("sleep", "1000"), Map.of(), tmp.toString()), 500);
        // the coordinator goes silent (a dead link: the stream stays open but nothing arrives)
        DataInputStream in = h.in;
        long pid = -1;
        for (Frame f = Frame.readFrom(in); f != null && f.type() != Frame.Type.DONE; f = Frame.readFrom(in)) {
            if (f.type() == Frame.Type.STARTED) {
                pid = ByteBuffer.wrap(f.payload()).getLong();
            }
        }
        assertThat(pid).isPositive();
        assertThat(h.exit.get(10, TimeUnit.SECONDS)).isZero();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("worker stopped").isFalse();
    }

    @Test
    void closingTheAgentsStdinStopsItsWorkers() throws Exception {
        Harness h = new Harness(tmp, 1 << 20, 1 << 20);
        h.start(new WorkerStart(0, List.of("sleep", "1000"), Map.of(), tmp.toString()), 0);
        DataInputStream in = h.in;
        long pid = -1;
        while (pid < 0) {
            Frame f = Frame.readFrom(in);
            if (f.type() == Frame.Type.STARTED) {
                pid = ByteBuffer.wrap(f.payload()).getLong();
            }
        }
        assertThat(ProcessHandle.of(pid)).isPresent();
        h.toAgent.close();
        CompletableFuture.runAsync(() -> {
            try {
                in.transferTo(OutputStream.nullOutputStream());
            } catch (IOException e) {
                // closed
            }
        });
        assertThat(h.exit.get(10, TimeUnit.SECONDS)).isZero();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    }
}
