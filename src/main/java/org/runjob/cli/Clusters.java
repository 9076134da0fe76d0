package org.runjob.cli;

import java.util.Optional;

import org.runjob.node.Cluster;
import org.runjob.slurm.SlurmCluster;
import org.runjob.spec.JobSpec;
import org.runjob.transport.SshCluster;

/** The job's backend: its nodes reached over SSH (and local ones as child processes), or as one Slurm allocation. */
final class Clusters {

    private Clusters() {
    }

    /** @param runId the run's id for a run (names the Slurm allocation); empty for check and gpus */
    static Cluster of(JobSpec spec, Io io, Optional<String> runId) {
        if (spec.slurm().isPresent()) {
            return new SlurmCluster(spec, io.env(), runId, line -> io.err().println("runjob: " + line), () -> io.interrupts().count() > 0);
        }
        return new SshCluster(spec.ssh(), io.env());
    }
}
