package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.protocol.Answer;
import org.runjob.protocol.HealthRequest;

class HealthCheckTest {

    @TempDir
    Path dir;

    private static final Map<String, String> ENV = Map.of("PATH", "/usr/bin:/bin");

    @Test
    void commandsRunInTheRunsDirectoryWithTheRequestsEnvAndTheFirstFailureIsTheAnswer() {
        HealthRequest ok = new HealthRequest(List.of("test \"$RUNJOB_NODE\" = h2", "test \"$PWD\" = '" + dir + "'"), List.of(), 10_000,
                Map.of("RUNJOB_NODE", "h2"));
        assertThat(HealthCheck.answer(ok, ENV, dir)).isEqualTo(Answer.done());
        HealthRequest bad = new HealthRequest(List.of("true", "echo one; echo 'disk is full' >&2; exit 3", "touch ran-after"), List.of(),
                10_000, Map.of());
        assertThat(HealthCheck.answer(bad, ENV, dir))
                .isEqualTo(Answer.failed("health check 'echo one; echo 'disk is full' >&2; exit 3' exited 3: disk is full"));
        assertThat(dir.resolve("ran-after")).doesNotExist();
    }

    @Test
    void aCommandStillRunningAtTheDeadlineFailsTheCheck() {
        HealthRequest slow = new HealthRequest(List.of("sleep 30"), List.of(), 300, Map.of());
        long start = System.nanoTime();
        assertThat(HealthCheck.answer(slow, ENV, dir)).isEqualTo(Answer.failed("health check 'sleep 30' did not end within 0 s"));
        assertThat((System.nanoTime() - start) / 1_000_000_000L).isLessThan(10);
    }

    @Test
    void nvidiaSmisEccCountsJudgeOnlyTheGpusTheWorkersUse() {
        String csv = "0, 0\n1, 2\n2, [N/A]\ngarbage line\n";
        assertThat(HealthCheck.eccProblem(List.of(0, 2), csv)).isEmpty();
        assertThat(HealthCheck.eccProblem(List.of(0, 1), csv)).isEqualTo(Optional.of("GPU 1 has 2 uncorrectable ECC errors (nvidia-smi)"));
        assertThat(HealthCheck.eccProblem(List.of(3), csv)).isEqualTo(Optional.of("GPU 3 is missing: nvidia-smi does not list it"));
    }

    @Test
    void theRequestTravelsWhole() {
        HealthRequest r = new HealthRequest(List.of("a b", "c"), List.of(0, 3), 60_000, Map.of("K", "v w"));
        assertThat(HealthRequest.decode(r.encode())).isEqualTo(r);
    }
}
