package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

class StackSummaryTest {

    static final String C10D = "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py";

    static String dump(String main, String... frames) {
        StringBuilder b = new StringBuilder("process 10 (python3), main thread " + main + "\n");
        b.append("Thread 0x00000000000000aa (most recent call first):\n  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n\n");
        b.append("Current thread ").append(main).append(" (most recent call first):\n");
        for (String f : frames) {
            b.append("  File ").append(f).append('\n');
        }
        return b.append('\n').toString();
    }

    @Test
    void theRankThatIsNotInTheCollectiveIsTheSuspect() {
        String waiting = dump("0x00000000000000b1", "\"" + C10D + "\", line 1541 in all_reduce", "\"/w/train.py\", line 25 in train",
                "\"/w/train.py\", line 44 in <module>");
        String stuck = dump("0x00000000000000b2", "\"/w/train.py\", line 17 in stuck_here", "\"/w/train.py\", line 23 in train");
        StackSummary s = StackSummary.of(Map.of(0, waiting, 1, stuck, 2, waiting));
        assertThat(s.suspects()).containsExactly(1);
        assertThat(s.lines()).containsExactly(
                "rank 0: all_reduce (distributed_c10d.py:1541) <- train (train.py:25)",
                "rank 1: stuck_here (train.py:17)   <- differs from the others",
                "rank 2: all_reduce (distributed_c10d.py:1541) <- train (train.py:25)");
    }

    @Test
    void theMainThreadIsPickedByItsIdentNotByPlace() {
        String text = "process 10 (python3), main thread 0x00000000000000b1\n"
                + "Thread 0x00000000000000b1 (most recent call first):\n  File \"/w/a.py\", line 3 in main_loop\n\n"
                + "Current thread 0x00000000000000c9 (most recent call first):\n  File \"/w/a.py\", line 9 in helper\n\n"
                + "process 11 (python3), main thread 0x00000000000000d1\n"
                + "Current thread 0x00000000000000d1 (most recent call first):\n  File \"/w/b.py\", line 1 in child\n";
        assertThat(StackSummary.mainThread(text)).containsExactly(new StackSummary.Frame("main_loop", "/w/a.py", 3));
    }

    @Test
    void aMinorityOfInnermostFramesStandsOutOnlyAgainstAStrictMajority() {
        String a = dump("0x01", "\"/w/t.py\", line 5 in step");
        String b = dump("0x02", "\"/w/t.py\", line 9 in load");
        assertThat(StackSummary.of(Map.of(0, a, 1, a, 2, b)).suspects()).containsExactly(2);
        assertThat(StackSummary.of(Map.of(0, a, 1, b)).suspects()).isEmpty();
        assertThat(StackSummary.of(Map.of(0, a, 1, a)).suspects()).isEmpty();
    }

    @Test
    void aJvmRankIsSummedUpFromItsMainThread() {
        String dump = "process 12 (java), thread dump\n2026-12-02 08:20:00\nFull thread dump OpenJDK 64-Bit Server VM:\n\n"
                + "\"Reference Handler\" #2 daemon prio=10\n\tat jdk.internal.misc.Unsafe.park(java.base@17/Native Method)\n\n"
                + "\"main\" #1 prio=5 os_prio=0 tid=0x1 nid=0x2 waiting on condition\n"
                + "\tat jdk.internal.misc.Unsafe.park(java.base@17/Native Method)\n\tat org.example.Train.stuckHere(Train.java:7)\n"
                + "\tat org.example.Train.main(Train.java:12)\n\n\"Attach Listener\" #9 daemon\n";
        assertThat(StackSummary.of(Map.of(0, dump)).lines()).containsExactly("rank 0: Unsafe.park (Native Method) <- Train.stuckHere (Train.java:7)");
    }

    @Test
    void aRankWithoutPythonFramesSaysWhy() {
        StackSummary s = StackSummary.of(Map.of(0, "no stack: no process of this rank runs Python with runjob's stack hook (x)\n"));
        assertThat(s.lines()).containsExactly("rank 0: no stack: no process of this rank runs Python with runjob's stack hook (x)");
        assertThat(s.suspects()).isEmpty();
    }
}
