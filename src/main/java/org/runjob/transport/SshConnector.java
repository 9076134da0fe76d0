package org.runjob.transport;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Semaphore;

import com.jcraft.jsch.AgentIdentityRepository;
import com.jcraft.jsch.AgentProxyException;
import com.jcraft.jsch.ConfigRepository;
import com.jcraft.jsch.JSch;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.OpenSSHConfig;
import com.jcraft.jsch.SSHAgentConnector;
import com.jcraft.jsch.Session;
import com.jcraft.jsch.UnixDomainSocketFactory;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.spec.JobSpec;

/**
 * Opens verified SSH sessions with JSch (the maintained fork).
 *
 * <p>Rules:
 * <ol>
 *   <li>Host, port and user come from the job, else from {@code ~/.ssh/config} (Host aliases,
 *       HostName, Port, User, IdentityFile, ProxyJump), else port 22 and the local user. A
 *       ProxyJump chain ({@code a,b}) is followed hop by hop over direct-tcpip channels
 *       ({@link JumpProxy}); every hop's host key is verified like the target's.</li>
 *   <li>Keys: {@code ssh.identity}, else a running ssh-agent ({@code SSH_AUTH_SOCK}), else the
 *       config's IdentityFile, else {@code ~/.ssh/id_ed25519}, {@code id_ecdsa}, {@code id_rsa}. A password is read only from the
 *       environment variable {@code ssh.password_env} names, and never logged.</li>
 *   <li>Host keys are always checked ({@link HostKeyPolicyRepository}).</li>
 *   <li>curve25519 key exchange first (the cheapest here), TCP_NODELAY, a keepalive every
 *       {@value #KEEPALIVE_MS} ms, and the session is dropped after {@value #KEEPALIVE_COUNT}
 *       unanswered ones, so a dead link is noticed within seconds.</li>
 *   <li>At most {@value #MAX_CONCURRENT_CONNECTS} connections are being set up at once (sshd's
 *       MaxStartups defaults to 10); a connection reset during set-up is retried with backoff.</li>
 * </ol>
 */
public final class SshConnector {

    static final int KEEPALIVE_MS = 1000;
    static final int KEEPALIVE_COUNT = 5;
    static final int MAX_CONCURRENT_CONNECTS = 8;
    /** Times a host that answered but was slow to finish the handshake is tried again (after 10 s: 20 s, then 40 s). */
    static final int SLOW_RETRIES = 2;
    private static final Logger LOG = LogManager.getLogger(SshConnector.class);
    private static final Semaphore CONNECTS = new Semaphore(MAX_CONCURRENT_CONNECTS);

    private final JobSpec.SshSpec ssh;
    private final Map<String, String> env;
    private final Path home;
    private ConfigRepository config;
    private boolean configRead;

    public SshConnector(JobSpec.SshSpec ssh, Map<String, String> env) {
        this.ssh = ssh;
        this.env = Map.copyOf(env);
        this.home = home(env);
    }

    /** A connected, authenticated session to {@code target}; the message of a failure says what to fix. */
    public Session connect(SshTarget target) throws SshException {
        ConfigRepository config = config(target);
        String jumps = config == null ? null : config.getConfig(target.host()).getValue("ProxyJump");
        Session via = null;
        if (jumps != null && !jumps.isBlank() && !jumps.equalsIgnoreCase("none")) {
            List<String> hops = List.of(jumps.split(","));
            via = connectChain(target.node(), hops, config);
        }
        return connect(target, via, config);
    }

    /** Sessions to each hop in turn, each through the one before; returns the last. */
    private Session connectChain(String node, List<String> hops, ConfigRepository config) throws SshException {
        Session via = null;
        for (String hop : hops) {
            String h = hop.trim();
            Optional<String> user = Optional.empty();
            int at = h.indexOf('@');
            if (at > 0) {
                user = Optional.of(h.substring(0, at));
                h = h.substring(at + 1);
            }
            OptionalInt port = OptionalInt.empty();
            int colon = h.lastIndexOf(':');
            if (colon > 0 && h.substring(colon + 1).matches("\\d+")) {
                port = OptionalInt.of(Integer.parseInt(h.substring(colon + 1)));
                h = h.substring(0, colon);
            }
            try {
                via = connect(new SshTarget(node + " jump host", h, port, user), via, config);
            } catch (SshException e) {
                if (via != null) {
                    via.disconnect();
                }
                throw e;
            }
        }
        return via;
    }

    private Session connect(SshTarget target, Session via, ConfigRepository config) throws SshException {
        Optional<String> password = passwordProblem(ssh, env);
        if (password.isPresent()) {
            throw new SshException("node " + target.node() + ": " + password.get());
        }
        JSch jsch = new JSch();
        HostKeyPolicyRepository keys;
        try {
            keys = new HostKeyPolicyRepository(jsch, expand(ssh.knownHosts()), ssh.hostKeyPolicy());
            jsch.setHostKeyRepository(keys);
            if (config != null) {
                jsch.setConfigRepository(config);
            }
            identities(jsch, config, target.host());
        } catch (JSchException | IOException e) {
            throw new SshException("node " + target.node() + ": cannot set up SSH: " + e.getMessage(), e);
        }
        int slowRetries = 0;
        for (int attempt = 0; ; attempt++) {
            Session session = null;
            NoDelaySocketFactory sockets = null;
            try {
                session = target.user().isPresent()
                        ? jsch.getSession(target.user().get(), target.host())
                        : jsch.getSession(target.host());
                if (session.getUserName() == null) {
                    session = jsch.getSession(System.getProperty("user.name"), target.host());
                }
                if (target.port().isPresent()) {
                    session.setPort(target.port().getAsInt());
                }
                session.setConfig("StrictHostKeyChecking", "yes");
                session.setConfig("kex", curve25519First(session.getConfig("kex")));
                session.setConfig("PreferredAuthentications", "publickey,keyboard-interactive,password");
                ssh.passwordEnv().map(env::get).ifPresent(session::setPassword);
                if (via != null) {
                    session.setProxy(new JumpProxy(via));
                } else {
                    sockets = new NoDelaySocketFactory(ssh.connectTimeoutSeconds() * 1000);
                    session.setSocketFactory(sockets);
                }
                session.setServerAliveInterval(KEEPALIVE_MS);
                session.setServerAliveCountMax(KEEPALIVE_COUNT);
                CONNECTS.acquireUninterruptibly();
                try {
                    // a host that answered but is slow to finish the handshake (loaded) gets twice as long each retry
                    session.connect((ssh.connectTimeoutSeconds() * 1000) << slowRetries);
                } finally {
                    CONNECTS.release();
                }
                LOG.debug("node {}: connected to {}@{}:{}", target.node(), session.getUserName(), session.getHost(), session.getPort());
                return session;
            } catch (JSchException e) {
                if (session != null) {
                    session.disconnect();
                }
                if (isReset(e) && attempt < 3) {
                    LOG.debug("node {}: connection reset during set-up, retrying", target.node());
                    backoff(attempt);
                    continue;
                }
                if (sockets != null && sockets.connected() && isTimeout(e) && slowRetries < SLOW_RETRIES) {
                    slowRetries++;
                    LOG.info("node {}: the host answered but did not finish the SSH handshake within {} s (loaded?); trying again,"
                            + " waiting {} s", target.node(), (ssh.connectTimeoutSeconds() << (slowRetries - 1)),
                            ssh.connectTimeoutSeconds() << slowRetries);
                    continue;
                }
                throw new SshException(describe(target, e, keys.refusal()), e);
            }
        }
    }

    /** ~/.ssh/config, parsed once for all nodes and hops; null when there is none. */
    private synchronized ConfigRepository config(SshTarget target) throws SshException {
        if (!configRead) {
            Path file = home.resolve(".ssh/config");
            try {
                config = Files.isReadable(file) ? OpenSSHConfig.parseFile(file.toString()) : null;
            } catch (IOException e) {
                throw new SshException("node " + target.node() + ": cannot read " + file + ": " + e.getMessage(), e);
            }
            configRead = true;
        }
        return config;
    }

    /**
     * What is wrong with the job's own SSH settings, whatever the node: an {@code ssh.identity}
     * that cannot be read, an {@code ssh.password_env} that is not set. Said once, before any node.
     */
    static Optional<String> settingsProblem(JobSpec.SshSpec ssh, Map<String, String> env) {
        return identityProblem(ssh, home(env)).or(() -> passwordProblem(ssh, env));
    }

    private static Optional<String> identityProblem(JobSpec.SshSpec ssh, Path home) {
        if (ssh.identity().isEmpty()) {
            return Optional.empty();
        }
        Path key = expand(ssh.identity().get(), home);
        return Files.isReadable(key) ? Optional.empty() : Optional.of("ssh.identity " + ssh.identity().get() + (Files.exists(key)
                ? " cannot be read" : " does not exist") + " (" + key + "): name a private key file, or leave ssh.identity out"
                + " to use ssh-agent and ~/.ssh");
    }

    private static Optional<String> passwordProblem(JobSpec.SshSpec ssh, Map<String, String> env) {
        return ssh.passwordEnv().filter(name -> env.get(name) == null)
                .map(name -> "ssh.password_env names " + name + ", which is not set in runjob's environment");
    }

    private void identities(JSch jsch, ConfigRepository config, String host) throws JSchException {
        if (ssh.identity().isPresent()) {
            Path key = expand(ssh.identity().get());
            Optional<String> problem = identityProblem(ssh, home);
            if (problem.isPresent()) {
                throw new JSchException(problem.get());
            }
            jsch.addIdentity(key.toString());
            return;
        }
        if (env.containsKey("SSH_AUTH_SOCK")) {
            try {
                jsch.setIdentityRepository(new AgentIdentityRepository(
                        new SSHAgentConnector(new UnixDomainSocketFactory(), Path.of(env.get("SSH_AUTH_SOCK")))));
                return;
            } catch (AgentProxyException e) {
                LOG.debug("ssh-agent not usable: {}", e.getMessage());
            }
        }
        if (config != null && hasIdentityFile(config.getConfig(host))) {
            return; // JSch reads IdentityFile from the config itself
        }
        for (String name : new String[] {"id_ed25519", "id_ecdsa", "id_rsa"}) {
            Path key = home.resolve(".ssh").resolve(name);
            if (Files.isReadable(key)) {
                jsch.addIdentity(key.toString());
            }
        }
    }

    /** The key exchanges JSch offers, curve25519 first (the cheapest here), each once. */
    static String curve25519First(String kex) {
        LinkedHashSet<String> order = new LinkedHashSet<>(List.of("curve25519-sha256", "curve25519-sha256@libssh.org"));
        order.addAll(List.of(kex.split(",")));
        return String.join(",", order);
    }

    private static boolean hasIdentityFile(ConfigRepository.Config c) {
        String[] files = c.getValues("IdentityFile");
        return files != null && files.length > 0;
    }

    private static boolean isTimeout(JSchException e) {
        String m = String.valueOf(e.getMessage());
        return e.getCause() instanceof SocketTimeoutException || m.contains("timeout") || m.contains("timed out");
    }

    private static boolean isReset(JSchException e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("Connection reset") || m.contains("connection is closed by foreign host");
    }

    private static void backoff(int attempt) {
        try {
            Thread.sleep(200L << attempt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String describe(SshTarget t, JSchException e, HostKeyPolicyRepository.Refusal refusal) {
        String where = "node " + t.node() + " (" + t.host() + (t.port().isPresent() ? ":" + t.port().getAsInt() : "") + ")";
        Throwable cause = e.getCause();
        String m = String.valueOf(e.getMessage());
        if (refusal != null && (m.contains("HostKey") || m.contains("UnknownHostKey") || m.contains("reject HostKey"))) {
            if (refusal.revoked()) {
                return where + ": the host key " + refusal.type() + " " + refusal.fingerprint() + " is REVOKED in " + ssh.knownHosts()
                        + " (@revoked); refusing to connect under every policy";
            }
            if (refusal.verdict() == KnownHostsFile.Verdict.ONLY_CA) {
                return where + ": " + ssh.knownHosts() + " trusts a certificate authority (@cert-authority) for this host, but runjob"
                        + " does not check host certificates; add the host's key " + refusal.type() + " " + refusal.fingerprint()
                        + " itself: ssh-keyscan " + (t.port().isPresent() ? "-p " + t.port().getAsInt() + " " : "") + t.host()
                        + " >> " + ssh.knownHosts();
            }
            if (refusal.changed()) {
                return where + ": the host key has CHANGED (" + refusal.type() + " " + refusal.fingerprint() + ") and differs from "
                        + ssh.knownHosts() + "; refusing to connect (someone may be intercepting). If the host was"
                        + " reinstalled, remove its old key: ssh-keygen -R " + knownHostsName(t);
            }
            return where + ": unknown host key " + refusal.type() + " " + refusal.fingerprint() + " (not in " + ssh.knownHosts()
                    + "). Check the fingerprint, then trust it: ssh-keyscan " + (t.port().isPresent() ? "-p " + t.port().getAsInt() + " " : "")
                    + t.host() + " >> " + ssh.knownHosts() + ", or set ssh.host_key_policy: accept-new";
        }
        if (cause instanceof UnknownHostException) {
            return where + ": unknown host name";
        }
        if (isTimeout(e)) {
            return where + ": no answer within " + ssh.connectTimeoutSeconds() + " s";
        }
        if (cause instanceof ConnectException || cause instanceof NoRouteToHostException) {
            return where + ": cannot connect (" + cause.getMessage() + ")";
        }
        if (m.contains("Auth fail") || m.contains("Auth cancel")) {
            return where + ": login refused (check user, " + ssh.passwordEnv().map(v -> "the password in $" + v + ", ")
                    .orElse("") + "ssh.identity, or ssh-agent)";
        }
        return where + ": " + m;
    }

    private static String knownHostsName(SshTarget t) {
        return t.port().isPresent() && t.port().getAsInt() != 22 ? "'[" + t.host() + "]:" + t.port().getAsInt() + "'" : t.host();
    }

    private Path expand(String path) {
        return expand(path, home);
    }

    private static Path expand(String path, Path home) {
        return path.startsWith("~/") ? home.resolve(path.substring(2)) : Path.of(path);
    }

    private static Path home(Map<String, String> env) {
        return Path.of(env.getOrDefault("HOME", System.getProperty("user.home")));
    }
}
