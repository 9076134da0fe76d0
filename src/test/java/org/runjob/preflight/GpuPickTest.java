package org.runjob.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.GpuProcess;
import org.runjob.protocol.Lease;

/** Which GPUs are free and in which order they are tried; what a shortage says. */
class GpuPickTest {

    static final long MIB = 1L << 20;

    static Gpu gpu(int index, long usedMib) {
        return new Gpu(index, "V100", 16384 * MIB, (16384 - usedMib) * MIB, 7, 0, "0000:0" + (index + 1) + ":00");
    }

    static final GpuInventory FOUR = new GpuInventory(List.of(gpu(0, 0), gpu(1, 9000), gpu(2, 100), gpu(3, 0)), 12060, Optional.empty());

    @Test
    void candidatesAreTheFreeOnesLeastUsedFirstTiesByIndex() {
        GpuPick.Candidates c = GpuPick.candidates(FOUR, 500);
        assertThat(c.order()).extracting(Gpu::index).containsExactly(0, 3, 2);
        assertThat(c.notFree()).containsExactly(Map.entry(1, "9000 MiB in use"));
        assertThat(GpuPick.slots(c.order())).containsExactly(new Lease.Slot(0, "0000:01:00"), new Lease.Slot(3, "0000:04:00"),
                new Lease.Slot(2, "0000:03:00"));
        Gpu refused = new Gpu(4, "V100", 16384 * MIB, -1, 7, 0, "0000:05:00", Optional.of("the GPU takes no new context"));
        assertThat(GpuPick.candidates(new GpuInventory(List.of(refused), 1, Optional.empty()), 500).notFree())
                .containsExactly(Map.entry(4, "the GPU takes no new context"));
    }

    @Test
    void aShortageNamesEveryGpuThatIsNotFree() {
        GpuPick.Candidates c = GpuPick.candidates(FOUR, 500);
        Map<Integer, String> held = new LinkedHashMap<>();
        held.put(3, "run r1 of job j (user ann, since 2026-12-01T09:30:02Z)");
        held.put(2, "another runjob run");
        Lease.Answer a = new Lease.Answer(List.of(0), held, List.of(), Optional.empty());
        assertThat(a.leased()).containsExactly(0);
        assertThat(GpuPick.shortage(2, FOUR, c, a)).isEqualTo("needs 2 free GPUs, 1 of 4 is; GPU 1: 9000 MiB in use;"
                + " GPU 2: held by another runjob run; GPU 3: held by run r1 of job j (user ann, since 2026-12-01T09:30:02Z)");
        assertThat(GpuPick.only(FOUR, List.of(3, 0)).indices()).containsExactly(0, 3);
    }

    @Test
    void aGpuAnotherUsersProcessRunsOnIsNotFreeWhateverItsMemoryAndTheProcessIsNamed() {
        GpuInventory busy = FOUR.withProcesses(Map.of(0, List.of(new GpuProcess(4242, "bob", "python eval.py", 300)),
                3, List.of(new GpuProcess(7, "carol", "a\u001b[31mred", -1))));
        GpuPick.Candidates c = GpuPick.candidates(busy, 500);
        assertThat(c.order()).extracting(Gpu::index).containsExactly(2);
        assertThat(c.notFree()).containsExactly(Map.entry(0, "in use by bob: python eval.py (pid 4242, 300 MiB)"),
                Map.entry(1, "9000 MiB in use"), Map.entry(3, "in use by carol: a\\x1b[31mred (pid 7)"));
        // the inventory travels with its processes
        assertThat(GpuPick.only(busy, List.of(0)).processesOn(0)).containsExactly(new GpuProcess(4242, "bob", "python eval.py", 300));
    }

    @Test
    void anInventoryWithProcessesReadsBackAsItWasWritten() throws Exception {
        GpuInventory busy = FOUR.withProcesses(Map.of(2, List.of(new GpuProcess(1L << 33, "bob", "x y", 12), new GpuProcess(9, "?", "?", -1))));
        assertThat(GpuInventory.decode(busy.encode())).isEqualTo(busy);
        assertThat(GpuInventory.decode(FOUR.encode()).processes()).isEmpty();
    }
}
