package org.runjob.distribute;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.runjob.spec.Relay;

/** The broadcast tree the plan builds, simulated in rounds of one transfer time each. */
class RelayPlanTest {

    /** Receivers all ready at once, every transfer one round long; what each round started, by sender. */
    static List<List<String>> rounds(RelayPlan plan, int receivers, List<String> failingPeers) {
        List<String> waiting = new ArrayList<>();
        for (int i = 1; i <= receivers; i++) {
            waiting.add("n" + i);
        }
        List<List<String>> rounds = new ArrayList<>();
        while (!waiting.isEmpty()) {
            Map<String, RelayPlan.Sender> started = new LinkedHashMap<>();
            Optional<RelayPlan.Sender> s;
            while (!waiting.isEmpty() && (s = plan.take()).isPresent()) {
                started.put(waiting.remove(0), s.get());
            }
            List<String> round = new ArrayList<>();
            started.forEach((to, from) -> {
                boolean ok = !(from instanceof RelayPlan.Peer p && failingPeers.contains(p.node()));
                round.add((from instanceof RelayPlan.Peer p ? p.node() : "runjob") + ">" + to + (ok ? "" : " failed"));
                plan.done(from, ok);
                if (ok) {
                    plan.serving(new RelayPlan.Peer(to, "10.0.0." + to.substring(1), 4000));
                } else {
                    waiting.add(0, to); // it is sent again
                }
            });
            rounds.add(round);
        }
        return rounds;
    }

    @Test
    void sixteenNodesGetTheFilesInFiveRoundsWithRunjobSendingFourTimes() {
        List<List<String>> rounds = rounds(new RelayPlan(1, 2), 16, List.of());
        assertThat(rounds).containsExactly(
                List.of("runjob>n1"),
                List.of("n1>n2", "runjob>n3"),
                // who sent least goes first: the newest holders, then the older ones
                List.of("n2>n4", "n3>n5", "n1>n6", "runjob>n7"),
                List.of("n4>n8", "n5>n9", "n6>n10", "n7>n11", "n2>n12", "n3>n13", "n1>n14", "runjob>n15"),
                List.of("n8>n16"));
        assertThat(rounds.stream().flatMap(List::stream).filter(t -> t.startsWith("runjob>"))).hasSize(4);
    }

    @Test
    void sixtyFourNodesTakeSevenRounds() {
        List<List<String>> rounds = rounds(new RelayPlan(1, 2), 64, List.of());
        assertThat(rounds).hasSize(7);
        assertThat(rounds.stream().mapToInt(List::size).sum()).isEqualTo(64);
    }

    @Test
    void aSenderThatSentLeastIsNamedFirst() {
        RelayPlan plan = new RelayPlan(1, 2);
        plan.serving(new RelayPlan.Peer("a", "h", 1));
        plan.serving(new RelayPlan.Peer("b", "h", 2));
        RelayPlan.Sender first = plan.take().orElseThrow();
        assertThat(first).isEqualTo(new RelayPlan.Peer("a", "h", 1));
        plan.done(first, true);
        assertThat(plan.take()).contains(new RelayPlan.Peer("b", "h", 2));
        assertThat(plan.take()).contains(new RelayPlan.Peer("a", "h", 1));
        assertThat(plan.take()).contains(new RelayPlan.Runjob());
        assertThat(plan.take()).isEmpty();
    }

    @Test
    void twoFailedRelaysEndRelayingAndRunjobSendsToEveryNodeAtOnce() {
        RelayPlan plan = new RelayPlan(1, 2);
        List<List<String>> rounds = rounds(plan, 6, List.of("n1", "n2", "n3"));
        assertThat(rounds).containsExactly(
                List.of("runjob>n1"),
                List.of("n1>n2 failed", "runjob>n3"),
                List.of("n3>n2 failed", "runjob>n4"),
                List.of("runjob>n2", "runjob>n5", "runjob>n6"));
        assertThat(plan.relaying()).isFalse();
    }

    @Test
    void autoRelaysEightMebibytesOrMoreToThreeOrMoreRemoteNodes() {
        assertThat(Relay.AUTO.relays(8L << 20, 3)).isTrue();
        assertThat(Relay.AUTO.relays((8L << 20) - 1, 3)).isFalse();
        assertThat(Relay.AUTO.relays(1L << 30, 2)).isFalse();
        assertThat(Relay.ALWAYS.relays(1, 2)).isTrue();
        assertThat(Relay.ALWAYS.relays(0, 16)).isFalse();
        assertThat(Relay.NEVER.relays(1L << 30, 64)).isFalse();
    }
}
