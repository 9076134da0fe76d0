package org.runjob.transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import com.jcraft.jsch.HostKey;
import com.jcraft.jsch.HostKeyRepository;
import com.jcraft.jsch.JSch;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.UserInfo;
import org.runjob.spec.JobSpec;

/**
 * Host key checking with runjob's policies, in front of JSch's known_hosts file.
 *
 * <ul>
 *   <li>Under every policy a key the file marks {@code @revoked} for the host is refused, and a
 *       key that differs from the host's known key of the same type is refused as changed.
 *       Matching follows OpenSSH ({@link KnownHostsFile}): wildcards, negated patterns, hashed
 *       names.</li>
 *   <li>{@code strict}: a key that is not in known_hosts is refused.</li>
 *   <li>{@code accept-new}: an unknown key is added to known_hosts (the file is created when
 *       missing); a changed key is still refused. JSch itself treats accept-new as no checking at
 *       all, which is why this class exists.</li>
 * </ul>
 * The last refusal is kept so the caller can say which key was seen and how to trust it.
 */
final class HostKeyPolicyRepository implements HostKeyRepository {

    /** Why the last key was refused: the key seen and whether known_hosts had another one. */
    record Refusal(String host, String type, String fingerprint, KnownHostsFile.Verdict verdict) {
        boolean changed() {
            return verdict == KnownHostsFile.Verdict.CHANGED;
        }

        boolean revoked() {
            return verdict == KnownHostsFile.Verdict.REVOKED;
        }
    }

    private final JSch jsch;
    private final HostKeyRepository known;
    private final KnownHostsFile file;
    private final JobSpec.HostKeyPolicy policy;
    private volatile Refusal refusal;

    HostKeyPolicyRepository(JSch jsch, Path knownHosts, JobSpec.HostKeyPolicy policy) throws JSchException, IOException {
        this.jsch = jsch;
        this.policy = policy;
        if (policy == JobSpec.HostKeyPolicy.ACCEPT_NEW && !Files.exists(knownHosts)) {
            Files.createDirectories(knownHosts.toAbsolutePath().getParent());
            Files.createFile(knownHosts);
        }
        if (Files.exists(knownHosts)) {
            jsch.setKnownHosts(knownHosts.toString());
        }
        this.known = jsch.getHostKeyRepository();
        this.file = KnownHostsFile.read(knownHosts);
    }

    Refusal refusal() {
        return refusal;
    }

    @Override
    public synchronized int check(String host, byte[] key) {
        String type;
        String fingerprint;
        try {
            HostKey seen = new HostKey(host, key);
            type = seen.getType();
            fingerprint = seen.getFingerPrint(jsch);
        } catch (JSchException e) {
            type = "?";
            fingerprint = "?";
        }
        KnownHostsFile.Verdict verdict = file.check(host, type, key);
        if (verdict == KnownHostsFile.Verdict.KNOWN) {
            return OK;
        }
        if (verdict == KnownHostsFile.Verdict.UNKNOWN && policy == JobSpec.HostKeyPolicy.ACCEPT_NEW) {
            try {
                known.add(new HostKey(host, key), null);
                file.add(host, type, key);
                return OK;
            } catch (JSchException e) {
                // fall through to a refusal
            }
        }
        refusal = new Refusal(host, type, fingerprint, verdict);
        return verdict == KnownHostsFile.Verdict.CHANGED ? CHANGED : NOT_INCLUDED;
    }

    @Override
    public void add(HostKey hostkey, UserInfo ui) {
        known.add(hostkey, ui);
    }

    @Override
    public void remove(String host, String type) {
        known.remove(host, type);
    }

    @Override
    public void remove(String host, String type, byte[] key) {
        known.remove(host, type, key);
    }

    @Override
    public String getKnownHostsRepositoryID() {
        return known.getKnownHostsRepositoryID();
    }

    @Override
    public HostKey[] getHostKey() {
        return known.getHostKey();
    }

    @Override
    public HostKey[] getHostKey(String host, String type) {
        return known.getHostKey(host, type);
    }
}
