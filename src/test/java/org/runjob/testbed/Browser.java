package org.runjob.testbed;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Debian's headless Chromium driven through its DevTools protocol (the JDK's WebSocket client, no
 * driver to install): pages navigated, scripts evaluated in them, screenshots taken, and every
 * console message, uncaught exception and log entry (a request the Content-Security-Policy
 * refused) kept.
 */
public final class Browser implements AutoCloseable {

    private final Process chromium;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> waiting = new ConcurrentHashMap<>();
    private final List<String> console = Collections.synchronizedList(new ArrayList<>());

    private Browser(Process chromium, WebSocket socket) {
        this.chromium = chromium;
        this.socket = socket;
    }

    /** Starts Chromium with a profile in {@code profile} and opens its one page. */
    public static Browser start(Path profile) throws Exception {
        String binary = null;
        for (String b : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser")) {
            if (Files.isExecutable(Path.of(b))) {
                binary = b;
            }
        }
        Testbed.require(binary != null, "headless Chromium (Debian: chromium)");
        Files.createDirectories(profile);
        Process p = new ProcessBuilder(binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                "--remote-debugging-port=0", "--user-data-dir=" + profile, "--window-size=1280,900", "about:blank")
                .redirectErrorStream(true).redirectOutput(profile.resolve("chromium.log").toFile()).start();
        Path active = profile.resolve("DevToolsActivePort");
        try {
            Poll.until(() -> lines(active) >= 2, Duration.ofSeconds(60), "Chromium's DevToolsActivePort");
        } catch (RuntimeException | AssertionError e) {
            p.destroyForcibly();
            throw e;
        }
        int port = Integer.parseInt(Files.readString(active).lines().findFirst().orElseThrow().strip());
        HttpClient http = HttpClient.newHttpClient();
        String pageSocket = null;
        for (JsonNode t : Json.MAPPER.readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list")).build(),
                HttpResponse.BodyHandlers.ofString()).body())) {
            if (t.path("type").asString("").equals("page")) {
                pageSocket = t.path("webSocketDebuggerUrl").asString();
            }
        }
        if (pageSocket == null) {
            p.destroyForcibly();
            throw new AssertionError("Chromium opened no page");
        }
        Browser[] self = new Browser[1];
        StringBuilder partial = new StringBuilder();
        WebSocket ws = http.newWebSocketBuilder().buildAsync(URI.create(pageSocket), new WebSocket.Listener() {
            @Override
            public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
                partial.append(data);
                if (last) {
                    String message = partial.toString();
                    partial.setLength(0);
                    while (self[0] == null) {
                        Thread.onSpinWait();
                    }
                    self[0].received(Json.MAPPER.readTree(message));
                }
                webSocket.request(1);
                return null;
            }
        }).get(30, TimeUnit.SECONDS);
        Browser b = new Browser(p, ws);
        self[0] = b;
        b.call("Runtime.enable", Json.object());
        b.call("Log.enable", Json.object());
        b.call("Page.enable", Json.object());
        return b;
    }

    private void received(JsonNode m) {
        if (m.has("id")) {
            CompletableFuture<JsonNode> f = waiting.remove(m.path("id").asInt());
            if (f != null) {
                f.complete(m);
            }
            return;
        }
        String method = m.path("method").asString("");
        if (method.equals("Runtime.consoleAPICalled")) {
            console.add("console." + m.path("params").path("type").asString() + ": " + m.path("params").path("args").toString());
        } else if (method.equals("Runtime.exceptionThrown")) {
            console.add("exception: " + m.path("params").path("exceptionDetails").toString());
        } else if (method.equals("Log.entryAdded")) {
            console.add("log " + m.path("params").path("entry").path("level").asString() + ": " + m.path("params").path("entry").path("text").asString());
        }
    }

    /** One DevTools call and its result; an error answer fails the test. */
    public JsonNode call(String method, ObjectNode params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        waiting.put(id, answer);
        ObjectNode m = Json.object().put("id", id).put("method", method);
        m.set("params", params);
        socket.sendText(Json.compact(m), true).get(30, TimeUnit.SECONDS);
        JsonNode r = answer.get(60, TimeUnit.SECONDS);
        if (r.has("error")) {
            throw new AssertionError(method + ": " + r.get("error"));
        }
        return r.path("result");
    }

    /** Goes to {@code url} and waits for its load event. */
    public void open(String url) throws Exception {
        call("Page.navigate", Json.object().put("url", url));
        Poll.until(() -> "complete".equals(evalQuietly("document.readyState")) && !"about:blank".equals(evalQuietly("location.href")),
                Duration.ofSeconds(30), "the page " + url + " to load");
    }

    /** The value of {@code js} in the page (a string, number or boolean, as JSON); an exception fails the test. */
    public JsonNode eval(String js) throws Exception {
        JsonNode r = call("Runtime.evaluate", Json.object().put("expression", js).put("returnByValue", true));
        if (r.has("exceptionDetails")) {
            throw new AssertionError("the page threw on " + js + ": " + r.get("exceptionDetails"));
        }
        return r.path("result").path("value");
    }

    /** {@code js}'s value as a string, or null when it fails or is not a string. */
    public String evalQuietly(String js) {
        try {
            JsonNode v = eval(js);
            return v.isString() ? v.asString() : v.isMissingNode() || v.isNull() ? null : v.toString();
        } catch (Exception | AssertionError e) {
            return null;
        }
    }

    /** Waits until {@code js} is true in the page. */
    public void until(String js, Duration timeout, String what) {
        Poll.until(() -> "true".equals(evalQuietly("String(!!(" + js + "))")), timeout, what, () -> "console: " + console());
    }

    /** A PNG of the page as it is now, {@code width} x {@code height} CSS pixels. */
    public void screenshot(Path png, int width, int height) throws Exception {
        call("Emulation.setDeviceMetricsOverride", Json.object().put("width", width).put("height", height).put("deviceScaleFactor", 1)
                .put("mobile", false));
        String data = call("Page.captureScreenshot", Json.object().put("format", "png")).path("data").asString();
        Files.write(png, Base64.getDecoder().decode(data));
    }

    /** Every console message, exception and log entry so far. */
    public List<String> console() {
        synchronized (console) {
            return List.copyOf(console);
        }
    }

    @Override
    public void close() {
        socket.abort();
        chromium.destroy();
        try {
            if (!chromium.waitFor(10, TimeUnit.SECONDS)) {
                chromium.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        chromium.descendants().forEach(ProcessHandle::destroyForcibly);
    }

    private static long lines(Path file) {
        try {
            return Files.isRegularFile(file) ? Files.readString(file).lines().count() : 0;
        } catch (IOException e) {
            return 0;
        }
    }
}
