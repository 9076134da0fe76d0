package org.runjob.preflight;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;

import org.runjob.distribute.FileList;
import org.runjob.distribute.RelayPlan;
import org.runjob.distribute.Shipped;
import org.runjob.protocol.Answer;
import org.runjob.protocol.NodeFacts;
import org.runjob.session.FileOffer;
import org.runjob.session.FileShipment;
import org.runjob.session.NodeSession;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.Relay;

/**
 * Distribution: the job's files go to each node as soon as that node passed its checks, through
 * its agent.
 *
 * <ul>
 *   <li>Nodes that share a workdir (they report the same workdir token) take turns, so the first one
 *       ready sends and the others find the files there; {@link #noteShared} then says so in their
 *       cells.</li>
 *   <li>Relay ({@link Relay}): a remote node that lacks enough bytes gets them from a node that holds
 *       them (its agent serves them, {@link NodeSession#serve}), or from runjob when no holder is
 *       free and runjob's one slot is ({@link RelayPlan}); runjob's uplink carries each file a few
 *       times instead of once per node. A relay that fails is sent again (two failures end
 *       relaying for the run). When the job's files are big enough to relay, every remote node
 *       that holds them serves them until {@link #stopServing}.</li>
 * </ul>
 */
final class Shipping {

    private final List<FileList.Entry> entries;
    private final long totalBytes;
    private final Consumer<String> progress;
    private final Relay relay;
    private final int remoteNodes;
    private final Function<NodeSpec, Optional<String>> addressOf;
    private final String key = newKey();
    private final RelayPlan plan = new RelayPlan(1, 2);
    private final Map<String, NodeSession> servers = new ConcurrentHashMap<>();
    private final Map<String, Object> turns = new ConcurrentHashMap<>();
    /** Workdir token to the nodes that reported it, and which of them sent (the first). */
    private final Map<String, List<String>> byToken = new LinkedHashMap<>();
    private final Map<String, Shipped> done = new ConcurrentHashMap<>();

    /**
     * @param totalBytes the size of {@code entries}, together
     * @param addressOf a reached node's address as its peers use it; empty for a local node (it neither
     *                  relays nor gets relayed files)
     */
    Shipping(List<FileList.Entry> entries, long totalBytes, Consumer<String> progress, Relay relay, int remoteNodes,
             Function<NodeSpec, Optional<String>> addressOf) {
        this.entries = List.copyOf(entries);
        this.totalBytes = totalBytes;
        this.progress = progress;
        this.relay = relay;
        this.remoteNodes = remoteNodes;
        this.addressOf = addressOf;
    }

    /** Ships to one node; empty when it failed (its workdir cell says why). */
    Optional<Shipped> ship(NodeSpec node, NodeSession session, NodeFacts facts, Map<Check, Cell> row) {
        String token = facts.get(NodeFacts.TOKEN).orElse("node:" + node.name());
        synchronized (turns.computeIfAbsent(token, t -> new Object())) {
            synchronized (byToken) {
                byToken.computeIfAbsent(token, t -> new ArrayList<>()).add(node.name());
            }
            try {
                Shipped shipped = entries.isEmpty() ? Shipped.NOTHING : transfer(node, session);
                done.put(node.name(), shipped);
                row.put(Check.WORKDIR, Cell.ok(shipped.summary()));
                return Optional.of(shipped);
            } catch (IOException e) {
                row.put(Check.WORKDIR, Cell.fail("shipping failed: " + e.getMessage()));
                return Optional.empty();
            }
        }
    }

    private Shipped transfer(NodeSpec node, NodeSession session) throws IOException {
        Optional<String> address = addressOf.apply(node);
        FileOffer offer = session.files().offer(entries);
        if (address.isPresent() && relay.relays(offer.neededBytes(), remoteNodes)) {
            return relayed(node, session, offer, address.get());
        }
        Shipped shipped = direct(node, session, offer);
        if (address.isPresent() && relay.relays(totalBytes, remoteNodes)) {
            // a node that lacks them could get them from here
            serve(node, session, address.get());
        }
        return shipped;
    }

    private Shipped direct(NodeSpec node, NodeSession session, FileOffer offer) throws IOException {
        return session.files().send(offer, line -> progress.accept("runjob: " + node.name() + ": shipping " + line));
    }

    /** Through the plan: from a serving peer, or from runjob when its slot is free; a failed relay goes back to the plan. */
    private Shipped relayed(NodeSpec node, NodeSession session, FileOffer offer, String address) throws IOException {
        while (true) {
            RelayPlan.Sender sender = take();
            boolean ok = false;
            try {
                if (sender instanceof RelayPlan.Peer p) {
                    progress.accept("runjob: " + node.name() + ": shipping " + (offer.neededBytes() >> 20) + " MiB from " + p.node());
                    Shipped s = session.files().fetch(offer, p.node(), p.host(), p.port(), key);
                    ok = true;
                    serve(node, session, address);
                    return s;
                }
                Shipped s = direct(node, session, offer);
                ok = true;
                // a source before runjob's slot is free: the next node in line gets this one
                serve(node, session, address);
                return s;
            } catch (FileShipment.RelayFailed e) {
                RelayPlan.Peer p = (RelayPlan.Peer) sender;
                progress.accept("runjob: " + node.name() + ": relay from " + p.node() + " failed (" + e.getMessage() + "); sending again");
                offer = session.files().offer(entries);
            } finally {
                synchronized (plan) {
                    plan.done(sender, ok);
                    plan.notifyAll();
                }
            }
        }
    }

    private RelayPlan.Sender take() throws IOException {
        synchronized (plan) {
            while (true) {
                Optional<RelayPlan.Sender> s = plan.take();
                if (s.isPresent()) {
                    return s.get();
                }
                try {
                    plan.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                }
            }
        }
    }

    /** The node holds the files now: it serves them to its peers (a node that cannot is simply not a source). */
    private void serve(NodeSpec node, NodeSession session, String address) {
        try {
            Answer answer = session.files().serve(key);
            if (answer.ok()) {
                servers.put(node.name(), session);
                synchronized (plan) {
                    plan.serving(new RelayPlan.Peer(node.name(), address, (int) answer.number()));
                    plan.notifyAll();
                }
            }
        } catch (IOException e) {
            // not a source; its own files arrived
        }
    }

    /** Every serving node stops serving (the agents also stop at START). */
    void stopServing() {
        servers.values().forEach(s -> {
            try {
                s.files().unserve();
            } catch (IOException e) {
                // the agent ended: it serves nothing
            }
        });
        servers.clear();
    }

    private static String newKey() {
        byte[] k = new byte[32];
        new SecureRandom().nextBytes(k);
        return HexFormat.of().formatHex(k);
    }

    /** Names the nodes that share a workdir in their cells, in node order; the one that sent keeps its summary. */
    void noteShared(Map<String, Map<Check, Cell>> cells) {
        List<String> order = new ArrayList<>(cells.keySet());
        synchronized (byToken) {
            for (List<String> group : byToken.values()) {
                if (group.size() < 2) {
                    continue;
                }
                List<String> sorted = group.stream().sorted(Comparator.comparingInt(order::indexOf)).toList();
                String note = "workdir shared by " + String.join(", ", sorted) + (entries.isEmpty() ? "" : ": shipped once");
                String sender = group.stream().filter(done::containsKey).findFirst().orElse("");
                for (String node : group) {
                    Shipped s = done.get(node);
                    if (s == null) {
                        continue;
                    }
                    cells.get(node).put(Check.WORKDIR, Cell.ok(node.equals(sender) && !entries.isEmpty() ? s.summary() + "; " + note : note));
                }
            }
        }
    }
}
