package org.runjob.cli;


import org.runjob.node.Cluster;
import org.runjob.slurm.SlurmCluster;
import org.runjob.spec.JobSpec;
import org.runjob.transport.SshCluster;

/** The job's backend: its nodes reached over SSH (and local ones as child processes), or as one Slurm allocation. */
final class Clusters {

    private Clusters() {
    }

    /** Slurm's waiting-in-the-queue lines go to stderr; Ctrl-C withdraws a waiting allocation. */
    static Cluster of(JobSpec spec, Io io) {
        if (spec.slurm().isPresent()) {
            return new SlurmCluster(spec, io.env(), line -> io.err().println("runjob: " + line), () -> io.interrupts().count() > 0);
        }
        return new SshCluster(spec.ssh(), io.env());
    }
}
