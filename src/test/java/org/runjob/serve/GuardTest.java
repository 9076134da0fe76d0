package org.runjob.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import com.sun.net.httpserver.Headers;
import org.junit.jupiter.api.Test;

/** Which requests the page takes: Host, token, Origin. */
class GuardTest {

    static final String TOKEN = "ab".repeat(24);

    static Headers headers(Map<String, String> h) {
        Headers out = new Headers();
        h.forEach(out::add);
        return out;
    }

    Optional<Integer> status(Guard g, String method, String uri, Map<String, String> h) {
        return g.check(method, URI.create(uri), headers(h)).map(Guard.Refusal::status);
    }

    @Test
    void onLoopbackTheHostMustBeLoopbacksAndTheCookieMustHoldTheToken() throws Exception {
        Guard g = new Guard(Guard.hostsFor(InetAddress.getByName("127.0.0.1"), List.of(), List.of("box")), 8421, TOKEN);
        String cookie = Guard.COOKIE + "=" + TOKEN;
        assertThat(status(g, "GET", "/api/runs", Map.of("Host", "127.0.0.1:8421", "Cookie", cookie))).isEmpty();
        assertThat(status(g, "GET", "/api/runs", Map.of("Host", "LOCALHOST:8421", "Cookie", "a=b; " + cookie))).isEmpty();
        assertThat(status(g, "GET", "/api/runs", Map.of("Host", "[::1]:8421", "Cookie", cookie))).isEmpty();
        // the machine's name is not loopback's, another port is another page, and a rebound name is refused
        assertThat(status(g, "GET", "/api/runs", Map.of("Host", "box:8421", "Cookie", cookie))).contains(421);
        assertThat(status(g, "GET", "/api/runs", Map.of("Host", "127.0.0.1:8422", "Cookie", cookie))).contains(421);
        assertThat(status(g, "GET", "/api/runs", Map.of("Host", "evil.example:8421", "Cookie", cookie))).contains(421);
        assertThat(status(g, "GET", "/api/runs", Map.of("Cookie", cookie))).contains(421);
        // the token: in the printed link, or in the cookie; a wrong one, a prefix, or none is refused
        assertThat(status(g, "GET", "/?token=" + TOKEN, Map.of("Host", "127.0.0.1:8421"))).isEmpty();
        assertThat(g.tokenInQuery(URI.create("/?token=" + TOKEN))).isTrue();
        assertThat(status(g, "GET", "/?token=" + TOKEN.substring(1), Map.of("Host", "127.0.0.1:8421"))).contains(403);
        assertThat(status(g, "GET", "/", Map.of("Host", "127.0.0.1:8421", "Cookie", Guard.COOKIE + "=" + TOKEN.substring(2)))).contains(403);
        assertThat(status(g, "GET", "/", Map.of("Host", "127.0.0.1:8421"))).contains(403);
        assertThat(status(g, "DELETE", "/", Map.of("Host", "127.0.0.1:8421", "Cookie", cookie))).contains(405);
        assertThat(g.cookie()).isEqualTo(Guard.COOKIE + "=" + TOKEN + "; Path=/; HttpOnly; SameSite=Strict");
    }

    @Test
    void aChangeComesOnlyFromThePageItself() throws Exception {
        Guard g = new Guard(Guard.hostsFor(InetAddress.getByName("127.0.0.1"), List.of(), List.of()), 8421, TOKEN);
        String cookie = Guard.COOKIE + "=" + TOKEN;
        assertThat(status(g, "POST", "/api/run/r/stop", Map.of("Host", "127.0.0.1:8421", "Cookie", cookie, "Origin", "http://127.0.0.1:8421")))
                .isEmpty();
        for (String origin : List.of("http://evil.example", "http://127.0.0.1:8422", "https://127.0.0.1:8421", "null", "http://127.0.0.1:8421/x")) {
            assertThat(status(g, "POST", "/api/run/r/stop", Map.of("Host", "127.0.0.1:8421", "Cookie", cookie, "Origin", origin))).as(origin)
                    .contains(403);
        }
        assertThat(status(g, "POST", "/api/run/r/stop", Map.of("Host", "127.0.0.1:8421", "Cookie", cookie))).contains(403);
        // the printed link's token is for opening the page, never for a change
        assertThat(status(g, "POST", "/api/run/r/stop?token=" + TOKEN, Map.of("Host", "127.0.0.1:8421", "Origin", "http://evil.example")))
                .contains(403);
    }

    @Test
    void onEveryAddressTheMachinesAddressesAndNamesAnswer() throws Exception {
        Set<String> hosts = Guard.hostsFor(InetAddress.getByName("0.0.0.0"), List.of(InetAddress.getByName("10.1.2.3"),
                InetAddress.getByName("fe80::1%2")), List.of("gpu-box"));
        assertThat(hosts).containsExactlyInAnyOrder("0.0.0.0", "localhost", "127.0.0.1", "[::1]", "10.1.2.3", "[fe80:0:0:0:0:0:0:1]", "gpu-box");
        assertThat(Guard.hostsFor(InetAddress.getByName("10.1.2.3"), List.of(), List.of("gpu-box"))).containsExactly("10.1.2.3");
    }
}
