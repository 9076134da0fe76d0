package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.run.ExitCode;
import org.runjob.run.RankSelection;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The CLI through its entry point: captured output and exit codes. */
class CliTest {

    @TempDir
    Path dir;

    @Test
    void dryRunOfASlurmJobPrintsTheExactSlurmCommands() throws IOException {
        Cli r = Cli.run("--dry-run", "jobs/slurm.yaml");
        assertThat(r.err()).isEmpty();
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo(Files.readString(Path.of("src/test/resources/golden/slurm.plan.txt")));
        assertThat(r.out()).contains("  salloc --job-name=runjob-slurm-ddp --partition=gpu --time=1:00:00 --nodelist=gpu01"
                + " --nodes=1 --ntasks-per-node=2 --gpus-per-node=2 : --partition=gpu --time=1:00:00 --nodelist=gpu02 --nodes=1"
                + " --ntasks-per-node=1 --gpus-per-node=1 sh -c 'read -r code || code=1; exit \"$code\"'\n")
                .contains("  srun --jobid=JOBID --job-name=runjob-agent --het-group=1 --nodelist=gpu02 --nodes=1 --ntasks=1 --whole --unbuffered --quiet"
                        + " --kill-on-bad-exit=1 --cpu-bind=none <runjob's agent bootstrap>\n")
                .contains("  CUDA_VISIBLE_DEVICES  <the GPUs the scheduler gives the node>\n")
                .contains("node gpu01  node rank 0  slurm node gpu01\n");
    }

    @Test
    void dryRunOfTheSeedJobPrintsThePlanExactly() throws IOException {
        Cli r = Cli.run("--dry-run", "jobs/two-node.yaml");
        assertThat(r.err()).isEmpty();
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo(Files.readString(Path.of("src/test/resources/golden/two-node.plan.txt")));
        assertThat(r.out()).contains("  rank 0   local 0     RANK=0 LOCAL_RANK=0 ROLE_RANK=0 python3 train.py\n")
                .contains("  CUDA_VISIBLE_DEVICES  1,2\n").contains("  CUDA_VISIBLE_DEVICES  2,4\n")
                .contains("world size 4").contains("no machine was contacted");
    }

    @Test
    void planSubcommandPrintsTheSamePlanAsDryRun() {
        assertThat(Cli.run("plan", "jobs/two-node.yaml").out()).isEqualTo(Cli.run("--dry-run", "jobs/two-node.yaml").out());
    }

    @Test
    void jsonPlanHasTheDocumentedShape() {
        Cli r = Cli.run("--dry-run", "--output", "json", "jobs/hetero.yaml");
        assertThat(r.code()).isZero();
        JsonNode plan = JsonMapper.builder().build().readTree(r.out());
        assertThat(plan.get("job").stringValue()).isEqualTo("hetero");
        assertThat(plan.get("run_id").stringValue()).isEqualTo(Cli.RUN_ID);
        assertThat(plan.get("world_size").intValue()).isEqualTo(6);
        assertThat(plan.get("master_addr").stringValue()).isEqualTo("gpu2.example.org");
        assertThat(plan.get("master_port").intValue()).isEqualTo(29500);
        JsonNode nodes = plan.get("nodes");
        assertThat(nodes.size()).isEqualTo(3);
        assertThat(nodes.get(1).get("name").stringValue()).isEqualTo("gpu3");
        assertThat(nodes.get(1).get("host").stringValue()).isEqualTo("gpu3.example.org");
        assertThat(nodes.get(1).get("port").isNull()).isTrue();
        assertThat(nodes.get(1).get("node_rank").intValue()).isEqualTo(1);
        assertThat(nodes.get(1).get("ranks").toString()).isEqualTo("[2,3,4]");
        assertThat(nodes.get(2).get("ranks").toString()).isEqualTo("[5]");
        JsonNode workers = plan.get("workers");
        assertThat(workers.size()).isEqualTo(6);
        JsonNode w4 = workers.get(4);
        assertThat(w4.get("rank").intValue()).isEqualTo(4);
        assertThat(w4.get("local_rank").intValue()).isEqualTo(2);
        assertThat(w4.get("node").stringValue()).isEqualTo("gpu3");
        assertThat(w4.get("node_rank").intValue()).isEqualTo(1);
        assertThat(w4.get("argv").toString()).isEqualTo("[\"python3\",\"train.py\"]");
        assertThat(w4.get("env").get("RANK").isString()).isTrue();
        assertThat(w4.get("env").get("RANK").stringValue()).isEqualTo("4");
        assertThat(w4.get("env").get("CUDA_VISIBLE_DEVICES").stringValue()).isEqualTo("0,1,2");
        JsonNode cpu = workers.get(5).get("env");
        assertThat(cpu.get("CUDA_VISIBLE_DEVICES").stringValue()).isEmpty();
        assertThat(cpu.get("GLOO_SOCKET_IFNAME").stringValue()).isEqualTo("eth0");
    }

    @Test
    void everyExampleJobValidates() throws IOException {
        List<String> files;
        try (Stream<Path> s = Files.walk(Path.of("jobs"))) {
            files = s.filter(p -> p.toString().endsWith(".yaml")).map(Path::toString).sorted().toList();
        }
        assertThat(files).contains("jobs/two-node.yaml", "jobs/hetero.yaml");
        Cli r = Cli.run(Stream.concat(Stream.of("validate"), files.stream()).toArray(String[]::new));
        assertThat(r.err()).isEmpty();
        assertThat(r.code()).isZero();
        assertThat(r.out().lines()).containsExactlyElementsOf(files.stream().map(f -> f + ": ok").toList());
    }

    @Test
    void validateOfADeviceExitsTwoWithoutReadingIt() {
        Cli r = Cli.run("validate", "/dev/zero");
        assertThat(r.code()).isEqualTo(ExitCode.INVALID);
        assertThat(r.err()).isEqualTo("/dev/zero:1:1: is not a regular file (a device, FIFO or socket): a job file must be a file\n"
                + "/dev/zero: 1 problem\n");
    }

    @Test
    void brokenFileExitsTwoWithLineAndColumnAndNoStackTrace() throws IOException {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "name: bad\nnodes:\n  - name: a\n    hots: h\n    gpus: [0]\nentrypoint: {command: [python3]}\n");
        Cli r = Cli.run("validate", "jobs/two-node.yaml", bad.toString());
        assertThat(r.code()).isEqualTo(ExitCode.INVALID);
        assertThat(r.out()).isEqualTo("jobs/two-node.yaml: ok\n");
        assertThat(r.err()).isEqualTo(bad + ":3:5: /nodes/0: node 'a' needs a host (an address or ssh-config alias), or local: true\n"
                + bad + ":4:5: /nodes/0/hots: unknown key 'hots'; did you mean 'host'?\n"
                + bad + ": 2 problems\n");
        Cli dry = Cli.run("--dry-run", bad.toString());
        assertThat(dry.code()).isEqualTo(ExitCode.INVALID);
        assertThat(dry.out()).isEmpty();
        assertThat(dry.err()).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void validateJsonListsProblemsWithPositions() throws IOException {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "name: bad\nnodes: [{name: a, host: h, gpus: [0]}]\nentrypoint: {command: [python3]}\nfailure: {max_restarts: -1}\n");
        Cli r = Cli.run("validate", "--output", "json", bad.toString());
        assertThat(r.code()).isEqualTo(2);
        JsonNode result = JsonMapper.builder().build().readTree(r.out());
        JsonNode problem = result.get(0).get("problems").get(0);
        assertThat(result.get(0).get("valid").booleanValue()).isFalse();
        assertThat(problem.get("line").intValue()).isEqualTo(4);
        assertThat(problem.get("column").intValue()).isEqualTo(25);
        assertThat(problem.get("pointer").stringValue()).isEqualTo("/failure/max_restarts");
        assertThat(problem.get("message").stringValue()).isEqualTo("must have a minimum value of 0 (found -1)");
    }

    @Test
    void setAndEnvInterpolationReachThePlan() {
        Cli r = Cli.run(Map.of("LR", "0.02"), "--dry-run", "--set", "nodes[a30].gpus=[0]", "--set", "rendezvous.port=29999",
                "jobs/lab-experiment.yaml");
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).contains("world size 3").contains("rendezvous 202.201.252.102:29999 on node v100")
                .contains("  rank 2   local 0     RANK=2 LOCAL_RANK=0 ROLE_RANK=2 python3 train.py --lr 0.02\n");
    }

    @Test
    void aBadOverrideIsNamedInTheMessage() {
        Cli r = Cli.run("--dry-run", "--set", "nodes[0].port=99999", "jobs/two-node.yaml");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("--set nodes[0].port=99999:1:21: /nodes/0/port: a port is between 1 and 65535 (found 99999)\n");
    }

    @Test
    void gpusAllWithoutWorkersIsPlannedAtLaunchAndTheDryRunSaysSo() throws IOException {
        Path f = dir.resolve("all.yaml");
        Files.writeString(f, "name: all\nnodes: [{name: box, host: h, gpus: all}]\nentrypoint: {command: [python3]}\n");
        Cli r = Cli.run("--dry-run", f.toString());
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo("dry run of " + f + ": node 'box' uses gpus: all without workers: its worker count is known"
                + " only when its GPUs are found at launch; set workers: N to plan it ahead; `runjob gpus " + f
                + "` shows the GPUs each node has.\ndry run: no machine was contacted and nothing was started.\n");
    }

    @Test
    void missingFileIsAProblemNotACrash() {
        Cli r = Cli.run("--dry-run", "jobs/nope.yaml");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("jobs/nope.yaml:1:1: no such file\njobs/nope.yaml: 1 problem\n");
    }

    @Test
    void argumentsAfterDoubleDashReachTheEntrypointAndRunIsASubcommand() {
        Cli r = Cli.run("--dry-run", "jobs/local.yaml", "--", "--lr", "0.01", "it's");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("RANK=0 LOCAL_RANK=0 ROLE_RANK=0 python3 checkin.py --lr 0.01 'it'\\''s'\n");
        Cli run = Cli.run("run", "--dry-run", "jobs/local.yaml", "--", "--lr", "0.01", "it's");
        assertThat(run.code()).isZero();
        assertThat(run.out()).isEqualTo(r.out());
        Cli bare = Cli.run("--dry-run", "jobs/local.yaml", "--lr", "0.01");
        assertThat(bare.code()).isEqualTo(ExitCode.INVALID);
        assertThat(bare.err()).isEqualTo("runjob: unknown option --lr; arguments for the entrypoint go after --:"
                + " runjob --dry-run jobs/local.yaml -- --lr 0.01\n");
        Cli submit = Cli.run("submit", "jobs/local.yaml", "--lr", "it's", "--", "x");
        assertThat(submit.code()).isEqualTo(ExitCode.INVALID);
        assertThat(submit.err()).isEqualTo("runjob: unknown option --lr; arguments for the entrypoint go after --:"
                + " runjob submit jobs/local.yaml -- --lr 'it'\\''s' x\n");
        Cli typo = Cli.run("jobs/local.yaml", "--dryrun");
        assertThat(typo.err()).isEqualTo("runjob: unknown option --dryrun (did you mean --dry-run?); arguments for the entrypoint"
                + " go after --: runjob jobs/local.yaml -- --dryrun\n");
    }

    @Test
    void helpOfACommandAndTheShortOutputOption() {
        Cli help = Cli.run("help", "validate");
        assertThat(help.code()).isZero();
        assertThat(help.out()).startsWith("Usage: runjob validate ");
        assertThat(Cli.run("help", "run").out()).startsWith("Usage: runjob run [-hV] ");
        assertThat(Cli.run("help", "submit").out()).startsWith("Usage: runjob submit ").contains("\n  3     a node host could not start")
                .contains("\n  130   with --wait: Ctrl-C stopped following");
        Cli json = Cli.run("validate", "-o", "json", "jobs/local.yaml");
        assertThat(json.code()).isZero();
        assertThat(json.out()).startsWith("[ {\n  \"file\" : \"jobs/local.yaml\",\n  \"valid\" : true,");
    }

    @Test
    void rankSelectionsTakeRangesAndRefuseWhatIsNoRank() {
        assertThat(RankSelection.parse(List.of("0-2", "7")).ranks()).containsExactlyInAnyOrder(0, 1, 2, 7);
        assertThat(RankSelection.parse(List.of("0-3", "7")).outside(4)).contains(
                "--ranks: rank 7 is not in this job (world size 4: ranks 0-3)");
        assertThat(RankSelection.parse(List.of("1-2")).outside(4)).isEmpty();
        Cli bad = Cli.run("--ranks", "0,x", "jobs/local.yaml");
        assertThat(bad.code()).isEqualTo(ExitCode.INVALID);
        assertThat(bad.err()).isEqualTo("runjob: --ranks: 'x' is no rank or range (e.g. --ranks 0-3,7)\n");
        Cli backwards = Cli.run("--ranks", "3-1", "jobs/local.yaml");
        assertThat(backwards.err()).isEqualTo("runjob: --ranks: '3-1' is no range (FROM-TO, FROM <= TO)\n");
        // a rank the job cannot have is refused before any node is reached (192.0.2.1 answers nobody)
        Cli far = Cli.run("--ranks", "9", "--set", "nodes=[{name: far, host: 192.0.2.1, workers: 2}]", "jobs/local.yaml");
        assertThat(far.code()).isEqualTo(ExitCode.INVALID);
        assertThat(far.err()).isEqualTo("runjob: --ranks: rank 9 is not in this job (world size 2: ranks 0-1)\n");
        // the same one line from every command that takes --ranks, before anything is looked up
        for (String command : List.of("logs", "stacks")) {
            Cli other = Cli.run(command, "nosuchrun", "--ranks", "1,-2");
            assertThat(other.code()).as(command).isEqualTo(ExitCode.INVALID);
            assertThat(other.err()).as(command).isEqualTo("runjob: --ranks: '-2' is no rank or range (e.g. --ranks 0-3,7)\n");
        }
    }

    @Test
    void aDurationIsReadByItsConverterAndABadOneIsOneLine() {
        for (String command : List.of("run", "resume")) {
            Cli bad = Cli.run(command, "--wait-for-gpus", "5x", "jobs/local.yaml");
            assertThat(bad.code()).as(command).isEqualTo(ExitCode.INVALID);
            assertThat(bad.err()).as(command).isEqualTo("runjob: --wait-for-gpus takes a duration such as 90s, 10m or 2h, not '5x'\n");
        }
        // a good duration passes the parser: the dry run goes on
        Cli good = Cli.run("--wait-for-gpus", "10m", "--dry-run", "jobs/local.yaml");
        assertThat(good.code()).as(good.err()).isZero();
    }

    @Test
    void userMistakesAreNamedNotInternalErrors() {
        Cli logs = Cli.run(System.getenv(), "--set", "logs.dir=/proc/nope", "jobs/local.yaml");
        assertThat(logs.code()).isEqualTo(ExitCode.INVALID);
        assertThat(logs.err()).startsWith("runjob: cannot create the run folder /proc/nope/local/" + Cli.RUN_ID + " (logs.dir /proc/nope): ")
                .endsWith("cannot create /proc/nope there\n").doesNotContain("internal error").doesNotContain("Exception");
        // no machine is contacted: the key is looked for first, once for all nodes
        Cli key = Cli.run("check", "--set", "ssh.identity=/nonexistent/id_ed25519", "jobs/two-node.yaml");
        assertThat(key.code()).isEqualTo(ExitCode.PREFLIGHT_FAILED);
        assertThat(key.err()).isEqualTo("runjob: ssh.identity /nonexistent/id_ed25519 does not exist"
                + " (/nonexistent/id_ed25519): name a private key file, or leave ssh.identity out to use ssh-agent and ~/.ssh\n");
    }

    @Test
    void aCompletionScriptIsGeneratedAndBashLoadsIt() throws Exception {
        Cli r = Cli.run("completion");
        assertThat(r.code()).isZero();
        Path script = Files.writeString(dir.resolve("runjob-completion.bash"), r.out());
        Process bash = new ProcessBuilder("bash", "-c", "source \"$1\" && complete -p runjob", "bash", script.toString())
                .redirectErrorStream(true).start();
        String out = new String(bash.getInputStream().readAllBytes());
        assertThat(bash.waitFor()).as(out).isZero();
        assertThat(out).contains("complete").contains("runjob");
        assertThat(r.out()).contains("validate").contains("status").contains("logs").contains("--detach");
    }

    @Test
    void helpListsCommandsAndExitCodes() {
        Cli r = Cli.run("--help");
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("--dry-run").contains("validate").contains("plan").contains("--set")
                .contains("Exit codes:").contains("  130   interrupted; all workers were stopped first\n")
                .contains("  3     preflight failed; nothing was started\n");
    }

    @Test
    void versionAndUsageErrors() throws Exception {
        // the build's commit is this checkout's, and when it was built
        Process git = new ProcessBuilder("git", "rev-parse", "HEAD").start();
        String head = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(git.waitFor()).isZero();
        assertThat(Cli.run("--version").out()).matches("runjob \\S+ \\(commit [0-9a-f]{7,}(, with changes)?; built "
                + "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\)\nJava \\S+\n");
        String commit = Cli.run("--version").out().replaceFirst("(?s)^runjob \\S+ \\(commit ([0-9a-f]+).*", "$1");
        assertThat(head).startsWith(commit);
        Cli unknown = Cli.run("--no-such-flag", "jobs/two-node.yaml");
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("Unknown option: '--no-such-flag'");
        Cli badOutput = Cli.run("--dry-run", "--output", "yaml", "jobs/two-node.yaml");
        assertThat(badOutput.code()).isEqualTo(2);
        assertThat(Cli.run().code()).isEqualTo(2);
    }

}
