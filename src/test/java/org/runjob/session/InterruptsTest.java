package org.runjob.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class InterruptsTest {

    @Test
    void aBareFirstInterruptIsExplainedOnceByWhoeverWasNamed() {
        Interrupts interrupts = Interrupts.none();
        AtomicInteger asked = new AtomicInteger();
        interrupts.explainedBy(() -> {
            asked.incrementAndGet();
            return Optional.of("Slurm requeued job 12");
        });
        assertThat(interrupts.explained()).as("before any interrupt").isEmpty();
        interrupts.raise();
        interrupts.raise();
        assertThat(interrupts.explained()).contains("Slurm requeued job 12");
        assertThat(interrupts.explained()).contains("Slurm requeued job 12");
        assertThat(asked).hasValue(1);
        assertThat(interrupts.count()).isEqualTo(2);
    }

    @Test
    void anInterruptThatSaysWhyIsNotExplainedAgain() {
        Interrupts interrupts = Interrupts.none();
        AtomicInteger asked = new AtomicInteger();
        interrupts.explainedBy(() -> {
            asked.incrementAndGet();
            return Optional.of("never");
        });
        interrupts.raise(Interrupts.TIME_LIMIT);
        assertThat(interrupts.explained()).contains(Interrupts.TIME_LIMIT);
        assertThat(asked).hasValue(0);
    }

    @Test
    void anExplainerThatFindsNothingOrFailsLeavesAPlainInterrupt() {
        Interrupts nothing = Interrupts.none();
        nothing.explainedBy(Optional::empty);
        nothing.raise();
        assertThat(nothing.explained()).isEmpty();
        Interrupts failing = Interrupts.none();
        failing.explainedBy(() -> {
            throw new IllegalStateException("scontrol broke");
        });
        failing.raise();
        assertThat(failing.explained()).isEmpty();
        Interrupts unasked = Interrupts.none();
        unasked.raise();
        assertThat(unasked.explained()).isEmpty();
    }
}
