package org.runjob.distribute;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Who sends the job's files to the next node that needs them, when nodes relay them to each other
 * (a broadcast tree built as nodes become ready). Pure: no I/O, no clock; one caller at a time.
 *
 * <ul>
 *   <li>runjob itself is one sender with {@code coordinatorSlots} transfers at once: its uplink is
 *       the link a relay spares.</li>
 *   <li>Every node that holds the files and serves them ({@link #serving}) is a sender with one
 *       transfer at once, so the number of holders about doubles with every transfer time.</li>
 *   <li>{@link #take} names the sender of the next transfer: an idle serving node (the one that sent
 *       least, then the first to serve), else runjob when it has a free slot, else none (wait for a
 *       {@link #done}).</li>
 *   <li>{@link #done} frees a sender. After {@code maxFailures} failed relays (peers that cannot
 *       reach each other, a firewall), relaying stops: {@link #take} names runjob, without a limit,
 *       and a serving node that failed is not named again.</li>
 * </ul>
 */
public final class RelayPlan {

    /** A sender of the job's files. */
    public sealed interface Sender permits Runjob, Peer {
    }

    /** runjob, over the node's own channel. */
    public record Runjob() implements Sender {
    }

    /** A node that serves the files it holds at HOST:PORT. */
    public record Peer(String node, String host, int port) implements Sender {
    }

    private static final class Serving {
        final Peer peer;
        final int order;
        boolean busy;
        boolean broken;
        int sent;

        Serving(Peer peer, int order) {
            this.peer = peer;
            this.order = order;
        }
    }

    private final int coordinatorSlots;
    private final int maxFailures;
    private final List<Serving> serving = new ArrayList<>();
    private int coordinatorBusy;
    private int failures;

    public RelayPlan(int coordinatorSlots, int maxFailures) {
        if (coordinatorSlots < 1 || maxFailures < 1) {
            throw new IllegalArgumentException("slots and failures must be at least 1");
        }
        this.coordinatorSlots = coordinatorSlots;
        this.maxFailures = maxFailures;
    }

    /** A node that holds the files now serves them. */
    public void serving(Peer peer) {
        serving.add(new Serving(peer, serving.size()));
    }

    /** The sender of the next transfer, now marked busy; empty when every sender is busy. */
    public Optional<Sender> take() {
        if (relaying()) {
            Optional<Serving> idle = serving.stream().filter(s -> !s.busy && !s.broken)
                    .min(Comparator.<Serving>comparingInt(s -> s.sent).thenComparingInt(s -> s.order));
            if (idle.isPresent()) {
                idle.get().busy = true;
                return Optional.of(idle.get().peer);
            }
            if (coordinatorBusy >= coordinatorSlots) {
                return Optional.empty();
            }
        }
        coordinatorBusy++;
        return Optional.of(new Runjob());
    }

    /** A transfer from {@code sender} ended; {@code ok} false when it failed. */
    public void done(Sender sender, boolean ok) {
        if (sender instanceof Peer p) {
            for (Serving s : serving) {
                if (s.peer.equals(p)) {
                    s.busy = false;
                    s.sent += ok ? 1 : 0;
                    s.broken |= !ok;
                }
            }
            failures += ok ? 0 : 1;
        } else {
            coordinatorBusy--;
        }
    }

    /** False once {@code maxFailures} relays failed: from then on runjob sends to every node itself. */
    public boolean relaying() {
        return failures < maxFailures;
    }
}
