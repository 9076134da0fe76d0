package org.runjob.protocol;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a submitted run's coordinator is handed on its stdin, as one line, never in a file or an
 * argument: the run's secret and each node's host. The line is tab-separated: the secret's hex,
 * then node name, address and port for each node.
 */
public record HostedRun(byte[] secret, Map<String, Endpoint> hosts) {

    /** One node host: the node's address as the coordinator reaches it, and the host's port. */
    public record Endpoint(String address, int port) {
        @Override
        public String toString() {
            return (address.contains(":") ? "[" + address + "]" : address) + ":" + port;
        }
    }

    public HostedRun {
        hosts = Collections.unmodifiableMap(new LinkedHashMap<>(hosts));
    }

    public String toLine() {
        List<String> words = new ArrayList<>(List.of(SecureLink.hex(secret)));
        hosts.forEach((node, e) -> words.addAll(List.of(node, e.address(), Integer.toString(e.port()))));
        for (String w : words) {
            if (w.contains("\t") || w.contains("\n")) {
                throw new IllegalArgumentException("a tab or newline in " + w);
            }
        }
        return String.join("\t", words);
    }

    /** @throws IllegalArgumentException for a line that is not one */
    public static HostedRun parse(String line) {
        String[] w = line.strip().split("\t", -1);
        if (w.length < 4 || (w.length - 1) % 3 != 0) {
            throw new IllegalArgumentException("not a hosted run's line");
        }
        Map<String, Endpoint> hosts = new LinkedHashMap<>();
        for (int i = 1; i < w.length; i += 3) {
            try {
                hosts.put(w[i], new Endpoint(w[i + 1], Integer.parseInt(w[i + 2])));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a port: " + w[i + 2]);
            }
        }
        return new HostedRun(SecureLink.secret(w[0]), hosts);
    }
}
