package org.runjob.transport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * An OpenSSH known_hosts file, read as {@code sshd(8)}'s "SSH_KNOWN_HOSTS FILE FORMAT" says.
 *
 * <ul>
 *   <li>Host patterns are comma-separated; {@code *} and {@code ?} are wildcards; a pattern
 *       starting with {@code !} negates: a line whose negated pattern matches never applies, even
 *       if another pattern of it does. Non-standard ports are written {@code [host]:port}.</li>
 *   <li>Hashed names ({@code |1|salt|hash}, HMAC-SHA1 of the name) match their exact name.</li>
 *   <li>{@code @revoked} marks a key that must never be accepted for the hosts it names;
 *       {@code @cert-authority} lines trust a CA for host certificates, which runjob does not check:
 *       such a line alone never makes a key known.</li>
 * </ul>
 */
final class KnownHostsFile {

    /** What the file says about a host's key. */
    enum Verdict { KNOWN, REVOKED, CHANGED, ONLY_CA, UNKNOWN }

    private record Line(String marker, List<String> patterns, String type, byte[] key) {
    }

    private final List<Line> lines = new ArrayList<>();

    /** Reads {@code file}; a missing file is an empty one. Lines that cannot be read are skipped, as OpenSSH does. */
    static KnownHostsFile read(Path file) throws IOException {
        KnownHostsFile k = new KnownHostsFile();
        if (!Files.exists(file)) {
            return k;
        }
        for (String raw : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+");
            String marker = "";
            int i = 0;
            if (f[0].startsWith("@")) {
                marker = f[0];
                i = 1;
            }
            if (f.length < i + 3) {
                continue;
            }
            try {
                k.lines.add(new Line(marker, List.of(f[i].split(",")), f[i + 1], Base64.getDecoder().decode(f[i + 2])));
            } catch (IllegalArgumentException e) {
                // not base64: skipped
            }
        }
        return k;
    }

    /** Remembers a key added to the file (accept-new), so later checks in this run see it. */
    void add(String host, String type, byte[] key) {
        lines.add(new Line("", List.of(host), type, key.clone()));
    }

    /**
     * The verdict for {@code key} (of {@code type}) presented by {@code host} ({@code addr} or
     * {@code [addr]:port}): revoked wins over everything, then an exact key, then another key of
     * the same type (changed).
     */
    Verdict check(String host, String type, byte[] key) {
        boolean changed = false;
        boolean known = false;
        boolean ca = false;
        for (Line l : lines) {
            if (!matches(l.patterns(), host)) {
                continue;
            }
            boolean same = MessageDigest.isEqual(l.key(), key);
            switch (l.marker()) {
                case "@revoked" -> {
                    if (same) {
                        return Verdict.REVOKED;
                    }
                }
                case "@cert-authority" -> ca = true;
                case "" -> {
                    if (same) {
                        known = true;
                    } else if (l.type().equals(type)) {
                        changed = true;
                    }
                }
                default -> { }
            }
        }
        if (known) {
            return Verdict.KNOWN;
        }
        if (changed) {
            return Verdict.CHANGED;
        }
        return ca ? Verdict.ONLY_CA : Verdict.UNKNOWN;
    }

    /** OpenSSH's match_hostname: any negated match excludes, else any positive match includes. */
    static boolean matches(List<String> patterns, String host) {
        boolean positive = false;
        for (String p : patterns) {
            boolean negated = p.startsWith("!");
            String pattern = negated ? p.substring(1) : p;
            boolean hit = pattern.startsWith("|1|") ? hashedMatch(pattern, host) : wildcard(pattern.toLowerCase(Locale.ROOT),
                    host.toLowerCase(Locale.ROOT));
            if (hit && negated) {
                return false;
            }
            positive |= hit;
        }
        return positive;
    }

    /** {@code *} any run of characters, {@code ?} exactly one; everything else literally. */
    static boolean wildcard(String pattern, String text) {
        int p = 0;
        int t = 0;
        int star = -1;
        int mark = 0;
        while (t < text.length()) {
            if (p < pattern.length() && (pattern.charAt(p) == '?' || pattern.charAt(p) == text.charAt(t))) {
                p++;
                t++;
            } else if (p < pattern.length() && pattern.charAt(p) == '*') {
                star = p++;
                mark = t;
            } else if (star >= 0) {
                p = star + 1;
                t = ++mark;
            } else {
                return false;
            }
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') {
            p++;
        }
        return p == pattern.length();
    }

    private static boolean hashedMatch(String pattern, String host) {
        String[] parts = pattern.split("\\|");
        if (parts.length != 4) {
            return false;
        }
        try {
            byte[] salt = Base64.getDecoder().decode(parts[2]);
            byte[] hash = Base64.getDecoder().decode(parts[3]);
            Mac mac = Mac.getInstance("HmacSHA1");
            mac.init(new SecretKeySpec(salt, "HmacSHA1"));
            return Arrays.equals(mac.doFinal(host.getBytes(StandardCharsets.UTF_8)), hash);
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            return false;
        }
    }
}
