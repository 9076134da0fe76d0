package org.runjob.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import com.jcraft.jsch.Session;

import org.runjob.distribute.AgentBundle;
import org.runjob.distribute.LocalDistributor;
import org.runjob.distribute.SftpDistributor;
import org.runjob.distribute.Shipped;
import org.runjob.preflight.Preflight;
import org.runjob.preflight.PreflightReport;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.transport.Connections;

/** Preflight with the shipping a command needs: the agent jar only ({@code check}), or the job's files too (a run). */
final class Launch {

    private Launch() {
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
            Shipped done = session.isEmpty() ? local.ship(workdir, files, env)
                    : SftpDistributor.ship(session.get(), workdir, jar, files,
                            line -> progress.println("runjob: " + node.name() + ": shipping " + line));
            shipped.put(node.name(), done);
            return done.summary();
        };
        return new Preflight(spec, connections, env, jar).run(shipper);
    }

}
