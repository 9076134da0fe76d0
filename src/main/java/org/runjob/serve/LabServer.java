package org.runjob.serve;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.runjob.json.Json;
import org.runjob.logs.RunFolder;
import org.runjob.protocol.Printable;
import org.runjob.runs.PlotPage;
import org.runjob.runs.RunRecords;

import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob serve}'s web server: the JDK's own HTTP server (no dependency, and Server-Sent
 * Events need nothing more than a response that stays open), on one address, answering
 * read-only requests about the user's runs and the lab's servers. Every request passes the
 * {@link Guard} first; every response carries its headers. Pages and scripts are fixed resources;
 * data comes as JSON from {@code /api/}; no URL names a file.
 */
public final class LabServer implements AutoCloseable {

    /** At most this many live logs are streamed at once; more are answered 503. */
    static final int STREAMS = 24;
    private static final Pattern RUN_PAGE = Pattern.compile("^/run/([^/]+)$");
    private static final Pattern RUN_API = Pattern.compile("^/api/run/([^/]+)(/metrics|/log|/stop)?$");
    private static final Map<String, String> STATIC = Map.of("lab.css", "text/css", "lab.js", "text/javascript",
            "run.js", "text/javascript", "plot.js", "text/javascript");

    /**
     * What the server reads and may do.
     *
     * @param stop stops a run by id and says what happened, or empty when the page may not stop runs
     */
    public record Setup(RunCatalog catalog, Servers servers, Optional<Function<String, String>> stop, Submitted submitted) {
    }

    /** A submitted run's status and log, read through its master node. */
    public interface Submitted {
        ObjectNode status(RunCatalog.Submitted run) throws IOException;

        void log(RunCatalog.Submitted run, Optional<Integer> rank, OutputStream events) throws IOException;
    }

    private final HttpServer http;
    private final ExecutorService pool;
    private final Guard guard;
    private final Setup setup;
    private final Semaphore streams = new Semaphore(STREAMS);

    private LabServer(HttpServer http, ExecutorService pool, Guard guard, Setup setup) {
        this.http = http;
        this.pool = pool;
        this.guard = guard;
        this.setup = setup;
    }

    /** Binds {@code address} (port 0: any free one) and starts answering. */
    static LabServer start(InetSocketAddress address, Set<String> hosts, String token, Setup setup) throws IOException {
        HttpServer http = HttpServer.create(address, 64);
        ExecutorService pool = Executors.newFixedThreadPool(STREAMS + 8, r -> {
            Thread t = new Thread(r, "serve-http");
            t.setDaemon(true);
            return t;
        });
        LabServer s = new LabServer(http, pool, new Guard(hosts, http.getAddress().getPort(), token), setup);
        http.createContext("/", s::handle);
        http.setExecutor(pool);
        http.start();
        return s;
    }

    public int port() {
        return http.getAddress().getPort();
    }

    private void handle(HttpExchange x) throws IOException {
        try (x) {
            Guard.HEADERS.forEach(h -> x.getResponseHeaders().add(h[0], h[1]));
            URI uri = x.getRequestURI();
            Optional<Guard.Refusal> refused = guard.check(x.getRequestMethod(), uri, x.getRequestHeaders());
            if (refused.isPresent()) {
                text(x, refused.get().status(), refused.get().why());
                return;
            }
            if (!x.getRequestMethod().equals("POST") && guard.tokenInQuery(uri)) {
                // the printed link: the token goes into a cookie and out of the address bar and history
                x.getResponseHeaders().add("Set-Cookie", guard.cookie());
                x.getResponseHeaders().add("Location", uri.getRawPath());
                x.sendResponseHeaders(303, -1);
                return;
            }
            route(x, uri.getRawPath());
        } catch (IOException | RuntimeException e) {
            // a reader that went away, or a request that broke: nothing to tell the page any more
        }
    }

    private void route(HttpExchange x, String path) throws IOException {
        boolean post = x.getRequestMethod().equals("POST");
        if (path.equals("/favicon.ico")) {
            x.sendResponseHeaders(204, -1);
            return;
        }
        if (path.equals("/") && !post) {
            resource(x, "index.html", "text/html");
            return;
        }
        if (path.startsWith("/static/") && !post && STATIC.containsKey(path.substring(8))) {
            String name = path.substring(8);
            if (name.equals("plot.js")) {
                send(x, 200, "text/javascript", PlotPage.script().getBytes(StandardCharsets.UTF_8));
            } else {
                resource(x, name, STATIC.get(name));
            }
            return;
        }
        Matcher page = RUN_PAGE.matcher(path);
        if (page.matches() && !post) {
            resource(x, "run.html", "text/html");
            return;
        }
        if (path.equals("/api/runs") && !post) {
            json(x, 200, runs());
            return;
        }
        if (path.equals("/api/servers") && !post) {
            json(x, 200, Json.object().set("servers", setup.servers().json(mine())));
            return;
        }
        Matcher api = RUN_API.matcher(path);
        if (api.matches()) {
            Optional<RunCatalog.Found> found = setup.catalog().find(api.group(1));
            if (found.isEmpty()) {
                text(x, 404, "no run " + api.group(1).replaceAll("[^0-9A-Za-z._-]", "?") + " among yours");
                return;
            }
            String what = api.group(2) == null ? "" : api.group(2);
            switch (what) {
                case "" -> {
                    if (!post) {
                        ObjectNode d = found.get() instanceof RunCatalog.Here h ? RunViews.detail(h.run())
                                : setup.submitted().status((RunCatalog.Submitted) found.get());
                        json(x, 200, d.put("stop", setup.stop().isPresent()));
                        return;
                    }
                }
                case "/metrics" -> {
                    if (!post) {
                        json(x, 200, found.get() instanceof RunCatalog.Here h ? RunViews.metrics(h.run())
                                : Json.object().put("none", "a submitted run's metrics are on its master node: runjob pull brings them here"));
                        return;
                    }
                }
                case "/log" -> {
                    if (!post) {
                        log(x, found.get());
                        return;
                    }
                }
                case "/stop" -> {
                    if (post) {
                        stop(x, api.group(1));
                        return;
                    }
                }
                default -> {
                }
            }
            text(x, 405, "not with " + x.getRequestMethod());
            return;
        }
        text(x, 404, "no such page");
    }

    private ObjectNode runs() throws IOException {
        RunCatalog.Local local = setup.catalog().local();
        List<RunRecords.Run> submitted = setup.catalog().submitted();
        Set<String> ids = new HashSet<>();
        submitted.forEach(r -> ids.add(r.runId()));
        List<RunRecords.Run> all = new ArrayList<>(local.runs());
        all.addAll(submitted);
        ObjectNode o = Json.object();
        o.set("runs", RunViews.list(all, ids));
        ArrayNode left = o.putArray("left_out");
        local.leftOut().forEach(w -> left.add(Printable.line(w)));
        o.put("stop", setup.stop().isPresent());
        return o;
    }

    /**
     * The user's runs here by id, for the servers' holders: read once per ask, and only when a
     * GPU is held (it was read again for each held GPU).
     */
    private Function<String, Optional<RunRecords.Run>> mine() {
        Map<String, RunRecords.Run> byId = new HashMap<>();
        boolean[] read = {false};
        return runId -> {
            if (!read[0]) {
                read[0] = true;
                try {
                    setup.catalog().local().runs().forEach(r -> byId.put(r.runId(), r));
                } catch (IOException e) {
                    // none to name
                }
            }
            return Optional.ofNullable(byId.get(runId));
        };
    }

    private void log(HttpExchange x, RunCatalog.Found found) throws IOException {
        Optional<Integer> rank = Optional.empty();
        String q = Optional.ofNullable(x.getRequestURI().getRawQuery()).orElse("");
        Matcher m = Pattern.compile("(?:^|&)rank=(\\d{1,6})(?:&|$)").matcher(q);
        if (m.find()) {
            rank = Optional.of(Integer.parseInt(m.group(1)));
        }
        if (!streams.tryAcquire()) {
            text(x, 503, "more than " + STREAMS + " live logs are open: close one");
            return;
        }
        try {
            x.getResponseHeaders().add("Content-Type", "text/event-stream; charset=utf-8");
            x.sendResponseHeaders(200, 0);
            OutputStream out = x.getResponseBody();
            if (found instanceof RunCatalog.Here h) {
                new LogStream(log(h.run()), rank, () -> setup.catalog().reread(h.run()).live()).send(out);
            } else {
                setup.submitted().log((RunCatalog.Submitted) found, rank, out);
            }
        } finally {
            streams.release();
        }
    }

    /** The run's log: a detached run's console (runjob's own lines among the workers'), else the combined log. */
    private static Path log(RunRecords.Run r) {
        return RunFolder.shownLog(r.folder());
    }

    private void stop(HttpExchange x, String runId) throws IOException {
        if (setup.stop().isEmpty()) {
            text(x, 403, "this page cannot stop runs: runjob serve --allow-stop lets it");
            return;
        }
        json(x, 200, Json.object().put("said", setup.stop().get().apply(runId)));
    }

    private static void resource(HttpExchange x, String name, String type) throws IOException {
        try (InputStream in = LabServer.class.getResourceAsStream(name)) {
            send(x, 200, type, in.readAllBytes());
        }
    }

    private static void json(HttpExchange x, int status, Object value) throws IOException {
        send(x, status, "application/json", Json.compact(value).getBytes(StandardCharsets.UTF_8));
    }

    private static void text(HttpExchange x, int status, String text) throws IOException {
        send(x, status, "text/plain", (text + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange x, int status, String type, byte[] body) throws IOException {
        x.getResponseHeaders().add("Content-Type", type + "; charset=utf-8");
        boolean head = x.getRequestMethod().equals("HEAD");
        x.sendResponseHeaders(status, head ? -1 : body.length == 0 ? -1 : body.length);
        if (!head) {
            x.getResponseBody().write(body);
        }
    }

    @Override
    public void close() {
        http.stop(0);
        pool.shutdownNow();
        try {
            pool.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        setup.servers().close();
    }
}
