package org.runjob.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import com.jcraft.jsch.Session;

import org.runjob.distribute.AgentBundle;
import org.runjob.distribute.LocalDistributor;
import org.runjob.distribute.SftpDistributor;
import org.runjob.preflight.Preflight;
import org.runjob.preflight.PreflightReport;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.transport.Connections;

/** Preflight with the shipping a command needs: the agent jar only ({@code check}), or the job's files too (a run). */
final class Launch {

    private Launch() {
    }

    /** Bytes and files sent and kept (unchanged) on one node. */
    record Shipped(long bytesSent, long bytesKept, int filesSent, int filesKept) {
    }

    /** @param shipped filled with what was shipped to each node */
    static PreflightReport preflight(JobSpec spec, Connections connections, Map<String, String> env, boolean withFiles,
                                     Map<String, Shipped> shipped, java.io.PrintStream progress) throws IOException {
        boolean remote = spec.nodes().stream().anyMatch(n -> !n.local());
        Path jar = remote ? AgentBundle.jar() : null;
        LocalDistributor local = new LocalDistributor();
        Preflight.Shipper shipper = (NodeSpec node, Optional<Session> session) -> {
            var files = withFiles ? spec.files() : java.util.List.<JobSpec.ShippedFile>of();
            String workdir = node.workdir().orElse(spec.workdir());
            Shipped done;
            if (session.isEmpty()) {
                LocalDistributor.Shipped s = local.ship(workdir, files, env);
                done = new Shipped(s.bytesSent(), s.bytesSkipped(), s.filesSent(), s.filesSkipped());
            } else {
                SftpDistributor.Shipped s = SftpDistributor.ship(session.get(), workdir, jar, files,
                        line -> progress.println("runjob: " + node.name() + ": shipping " + line));
                done = new Shipped(s.bytesSent(), s.bytesSkipped(), s.filesSent(), s.filesSkipped());
            }
            shipped.put(node.name(), done);
            return summary(done.filesSent(), done.bytesSent(), done.filesKept());
        };
        return new Preflight(spec, connections, env, jar).run(shipper);
    }

    private static String summary(int sent, long bytes, int skipped) {
        if (sent == 0 && skipped == 0) {
            return "ok";
        }
        String size = bytes >= 1 << 20 ? (bytes >> 20) + " MiB" : bytes >= 1024 ? (bytes >> 10) + " KiB" : bytes + " B";
        return sent + " sent (" + size + "), " + skipped + " kept";
    }

}
