package org.runjob.preflight;

/** The preflight checks, in the order of the report's columns. */
public enum Check {
    LOGIN("ssh"), JAVA("java"), WORKDIR("workdir"), DISK("disk"), PROGRAM("program"), ENVIRONMENT("env"), GPUS("gpus"),
    RENDEZVOUS("rendezvous");

    private final String label;

    Check(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
