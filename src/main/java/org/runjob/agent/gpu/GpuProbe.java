package org.runjob.agent.gpu;

/** Finds a node's GPUs. Never throws: a node without a driver or a device reports why, in its inventory. */
public interface GpuProbe {
    GpuInventory probe();
}
