package org.runjob.slurm;

import java.util.List;
import java.util.Optional;

import org.runjob.node.BatchQueue;
import org.runjob.spec.BackendSettings;

/**
 * The job file's {@code slurm:} block: what the allocation asks for. Empty values are the
 * cluster's defaults.
 *
 * @param allocArgs              more arguments for {@code salloc} (e.g. {@code --mem=0}, {@code --constraint=a100})
 * @param srunArgs               more arguments for each node's {@code srun} step
 * @param stopBeforeLimitSeconds a run stops gracefully this long before its time limit
 * @param cpusPerWorker          CPUs the allocation holds per worker (Slurm's default: one)
 * @param requeueOnTimeLimit     a submitted run stopped by Slurm's time-limit warning requeues its job, to go on as its next attempt
 * @param maxTimeLimitRequeues   how many times in a row that requeue happens at most ({@code max_time_limit_requeues})
 * @param loginCheck             what submit does with the environments checked on the login node ({@code login_check})
 */
public record SlurmSettings(Optional<String> partition, Optional<String> account, Optional<String> time, Optional<String> qos,
                            List<String> allocArgs, List<String> srunArgs, int stopBeforeLimitSeconds, Optional<Integer> cpusPerWorker,
                            boolean requeueOnTimeLimit, int maxTimeLimitRequeues, BatchQueue.LoginCheck loginCheck)
        implements BackendSettings {

    public static final int DEFAULT_STOP_BEFORE_LIMIT_S = 90;
    /** Time-limit requeues of one job at most, by default: a run that needs more wants a longer time limit. */
    public static final int DEFAULT_MAX_TIME_LIMIT_REQUEUES = 5;

    public SlurmSettings {
        allocArgs = List.copyOf(allocArgs);
        srunArgs = List.copyOf(srunArgs);
    }

    public SlurmSettings(Optional<String> partition, Optional<String> account, Optional<String> time, Optional<String> qos,
                         List<String> allocArgs, List<String> srunArgs, int stopBeforeLimitSeconds, Optional<Integer> cpusPerWorker,
                         boolean requeueOnTimeLimit, int maxTimeLimitRequeues) {
        this(partition, account, time, qos, allocArgs, srunArgs, stopBeforeLimitSeconds, cpusPerWorker, requeueOnTimeLimit, maxTimeLimitRequeues,
                BatchQueue.LoginCheck.REFUSE);
    }

    public SlurmSettings(Optional<String> partition, Optional<String> account, Optional<String> time, Optional<String> qos,
                         List<String> allocArgs, List<String> srunArgs, int stopBeforeLimitSeconds, Optional<Integer> cpusPerWorker) {
        this(partition, account, time, qos, allocArgs, srunArgs, stopBeforeLimitSeconds, cpusPerWorker, false, DEFAULT_MAX_TIME_LIMIT_REQUEUES);
    }

    public SlurmSettings(Optional<String> partition, Optional<String> account, Optional<String> time, Optional<String> qos,
                         List<String> allocArgs, List<String> srunArgs) {
        this(partition, account, time, qos, allocArgs, srunArgs, DEFAULT_STOP_BEFORE_LIMIT_S, Optional.empty());
    }
}
