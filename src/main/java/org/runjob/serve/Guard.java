package org.runjob.serve;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import com.sun.net.httpserver.Headers;

/**
 * Who may see the page, decided per request before anything is read:
 *
 * <ul>
 *   <li>The {@code Host} header must name the address the page is bound to (or, bound to every
 *       address, one of this machine's addresses or names), with its port: a page on another
 *       site that rebinds its own name to this address (DNS rebinding) gets a refusal.</li>
 *   <li>The token, printed once when the page starts: given as {@code ?token=} it is checked and
 *       kept in a cookie ({@code HttpOnly}, {@code SameSite=Strict}); every other request must
 *       carry that cookie. It is asked even on loopback, since every user of the machine can reach
 *       loopback (as Jupyter does).</li>
 *   <li>A request that changes something (POST) must also come from the page itself: its
 *       {@code Origin} names this page.</li>
 * </ul>
 */
final class Guard {

    static final String COOKIE = "runjob_serve";

    /** Every response's headers: nothing from elsewhere, no inline script, no framing, no caching, no referrer. */
    static final List<String[]> HEADERS = List.of(
            new String[] {"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self';"
                    + " base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
            new String[] {"X-Content-Type-Options", "nosniff"},
            new String[] {"X-Frame-Options", "DENY"},
            new String[] {"Referrer-Policy", "no-referrer"},
            new String[] {"Cache-Control", "no-store"},
            new String[] {"Cross-Origin-Resource-Policy", "same-origin"});

    private final Set<String> hosts;
    private final byte[] token;

    /** @param hosts the names the Host header may give, lower case, without the port */
    Guard(Set<String> hosts, int port, String token) {
        this.hosts = hosts.stream().map(h -> h.toLowerCase(Locale.ROOT) + ":" + port).collect(Collectors.toUnmodifiableSet());
        this.token = token.getBytes(StandardCharsets.UTF_8);
    }

    /** The names a page bound to {@code bind} answers to: the address itself, and loopback's names or this machine's. */
    static Set<String> hostsFor(InetAddress bind, List<InetAddress> machine, List<String> machineNames) {
        Set<String> out = new TreeSet<>();
        out.add(literal(bind));
        if (bind.isLoopbackAddress() || bind.isAnyLocalAddress()) {
            out.add("localhost");
            out.add("127.0.0.1");
            out.add("[::1]");
        }
        if (bind.isAnyLocalAddress()) {
            machine.forEach(a -> out.add(literal(a)));
            out.addAll(machineNames);
        }
        return out;
    }

    static String literal(InetAddress a) {
        String s = a.getHostAddress();
        int zone = s.indexOf('%');
        if (zone >= 0) {
            s = s.substring(0, zone);
        }
        return s.contains(":") ? "[" + s + "]" : s;
    }

    /** Why the request is refused (status and text), or empty when it may go on. */
    Optional<Refusal> check(String method, URI uri, Headers headers) {
        String host = Optional.ofNullable(headers.getFirst("Host")).orElse("").toLowerCase(Locale.ROOT);
        if (!hosts.contains(host)) {
            return Optional.of(new Refusal(421, "this page answers to " + String.join(", ", hosts) + ", not to Host " + printable(host)));
        }
        if (!method.equals("GET") && !method.equals("HEAD") && !method.equals("POST")) {
            return Optional.of(new Refusal(405, "only GET, HEAD and POST"));
        }
        if (!method.equals("POST") && queryToken(uri).map(this::matches).orElse(false)) {
            return Optional.empty(); // the link printed at start: the caller sets the cookie
        }
        if (!cookieToken(headers).map(this::matches).orElse(false)) {
            return Optional.of(new Refusal(403, "open the link runjob serve printed when it started (it holds the page's token)"));
        }
        if (method.equals("POST")) {
            String origin = Optional.ofNullable(headers.getFirst("Origin")).orElse("");
            if (!sameOrigin(origin)) {
                return Optional.of(new Refusal(403, "a change is taken only from this page itself, not from Origin " + printable(origin)));
            }
        }
        return Optional.empty();
    }

    /** True when the request brought the token in its query (the printed link): it gets the cookie. */
    boolean tokenInQuery(URI uri) {
        return queryToken(uri).map(this::matches).orElse(false);
    }

    String cookie() {
        return COOKIE + "=" + new String(token, StandardCharsets.UTF_8) + "; Path=/; HttpOnly; SameSite=Strict";
    }

    private boolean sameOrigin(String origin) {
        try {
            URI o = new URI(origin);
            return "http".equals(o.getScheme()) && o.getPath() != null && o.getPath().isEmpty() && o.getPort() > 0
                    && hosts.contains(o.getHost().toLowerCase(Locale.ROOT) + ":" + o.getPort());
        } catch (URISyntaxException | RuntimeException e) {
            return false;
        }
    }

    private boolean matches(String given) {
        return MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8), token);
    }

    private static Optional<String> queryToken(URI uri) {
        String q = uri.getRawQuery();
        if (q == null) {
            return Optional.empty();
        }
        for (String pair : q.split("&")) {
            if (pair.startsWith("token=")) {
                return Optional.of(pair.substring("token=".length()));
            }
        }
        return Optional.empty();
    }

    private static Optional<String> cookieToken(Headers headers) {
        for (String line : headers.getOrDefault("Cookie", List.of())) {
            for (String c : line.split(";")) {
                String t = c.strip();
                if (t.startsWith(COOKIE + "=")) {
                    return Optional.of(t.substring(COOKIE.length() + 1));
                }
            }
        }
        return Optional.empty();
    }

    private static String printable(String s) {
        String t = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        return t.replaceAll("[^\\x20-\\x7e]", "?");
    }

    /** A refused request: its HTTP status and why, as plain text. */
    record Refusal(int status, String why) {
    }
}
