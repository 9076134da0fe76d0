package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.runjob.protocol.AgentOptions;
import org.runjob.protocol.NodeFacts;

/** An agent asked to report variables ({@code --report NAME}) puts them, and its CUDA_VISIBLE_DEVICES, in HELLO; others do not. */
class ReportedVariablesTest {

    private static final Map<String, String> ENV = Map.of("CUDA_VISIBLE_DEVICES", "1,3", "SLURM_STEP_GPUS", "5,7", "HOME", "/nowhere");

    @Test
    void theAskedForVariablesAndTheVisibleDevicesAreReported() {
        AgentOptions options = AgentOptions.parse(List.of("--report", "SLURM_STEP_GPUS", "--report", "NOT_SET"));
        assertThat(options.report()).containsExactly("SLURM_STEP_GPUS", "NOT_SET");
        assertThat(AgentOptions.parse(options.args())).isEqualTo(options);
        NodeFacts facts = WorkdirGuard.check(options, ENV);
        assertThat(facts.get(NodeFacts.VISIBLE_DEVICES)).contains("1,3");
        assertThat(facts.variableValue("SLURM_STEP_GPUS")).contains("5,7");
        assertThat(facts.variableValue("NOT_SET")).isEmpty();
        assertThat(facts.values().keySet()).filteredOn(k -> k.startsWith("env.")).containsExactly("env.SLURM_STEP_GPUS");
    }

    @Test
    void anAgentAskedForNothingReportsNoneOfIt() {
        NodeFacts facts = WorkdirGuard.check(AgentOptions.NONE, ENV);
        assertThat(facts.get(NodeFacts.VISIBLE_DEVICES)).isEmpty();
        assertThat(facts.values().keySet()).noneMatch(k -> k.startsWith("env."));
    }

    @Test
    void onlyVariableNamesMayBeAskedFor() {
        assertThatThrownBy(() -> AgentOptions.parse(List.of("--report", "A;rm -rf")))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("agent option --report needs a variable name, not A;rm -rf");
        assertThat(new AgentOptions(Optional.empty(), Optional.empty(), Optional.empty()).report()).isEmpty();
    }
}
