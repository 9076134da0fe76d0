package org.runjob.testbed;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;

/**
 * {@code runjob serve} as its own process for a test: started with its output in files, its URL
 * (the first line it prints) read back, and asked over HTTP as the page asks (the token's cookie).
 */
public final class LabPage implements AutoCloseable {

    private final Process process;
    private final String url;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private LabPage(Process process, String url) {
        this.process = process;
        this.url = url;
    }

    /** Starts {@code runjob serve ARGS} in {@code dir} (serve.out, serve.err) and waits for its URL. */
    public static LabPage start(Path dir, Map<String, String> env, List<String> args) throws IOException {
        Files.createDirectories(dir);
        Process p = RunjobProcess.command(dir, "serve", env, args);
        try {
            Poll.until(() -> firstLine(dir.resolve("serve.out")).startsWith("http://") || !p.isAlive(), Duration.ofSeconds(60), "serve's URL",
                    () -> firstLine(dir.resolve("serve.err")));
        } catch (RuntimeException | Error e) {
            p.destroyForcibly();
            throw e;
        }
        if (!p.isAlive()) {
            throw new AssertionError("serve ended: " + Files.readString(dir.resolve("serve.err")));
        }
        return new LabPage(p, firstLine(dir.resolve("serve.out")));
    }

    private static String firstLine(Path file) {
        try {
            return Files.isRegularFile(file) ? Files.readString(file).lines().findFirst().orElse("") : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** The URL it printed, token and all. */
    public String url() {
        return url;
    }

    /** The page's address without the token: http://HOST:PORT/. */
    public String base() {
        return url.substring(0, url.indexOf('?'));
    }

    public String token() {
        return url.substring(url.indexOf("token=") + "token=".length());
    }

    public Process process() {
        return process;
    }

    /** GET {@code path} with the page's cookie; the response. */
    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(base() + path.substring(1))).header("Cookie", "runjob_serve=" + token()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** GET {@code path} as JSON; a status other than 200 fails the test. */
    public JsonNode json(String path) throws IOException, InterruptedException {
        HttpResponse<String> r = get(path);
        if (r.statusCode() != 200) {
            throw new AssertionError("GET " + path + ": " + r.statusCode() + " " + r.body());
        }
        return Json.MAPPER.readTree(r.body());
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
