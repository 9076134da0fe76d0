package org.runjob.transport;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import com.jcraft.jsch.Session;

/** The open SSH session of each remote node, shared by preflight, distribution and the agents; closed together. */
public final class Connections implements AutoCloseable {

    private final SshConnector connector;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    public Connections(SshConnector connector) {
        this.connector = connector;
    }

    /** The node's session, connecting on first use. */
    public Session session(SshTarget target) throws SshException {
        Session s = sessions.get(target.node());
        if (s != null && s.isConnected()) {
            return s;
        }
        s = connector.connect(target);
        sessions.put(target.node(), s);
        return s;
    }

    /** A login to the node on a session of its own, ended at once; the node's shared session is left alone. Empty when it answers. */
    public Optional<String> probe(SshTarget target) {
        try {
            connector.connect(target).disconnect();
            return Optional.empty();
        } catch (SshException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** Ends the node's session, if any: the next {@link #session} connects anew. */
    public void drop(String node) {
        Session s = sessions.remove(node);
        if (s != null) {
            s.disconnect();
        }
    }

    public Optional<Session> existing(String node) {
        return Optional.ofNullable(sessions.get(node)).filter(Session::isConnected);
    }

    @Override
    public void close() {
        sessions.values().forEach(Session::disconnect);
        sessions.clear();
    }
}
