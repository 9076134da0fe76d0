package org.runjob.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** known_hosts as OpenSSH reads it: markers, wildcards, negation, hashed names, ports. */
class KnownHostsFileTest {

    @TempDir
    Path dir;

    static final byte[] A = "key-a".getBytes(StandardCharsets.UTF_8);
    static final byte[] B = "key-b".getBytes(StandardCharsets.UTF_8);

    static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    KnownHostsFile file(String... lines) throws Exception {
        return KnownHostsFile.read(Files.writeString(dir.resolve("known_hosts"), String.join("\n", lines) + "\n"));
    }

    @Test
    void revokedWinsOverAKnownEntryForTheSameKey() throws Exception {
        KnownHostsFile k = file("10.0.0.5 ssh-ed25519 " + b64(A), "@revoked * ssh-ed25519 " + b64(A));
        assertThat(k.check("10.0.0.5", "ssh-ed25519", A)).isEqualTo(KnownHostsFile.Verdict.REVOKED);
        assertThat(k.check("10.0.0.5", "ssh-ed25519", B)).isEqualTo(KnownHostsFile.Verdict.CHANGED);
    }

    @Test
    void wildcardsAndNegationMatchAsInOpenSsh() throws Exception {
        KnownHostsFile k = file("!10.0.0.7,10.0.0.* ssh-ed25519 " + b64(A), "[lab-?.example.org]:30430 ssh-ed25519 " + b64(B));
        assertThat(k.check("10.0.0.5", "ssh-ed25519", A)).isEqualTo(KnownHostsFile.Verdict.KNOWN);
        assertThat(k.check("10.0.0.7", "ssh-ed25519", A)).isEqualTo(KnownHostsFile.Verdict.UNKNOWN);
        assertThat(k.check("10.0.1.5", "ssh-ed25519", A)).isEqualTo(KnownHostsFile.Verdict.UNKNOWN);
        assertThat(k.check("[lab-a.example.org]:30430", "ssh-ed25519", B)).isEqualTo(KnownHostsFile.Verdict.KNOWN);
        assertThat(k.check("[lab-ab.example.org]:30430", "ssh-ed25519", B)).isEqualTo(KnownHostsFile.Verdict.UNKNOWN);
        assertThat(k.check("lab-a.example.org", "ssh-ed25519", B)).isEqualTo(KnownHostsFile.Verdict.UNKNOWN);
    }

    @Test
    void hashedNamesMatchTheirExactHost() throws Exception {
        byte[] salt = "0123456789abcdefghij".getBytes(StandardCharsets.UTF_8);
        Mac mac = Mac.getInstance("HmacSHA1");
        mac.init(new SecretKeySpec(salt, "HmacSHA1"));
        String hashed = "|1|" + b64(salt) + "|" + b64(mac.doFinal("[10.0.0.5]:2222".getBytes(StandardCharsets.UTF_8)));
        KnownHostsFile k = file(hashed + " ssh-ed25519 " + b64(A));
        assertThat(k.check("[10.0.0.5]:2222", "ssh-ed25519", A)).isEqualTo(KnownHostsFile.Verdict.KNOWN);
        assertThat(k.check("10.0.0.5", "ssh-ed25519", A)).isEqualTo(KnownHostsFile.Verdict.UNKNOWN);
    }

    @Test
    void aCertificateAuthorityLineAloneDoesNotMakeAKeyKnown() throws Exception {
        KnownHostsFile k = file("@cert-authority *.example.org ssh-ed25519 " + b64(A), "# comment", "garbage");
        assertThat(k.check("n1.example.org", "ssh-ed25519", B)).isEqualTo(KnownHostsFile.Verdict.ONLY_CA);
        assertThat(k.check("n1.example.com", "ssh-ed25519", B)).isEqualTo(KnownHostsFile.Verdict.UNKNOWN);
    }

    @Test
    void patternMatching() {
        assertThat(KnownHostsFile.matches(List.of("*"), "x")).isTrue();
        assertThat(KnownHostsFile.matches(List.of("a*c"), "abbbc")).isTrue();
        assertThat(KnownHostsFile.matches(List.of("a*c"), "abbbd")).isFalse();
        assertThat(KnownHostsFile.matches(List.of("!b", "*"), "b")).isFalse();
        assertThat(KnownHostsFile.matches(List.of("!b"), "a")).isFalse();
        assertThat(KnownHostsFile.matches(List.of("Host.Example"), "host.example")).isTrue();
    }
}
