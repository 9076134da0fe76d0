package org.runjob.serve;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.runs.RunRecords;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

/**
 * {@code runjob serve}: what it reads and where it listens. The servers it watches are the nodes
 * of the job files given and of the user's runs of the last {@value #RECENT_DAYS} days (their
 * run folders keep the job file they ran), over SSH or on this machine; a job whose nodes a
 * scheduler gives (Slurm) is not watched: its GPUs are the scheduler's to show.
 */
public final class Lab {

    static final int RECENT_DAYS = 7;
    /** Agents are ended when the page has not asked for the servers for this long. */
    static final long IDLE_MS = 90_000;

    private Lab() {
    }

    /** What {@code runjob serve} was given. */
    public record Options(InetAddress bind, int port, Path logsDir, boolean index, boolean allowStop, int intervalMs, List<SpecLoader.Loaded> jobs) {
    }

    /** A page that serves: its URL with the token, and how to end it. */
    public record Served(String url, LabServer server, int servers) {
    }

    /**
     * Starts the page.
     *
     * @param stop stops a run by id (runjob stop), saying what it did
     * @throws IOException when the address cannot be bound (in use, not this machine's)
     */
    public static Served start(Io io, Options options, Function<String, String> stop) throws IOException {
        RunCatalog catalog = new RunCatalog(io, options.logsDir(), options.index());
        List<Servers.Target> targets = new ArrayList<>();
        for (SpecLoader.Loaded job : options.jobs()) {
            targets.addAll(targets(io, job.spec()));
        }
        for (RunRecords.Run r : Servers.recent(catalog.local().runs(), RECENT_DAYS)) {
            loadQuietly(io, r.folder().resolve("job.yaml")).ifPresent(spec -> targets.addAll(targets(quiet(io), spec)));
        }
        List<Servers.Target> distinct = Servers.distinct(targets.stream());
        Servers servers = new Servers(distinct, io.env(), options.intervalMs(), IDLE_MS);
        byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        String token = HexFormat.of().formatHex(secret);
        Set<String> hosts = Guard.hostsFor(options.bind(), machineAddresses(), machineNames());
        LabServer server;
        try {
            server = LabServer.start(new InetSocketAddress(options.bind(), options.port()), hosts, token,
                    new LabServer.Setup(catalog, servers, options.allowStop() ? Optional.of(stop) : Optional.empty(), new RemoteRuns(io)));
        } catch (IOException e) {
            servers.close();
            throw e;
        }
        String host = options.bind().isAnyLocalAddress() ? machineNames().stream().findFirst().orElse("127.0.0.1") : Guard.literal(options.bind());
        return new Served("http://" + host + ":" + server.port() + "/?token=" + token, server, distinct.size());
    }

    /** The job's nodes (and spares) as servers to watch; none for a job whose backend is not SSH's. */
    private static List<Servers.Target> targets(Io io, JobSpec spec) {
        Optional<Jobs.Resolved> resolved = Jobs.resolve(quiet(io), spec);
        if (resolved.isEmpty() || !resolved.get().backend().name().equals(JobSpec.BackendUse.DEFAULT)) {
            return List.of();
        }
        JobSpec whole = resolved.get().spec().withSparesAsNodes();
        return whole.nodes().stream().map(n -> new Servers.Target(Servers.key(n), n.name(), whole, resolved.get().backend(), n)).toList();
    }

    private static Optional<JobSpec> loadQuietly(Io io, Path file) {
        try {
            SpecLoader.Loaded loaded = Jobs.load(quiet(io), file.toString(), List.of());
            return loaded == null ? Optional.empty() : Optional.of(loaded.spec());
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Io quiet(Io io) {
        PrintStream nothing = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        return new Io(nothing, nothing, io.env(), io.clock(), io.random(), false, io.interrupts());
    }

    private static List<InetAddress> machineAddresses() {
        try {
            return NetworkInterface.networkInterfaces().flatMap(NetworkInterface::inetAddresses).toList();
        } catch (SocketException e) {
            return List.of();
        }
    }

    private static List<String> machineNames() {
        List<String> out = new ArrayList<>();
        try {
            InetAddress self = InetAddress.getLocalHost();
            Stream.of(self.getHostName(), self.getCanonicalHostName()).map(String::toLowerCase).distinct().forEach(out::add);
        } catch (IOException e) {
            // a machine without a name: its addresses
        }
        return out;
    }
}
