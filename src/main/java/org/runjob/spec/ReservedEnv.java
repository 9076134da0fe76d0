package org.runjob.spec;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Environment variables runjob sets for every worker (the torchrun contract and its own), which a
 * job file therefore may not set, each with what the user should change instead.
 */
public final class ReservedEnv {

    /** Prefix of runjob's own variables (RUNJOB_JOB, RUNJOB_NODE, RUNJOB_RUN_ID, ...). */
    public static final String RUNJOB_PREFIX = "RUNJOB_";
    /** The one runjob variable a job may set: where its workers write their metrics, relative to the run's directory. */
    public static final String METRICS_FILE = "RUNJOB_METRICS_FILE";

    private static final String RANKS = "ranks follow the node list and each node's workers";
    private static final Map<String, String> NAMES = new LinkedHashMap<>();

    static {
        for (String n : new String[] {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "NODE_RANK",
                "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME"}) {
            NAMES.put(n, RANKS);
        }
        NAMES.put("MASTER_ADDR", "set rendezvous.master or rendezvous.addr");
        NAMES.put("MASTER_PORT", "set rendezvous.port");
        NAMES.put("CUDA_VISIBLE_DEVICES", "list the node's gpus");
        NAMES.put("CUDA_DEVICE_ORDER", "runjob uses PCI_BUS_ID so indices match nvidia-smi");
        NAMES.put("TORCHELASTIC_RUN_ID", "runjob sets it to the run id");
        NAMES.put("TORCHELASTIC_USE_AGENT_STORE", "workers make their own store: runjob has no agent store");
        NAMES.put("TORCHELASTIC_RESTART_COUNT", "set failure.max_restarts");
        NAMES.put("TORCHELASTIC_MAX_RESTARTS", "set failure.max_restarts");
    }

    private ReservedEnv() {
    }

    /** Why {@code name} cannot be set in a job file, or empty when it can. */
    public static Optional<String> why(String name) {
        if (NAMES.containsKey(name)) {
            return Optional.of(NAMES.get(name));
        }
        if (name.startsWith(RUNJOB_PREFIX) && !name.equals(METRICS_FILE)) {
            return Optional.of("RUNJOB_* variables are runjob's own");
        }
        return Optional.empty();
    }
}
