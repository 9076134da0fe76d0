package org.runjob.run;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.runjob.protocol.HostedRun;

/**
 * What {@link RunJob} runs, as the commands that start a run ({@code runjob FILE}, {@code resume},
 * a detached, queued or submitted run's own runjob) give it.
 *
 * @param file         the job file as the user named it
 * @param sets         {@code --set KEY=VALUE} overrides, in order
 * @param args         arguments after {@code --}, appended to the entrypoint's
 * @param point        the sweep point this run is (0 for a job without a sweep)
 * @param verbose      {@code --verbose}: debug lines into the run folder's runjob.log
 * @param json         {@code -o json}: the summary alone on stdout, workers' lines on stderr
 * @param ranks        the ranks the console shows (all are recorded)
 * @param commandLine  the command as recorded in the run folder
 * @param givenRunId   the run id a detaching or submitting parent chose (and waits on), else a new one
 * @param waitForGpus  how long preflight may wait for a node's {@code gpus: {count: N}} to be free
 * @param hosted       for a submitted run's coordinator: the node hosts that reach its nodes
 * @param firstAttempt the first attempt's number: {@code runjob resume} goes on with a run that ended;
 *                     {@link RunJob#CONTINUE} (a queued run's coordinator): the attempt after the last
 *                     one in the run's folder, if any ({@link Requeued})
 * @param forceSetup   {@code --force-setup}: every node runs its environment's setup, due or not
 */
public record RunRequest(String file, List<String> sets, List<String> args, int point, boolean verbose, boolean json,
                         RankSelection ranks, List<String> commandLine, Optional<String> givenRunId,
                         Optional<Duration> waitForGpus, Optional<HostedRun> hosted, int firstAttempt, boolean forceSetup) {

    public RunRequest(String file, List<String> sets, List<String> args, int point, boolean verbose, boolean json, RankSelection ranks,
                      List<String> commandLine, Optional<String> givenRunId, Optional<Duration> waitForGpus, Optional<HostedRun> hosted,
                      int firstAttempt) {
        this(file, sets, args, point, verbose, json, ranks, commandLine, givenRunId, waitForGpus, hosted, firstAttempt, false);
    }

    public RunRequest {
        Objects.requireNonNull(file, "file");
        sets = List.copyOf(sets);
        args = List.copyOf(args);
        Objects.requireNonNull(ranks, "ranks");
        commandLine = List.copyOf(commandLine);
        Objects.requireNonNull(givenRunId, "givenRunId");
        Objects.requireNonNull(waitForGpus, "waitForGpus");
        Objects.requireNonNull(hosted, "hosted");
    }
}
