package org.runjob.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.json.Json;
import org.runjob.run.Io;
import org.runjob.run.RunIndex;
import org.runjob.session.Interrupts;
import org.runjob.testbed.Browser;
import org.runjob.testbed.LabPage;
import org.runjob.testbed.Poll;

import tools.jackson.databind.JsonNode;

/**
 * What {@code runjob serve} refuses and what it survives: a foreign Host header (DNS rebinding),
 * a request without the token, on loopback and on every address; a stop from another origin or
 * without {@code --allow-stop}; URLs that try to name files; a 50 MiB status.json, a run folder
 * others may write, and 200 runs in the index.
 */
class LabGuardTest {

    static final Path WORKERS = Path.of("src/test/resources/workers").toAbsolutePath();

    @TempDir
    Path tmp;

    private final HttpClient http = HttpClient.newHttpClient();
    private String runId;

    @AfterEach
    void end() {
        if (runId != null) {
            Cli.runNow(env(), "stop", runId, "--logs-dir", tmp.resolve("runs").toString());
        }
    }

    Map<String, String> env() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("XDG_STATE_HOME", tmp.resolve("state").toString());
        return env;
    }

    HttpResponse<String> send(String url, String method, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).method(method, HttpRequest.BodyPublishers.noBody());
        headers.forEach(b::header);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A request with a Host header of its own (the JDK's client sets its own): status line's code and body. */
    static String[] raw(String port, String path, String host, String cookie) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", Integer.parseInt(port))) {
            socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nCookie: " + cookie + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new String[] {response.substring(9, 12), response.substring(response.indexOf("\r\n\r\n") + 4)};
        }
    }

    String detachedSleeper() throws Exception {
        Path job = Files.writeString(tmp.resolve("sleepy.yaml"), String.join("\n",
                "name: sleepy",
                "nodes:",
                "  - {name: n1, local: true, workers: 1}",
                "entrypoint: {command: [python3, sleeper.py]}",
                "files: [" + WORKERS.resolve("sleeper.py") + ", " + WORKERS.resolve("common.py") + "]",
                "env: {PIDDIR: " + tmp + "}",
                "failure: {grace_period_s: 2}",
                "workdir: " + tmp.resolve("work"),
                "logs: {dir: " + tmp.resolve("runs") + "}", ""));
        Cli detached = Cli.runNow(env(), "--detach", job.toString());
        assertThat(detached.code()).as(detached.err()).isZero();
        return detached.out().strip();
    }

    @Test
    void aForeignHostAMissingTokenAndAnotherOriginAreRefusedAndNoUrlNamesAFile() throws Exception {
        runId = detachedSleeper();
        try (LabPage page = LabPage.start(tmp.resolve("serve"), env(), List.of("serve", "--port", "0", "--logs-dir", tmp.resolve("runs").toString()))) {
            String port = page.base().replaceAll(".*:(\\d+)/$", "$1");
            String cookie = "runjob_serve=" + page.token();
            String[] rebound = raw(port, "/api/runs", "attacker.example:" + port, cookie);
            assertThat(rebound[0]).isEqualTo("421");
            assertThat(rebound[1]).doesNotContain(runId).startsWith("this page answers to ");
            assertThat(raw(port, "/api/runs", "127.0.0.1:" + port, cookie)[1]).contains(runId);
            assertThat(send(page.base() + "nothing", "GET", Map.of()).headers().firstValue("Content-Security-Policy").orElse(""))
                    .startsWith("default-src 'none'; script-src 'self';");

            HttpResponse<String> noToken = send(page.base() + "api/runs", "GET", Map.of());
            assertThat(noToken.statusCode()).isEqualTo(403);
            assertThat(noToken.body()).doesNotContain(runId);
            assertThat(send(page.base() + "api/runs", "GET", Map.of("Cookie", "runjob_serve=" + "0".repeat(48))).statusCode()).isEqualTo(403);
            assertThat(send(page.base() + "?token=" + "0".repeat(48), "GET", Map.of()).statusCode()).isEqualTo(403);
            HttpResponse<String> link = send(page.url(), "GET", Map.of());
            assertThat(link.statusCode()).isEqualTo(303);
            assertThat(link.headers().firstValue("Set-Cookie").orElse("")).isEqualTo(cookie + "; Path=/; HttpOnly; SameSite=Strict");
            assertThat(link.headers().firstValue("Location").orElse("")).isEqualTo("/");
            Poll.until(() -> runs(page).contains(runId), Duration.ofSeconds(30), "the run listed");

            // no URL reaches a file: runs are found by id only, and the static files are a fixed list
            for (String path : List.of("api/run/..%2F..%2F..%2Fetc%2Fpasswd", "api/run/" + tmp.resolve("runs/sleepy/" + runId).toString().replace("/", "%2F"),
                    "static/..%2F..%2Fpom.xml", "static/index.html", "api/run/" + runId.substring(0, 10), "etc/passwd")) {
                HttpResponse<String> r = send(page.base() + path, "GET", Map.of("Cookie", cookie));
                assertThat(r.statusCode()).as(path).isEqualTo(404);
                assertThat(r.body()).as(path).doesNotContain("root:");
            }
            assertThat(send(page.base() + "api/run/" + runId, "PUT", Map.of("Cookie", cookie)).statusCode()).isEqualTo(405);

            // read-only by default: no stop, even from the page's own origin
            HttpResponse<String> stop = send(page.base() + "api/run/" + runId + "/stop", "POST", Map.of("Cookie", cookie, "Origin", page.base()
                    .substring(0, page.base().length() - 1)));
            assertThat(stop.statusCode()).isEqualTo(403);
            assertThat(stop.body()).isEqualTo("this page cannot stop runs: runjob serve --allow-stop lets it\n");
        }
        try (LabPage page = LabPage.start(tmp.resolve("serve-stop"), env(), List.of("serve", "--port", "0", "--allow-stop", "--logs-dir",
                tmp.resolve("runs").toString()))) {
            String cookie = "runjob_serve=" + page.token();
            String origin = page.base().substring(0, page.base().length() - 1);
            String stop = page.base() + "api/run/" + runId + "/stop";
            assertThat(send(stop, "POST", Map.of("Cookie", cookie, "Origin", "http://attacker.example")).statusCode()).isEqualTo(403);
            assertThat(send(stop, "POST", Map.of("Cookie", cookie)).statusCode()).isEqualTo(403);
            assertThat(send(stop, "POST", Map.of("Origin", origin)).statusCode()).isEqualTo(403);
            assertThat(Files.exists(tmp.resolve("runs/sleepy/" + runId + "/summary.json"))).isFalse();
            HttpResponse<String> stopped = send(stop, "POST", Map.of("Cookie", cookie, "Origin", origin));
            assertThat(stopped.statusCode()).as(stopped.body()).isEqualTo(200);
            assertThat(Json.MAPPER.readTree(stopped.body()).path("said").asString()).contains(runId);
            Poll.until(() -> Files.exists(tmp.resolve("runs/sleepy/" + runId + "/summary.json")), Duration.ofSeconds(60), "the run stopped");
            assertThat(page.json("/api/run/" + runId).path("state").asString()).isEqualTo("interrupted");
            runId = null;
        }
    }

    @Test
    void everyAddressStillAsksTheToken() throws Exception {
        try (LabPage page = LabPage.start(tmp.resolve("serve"), env(), List.of("serve", "--port", "0", "--bind", "0.0.0.0", "--logs-dir",
                tmp.resolve("runs").toString()))) {
            String port = page.base().replaceAll(".*:(\\d+)/$", "$1");
            assertThat(Files.readString(tmp.resolve("serve/serve.out"))).contains(", on 0.0.0.0; Ctrl-C ends it");
            String loopback = "http://127.0.0.1:" + port + "/api/runs";
            assertThat(send(loopback, "GET", Map.of()).statusCode()).isEqualTo(403);
            assertThat(send(loopback, "GET", Map.of("Cookie", "runjob_serve=" + page.token())).statusCode()).isEqualTo(200);
            assertThat(raw(port, "/api/runs", "attacker.example:" + port, "runjob_serve=" + page.token())[0]).isEqualTo("421");
        }
    }

    @Test
    void aHugeStatusAPlantedFolderAnd200RunsLeaveThePageUpAndRight() throws Exception {
        Path runs = tmp.resolve("runs");
        Path big = Files.createDirectories(runs.resolve("big/20261201-000000-0000"));
        try (RandomAccessFile f = new RandomAccessFile(big.resolve("status.json").toFile(), "rw")) {
            f.setLength(50L << 20);
        }
        Path planted = Files.createDirectories(runs.resolve("big/20261201-000001-0001"));
        Files.writeString(planted.resolve("summary.json"), "{\"result\": \"succeeded\", \"exit_code\": 0}");
        Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rwxrwxrwx"));
        Io io = new Io(new PrintStream(System.out, true, StandardCharsets.UTF_8), System.err, env(), Clock.systemUTC(), () -> 0, false,
                Interrupts.none());
        for (int i = 0; i < 200; i++) {
            String id = String.format("20261130-%06d-%04x", i, i);
            Path folder = Files.createDirectories(tmp.resolve("many/many/" + id));
            Files.writeString(folder.resolve("summary.json"), "{\"job\": \"many\", \"run_id\": \"" + id + "\", \"result\": \"succeeded\","
                    + " \"exit_code\": 0, \"start\": \"2026-11-30T00:00:00Z\", \"end\": \"2026-11-30T00:00:01Z\"}");
            RunIndex.add(io, RunIndex.Entry.here(id, "many", Instant.parse("2026-11-30T00:00:00Z"), folder));
        }
        Files.createDirectories(tmp.resolve("serve"));
        Files.createSymbolicLink(tmp.resolve("serve/runs"), runs);
        try (LabPage page = LabPage.start(tmp.resolve("serve"), env(), List.of("serve", "--port", "0"))) {
            JsonNode all = page.json("/api/runs");
            assertThat(all.path("runs").size()).isEqualTo(201);
            JsonNode first = all.path("runs").get(0);
            assertThat(first.path("run_id").asString()).isEqualTo("20261201-000000-0000");
            assertThat(first.path("state").asString()).isEqualTo("unreadable");
            assertThat(first.path("why").asString()).isEqualTo("status.json is 50 MiB, more than the 16 MiB runjob reads back: not runjob's");
            assertThat(all.path("left_out").toString()).contains("runs/big/20261201-000001-0001 is writable by other users (mode 0777)");
            assertThat(all.path("runs").toString()).doesNotContain("20261201-000001-0001");
            assertThat(all.path("runs").valueStream().filter(r -> r.path("job").asString().equals("many")).count()).isEqualTo(200);
            try (Browser b = Browser.start(tmp.resolve("chromium"))) {
                b.open(page.url());
                b.until("document.body.getAttribute('data-runs') === '201'", Duration.ofSeconds(30), "201 runs on the page");
                assertThat(b.eval("document.querySelectorAll('#runs tbody tr[data-run-id]').length").asInt()).isEqualTo(201);
                assertThat(b.eval("document.getElementById('left-out').textContent").asString()).startsWith("left out: ")
                        .contains("runs/big/20261201-000001-0001 is writable by other users");
            }
        }
    }

    private static String runs(LabPage page) {
        try {
            return page.get("/api/runs").body();
        } catch (Exception e) {
            return e.toString();
        }
    }
}
