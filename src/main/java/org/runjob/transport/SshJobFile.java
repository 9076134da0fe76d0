package org.runjob.transport;

import static org.runjob.spec.JsonFields.integer;
import static org.runjob.spec.JsonFields.text;

import java.util.Optional;
import java.util.OptionalInt;

import org.runjob.spec.BackendSpec;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.Problems;

import tools.jackson.databind.JsonNode;

/**
 * {@code backend: ssh} in the job file: a node entry is an SSH login ({@code host}, {@code port},
 * {@code user}) or this machine ({@code local: true}); the backend has no block of its own (its
 * login settings are the job's {@code ssh:}, which every way of reaching a node over SSH reads).
 */
final class SshJobFile implements BackendSpec {

    @Override
    public String name() {
        return "ssh";
    }

    @Override
    public String summary() {
        return "default: SSH logins, or local nodes";
    }

    @Override
    public String docsPage() {
        return "docs/nodes.md";
    }

    @Override
    public NodeAddress address(JsonNode entry, String name) {
        Optional<String> host = text(entry, "host");
        if (isLocal(entry)) {
            return new NodeAddress.Local(host);
        }
        return new NodeAddress.Ssh(host.orElseThrow(), integer(entry, "port").map(OptionalInt::of).orElse(OptionalInt.empty()), text(entry, "user"));
    }

    /** A node has a host unless it is local. */
    @Override
    public void checkNode(JsonNode entry, String pointer, String label, int entries, Problems problems) {
        if (!entry.has("host") && !isLocal(entry) && !entry.has("count")) {
            problems.at(pointer, label + " needs a host (an address or ssh-config alias), or local: true");
        }
    }

    /** A local master without a host needs rendezvous.addr when other nodes are remote: they cannot reach "local". */
    @Override
    public void checkJob(JsonNode root, Optional<JsonNode> master, Problems problems) {
        if (master.isEmpty() || !isLocal(master.get()) || master.get().has("host")) {
            return;
        }
        JsonNode rdzv = root.get("rendezvous");
        boolean named = rdzv != null && rdzv.has("master");
        if ((rdzv != null && rdzv.has("addr")) || !hasRemote(root.get("nodes"))) {
            return;
        }
        problems.at(named ? "/rendezvous/master" : "/nodes/0", "the master is a local node without a host, which remote nodes cannot reach:"
                + " set its host or rendezvous.addr");
    }

    private static boolean isLocal(JsonNode entry) {
        JsonNode local = entry.get("local");
        return local != null && local.isBoolean() && local.booleanValue();
    }

    private static boolean hasRemote(JsonNode nodes) {
        if (nodes == null || !nodes.isArray()) {
            return false;
        }
        for (JsonNode n : nodes) {
            if (n.isObject() && !isLocal(n)) {
                return true;
            }
        }
        return false;
    }
}
