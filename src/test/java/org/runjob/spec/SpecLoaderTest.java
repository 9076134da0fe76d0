package org.runjob.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.backends.Backends;

/** Loading valid files: defaults, composition, interpolation, overrides and YAML features, at value level. */
class SpecLoaderTest {

    private static final SchemaCheck SCHEMA = new SchemaCheck(Backends.specs());

    @TempDir
    Path dir;

    private Path write(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
        return p;
    }

    private JobSpec load(Path file, Map<String, String> env, String... sets) throws InvalidSpecException {
        return new SpecLoader(env, Backends.specs(), SCHEMA).load(file, file.getFileName().toString(), List.of(sets)).spec();
    }

    private List<String> problems(Path file, Map<String, String> env, String... sets) {
        InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class, () -> load(file, env, sets));
        assertThat(e).isNotNull();
        return e.problems().stream().map(Problem::toString).toList();
    }

    private static final String MINIMAL = "name: min\nnodes: [{name: a, host: h, gpus: [0, 1]}]\nentrypoint: {command: [python3, t.py]}\n";

    @Test
    void defaultsAreFilledIn() throws Exception {
        JobSpec spec = load(write("min.yaml", MINIMAL), Map.of());
        assertThat(spec.rendezvous().master()).isEqualTo("a");
        assertThat(spec.rendezvous().addr()).isEmpty();
        assertThat(spec.rendezvous().port()).isEqualTo(new JobSpec.MasterPort.Auto());
        assertThat(spec.workdir()).isEqualTo("~/.runjob/min");
        assertThat(spec.runsShareWorkdir()).isFalse();
        assertThat(spec.outputsMaxBytes()).isEqualTo(10L << 30);
        assertThat(load(write("cap.yaml", MINIMAL + "outputs_max_gib: 0.5\n"), Map.of()).outputsMaxBytes()).isEqualTo(512L << 20);
        assertThat(problems(write("nocap.yaml", MINIMAL + "outputs_max_gib: 0\n"), Map.of())).anyMatch(p -> p.contains("/outputs_max_gib"));
        assertThat(spec.runDirOf(spec.nodes().get(0), Optional.of("R1"))).isEqualTo("~/.runjob/min/runs/R1");
        assertThat(spec.logsDir()).isEqualTo("runs");
        assertThat(spec.ssh().hostKeyPolicy()).isEqualTo(JobSpec.HostKeyPolicy.STRICT);
        assertThat(spec.ssh().knownHosts()).isEqualTo("~/.ssh/known_hosts");
        assertThat(spec.ssh().connectTimeoutSeconds()).isEqualTo(10);
        assertThat(spec.failure()).isEqualTo(new JobSpec.FailureSpec(10, 0));
        assertThat(spec.failure().heartbeatTimeoutMillis()).isEqualTo(15_000);
        NodeSpec a = spec.nodes().get(0);
        assertThat(((NodeAddress.Ssh) a.address()).port()).isEqualTo(OptionalInt.empty());
        assertThat(a.workers()).isEqualTo(OptionalInt.empty());
        assertThat(a.gpus()).isEqualTo(new NodeSpec.GpuRequest.Listed(List.of(0, 1)));
        assertThat(spec.entrypoint()).isEqualTo(new EntrypointSpec.Command(List.of("python3", "t.py"), false));
    }

    @Test
    void aSweepIsAGridAndEachPointFillsItsReferences() throws Exception {
        Path f = write("sw.yaml", "name: sw\nnodes: [{name: a, host: h, workers: 1}]\nsweep: {lr: [0.1, 1.0e-4], seed: [1, 2, 3]}\n"
                + "entrypoint: {command: [python3, t.py, --lr, '${sweep.lr}', --seed, \"${sweep.seed}\"]}\n"
                + "env:\n  SEED: ${sweep.seed}\n  TAG: lr-${sweep.lr}\n");
        SpecLoader loader = new SpecLoader(Map.of(), Backends.specs());
        SpecLoader.Loaded first = loader.load(f, "sw.yaml", List.of());
        assertThat(first.sweep().orElseThrow().size()).isEqualTo(6);
        assertThat(first.sweep().get().values()).containsExactly(Map.entry("lr", List.of("0.1", "0.0001")), Map.entry("seed", List.of("1", "2", "3")));
        // grid order: the first name varies slowest
        SpecLoader.Loaded fourth = loader.load(f, "sw.yaml", List.of(), 4);
        assertThat(fourth.point()).containsExactly(Map.entry("lr", "0.0001"), Map.entry("seed", "2"));
        assertThat(((EntrypointSpec.Command) fourth.spec().entrypoint()).argv()).containsExactly("python3", "t.py", "--lr", "0.0001", "--seed", "2");
        assertThat(fourth.spec().env()).containsExactly(Map.entry("SEED", "2"), Map.entry("TAG", "lr-0.0001"));
        assertThat(fourth.document().json().get("env").get("SEED").isInt()).as("an unquoted whole reference stays a number").isTrue();
        // arguments after -- and --set values take the point's values too
        SpecLoader.Loaded set = loader.load(f, "sw.yaml", List.of("env.X=${sweep.lr}", "sweep.seed=[7]"), 1).withEntrypointArgs(List.of("--tag=${sweep.seed}"));
        assertThat(set.spec().env()).containsEntry("X", "0.0001");
        assertThat(((EntrypointSpec.Command) set.spec().entrypoint()).argv()).endsWith("--seed", "7", "--tag=7");
        assertThatThrownBy(() -> loader.load(f, "sw.yaml", List.of(), 6)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSweepReferenceWithoutItsValueIsAProblem() throws Exception {
        Path f = write("bad.yaml", "name: b\nnodes: [{name: a, host: h, workers: 1}]\nsweep: {lr: [0.1]}\n"
                + "entrypoint: {command: [python3, t.py, '${sweep.seed}']}\n");
        assertThat(problems(f, Map.of())).containsExactly("bad.yaml:4:39: /entrypoint/command/2: ${sweep.seed}: the sweep names only lr");
        Path none = write("none.yaml", "name: b\nnodes: [{name: a, host: h, workers: 1}]\nentrypoint: {command: [python3, '${sweep.lr}']}\n");
        assertThat(problems(none, Map.of())).containsExactly("none.yaml:3:33: /entrypoint/command/1: ${sweep.lr}: the job has no sweep: block");
        Path empty = write("empty.yaml", "name: b\nnodes: [{name: a, host: h, workers: 1}]\nsweep: {lr: []}\nentrypoint: {command: [t]}\n");
        assertThat(problems(empty, Map.of())).anyMatch(p -> p.contains("/sweep/lr: a sweep value lists at least one value"));
    }

    @Test
    void argvAndEnvNumbersBecomeTheirText() throws Exception {
        JobSpec spec = load(write("n.yaml", "name: n\nnodes: [{name: a, host: h, workers: 1, env: {B: true}}]\n"
                + "entrypoint: {command: [python3, t.py, --epochs, 10, --lr, 0.5]}\nenv: {OMP_NUM_THREADS: 4}\n"), Map.of());
        assertThat(((EntrypointSpec.Command) spec.entrypoint()).argv())
                .containsExactly("python3", "t.py", "--epochs", "10", "--lr", "0.5");
        assertThat(spec.env()).containsExactly(Map.entry("OMP_NUM_THREADS", "4"));
        assertThat(spec.nodes().get(0).env()).containsExactly(Map.entry("B", "true"));
    }

    @Test
    void jarEntrypointIsShippedAndRunFromTheWorkdir() throws Exception {
        write("build/train.jar", "jar");
        JobSpec spec = load(write("j.yaml", "name: j\nnodes: [{name: a, host: h, gpus: [0]}]\n"
                + "entrypoint: {jar: build/train.jar, main: org.example.Train, args: [--x], jvm_args: [-Xmx1g]}\n"), Map.of());
        assertThat(spec.entrypoint()).isEqualTo(new EntrypointSpec.Jar("train.jar", "org.example.Train",
                List.of("--x"), List.of("-Xmx1g"), false));
        assertThat(spec.files()).containsExactly(new JobSpec.ShippedFile(dir.resolve("build/train.jar"), "train.jar"));
    }

    @Test
    void extendsMergesMapsDeeplyAndReplacesLists() throws Exception {
        write("base/cluster.yaml", "name: base\nnodes:\n  - {name: a, host: h1, gpus: [0]}\n  - {name: b, host: h2, gpus: [1]}\n"
                + "rendezvous: {master: b, port: 29522}\nssh: {host_key_policy: accept-new, connect_timeout_s: 5}\n"
                + "env: {A: base, B: base}\nentrypoint: {command: [python3, base.py]}\nfiles: [f1.txt]\n");
        write("base/f1.txt", "x");
        write("f2.txt", "y");
        Path exp = write("exp.yaml", "extends: base/cluster.yaml\nname: exp\nrendezvous: {port: 29600}\n"
                + "env: {B: exp, C: exp}\nentrypoint: {command: [python3, exp.py]}\nfiles: [f2.txt]\nssh: {connect_timeout_s: 7}\n");
        JobSpec spec = load(exp, Map.of());
        assertThat(spec.name()).isEqualTo("exp");
        assertThat(spec.nodes()).extracting(NodeSpec::name).containsExactly("a", "b");
        assertThat(spec.rendezvous().master()).isEqualTo("b");
        assertThat(spec.rendezvous().port()).isEqualTo(new JobSpec.MasterPort.Fixed(29600));
        assertThat(spec.env()).containsExactly(Map.entry("A", "base"), Map.entry("B", "exp"), Map.entry("C", "exp"));
        assertThat(((EntrypointSpec.Command) spec.entrypoint()).argv()).containsExactly("python3", "exp.py");
        assertThat(spec.files()).containsExactly(new JobSpec.ShippedFile(dir.resolve("f2.txt"), "f2.txt"));
        assertThat(spec.ssh().hostKeyPolicy()).isEqualTo(JobSpec.HostKeyPolicy.ACCEPT_NEW);
        assertThat(spec.ssh().connectTimeoutSeconds()).isEqualTo(7);
    }

    @Test
    void filesInABaseResolveAgainstTheBaseFile() throws Exception {
        write("lab/cluster.yaml", "nodes: [{name: a, host: h, gpus: [0]}]\nfiles: [train.py]\n");
        write("lab/train.py", "print()");
        JobSpec spec = load(write("exp.yaml", "extends: lab/cluster.yaml\nname: e\nentrypoint: {command: [python3, train.py]}\n"), Map.of());
        assertThat(spec.files()).containsExactly(new JobSpec.ShippedFile(dir.resolve("lab/train.py"), "train.py"));
    }

    @Test
    void extendsChainsThreeDeep() throws Exception {
        write("a.yaml", "name: a\nnodes: [{name: n, host: h, gpus: [0]}]\nentrypoint: {command: [x]}\nenv: {L: a}\n");
        write("b.yaml", "extends: a.yaml\nenv: {L: b, M: b}\n");
        JobSpec spec = load(write("c.yaml", "extends: b.yaml\nname: c\nenv: {N: c}\n"), Map.of());
        assertThat(spec.name()).isEqualTo("c");
        assertThat(spec.env()).containsExactly(Map.entry("L", "b"), Map.entry("M", "b"), Map.entry("N", "c"));
    }

    @Test
    void interpolationTypesUnquotedValuesAndKeepsQuotedOnesAsText() throws Exception {
        Path f = write("i.yaml", "name: i\nnodes:\n  - name: a\n    host: ${env:HOST}\n    port: ${env:SSH_PORT:-22}\n"
                + "    gpus: [0]\nrendezvous:\n  port: ${env:PORT}\nentrypoint: {command: [python3, \"--lr=${env:LR:-0.1}\", \"$${env:LITERAL}\"]}\n"
                + "env: {PORT_TEXT: \"${env:PORT}\", MIXED: \"x-${env:HOST}-y\"}\nworkdir: ${env:WORK:-/scratch/${env:USER_NAME:-me}}\n");
        JobSpec spec = load(f, Map.of("HOST", "10.1.2.3", "PORT", "29555", "USER_NAME", "ann"));
        assertThat(((NodeAddress.Ssh) spec.nodes().get(0).address()).host()).isEqualTo(("10.1.2.3"));
        assertThat(((NodeAddress.Ssh) spec.nodes().get(0).address()).port()).isEqualTo(OptionalInt.of(22));
        assertThat(spec.rendezvous().port()).isEqualTo(new JobSpec.MasterPort.Fixed(29555));
        assertThat(((EntrypointSpec.Command) spec.entrypoint()).argv()).containsExactly("python3", "--lr=0.1", "${env:LITERAL}");
        assertThat(spec.env()).containsExactly(Map.entry("PORT_TEXT", "29555"), Map.entry("MIXED", "x-10.1.2.3-y"));
        // a default is not itself interpolated: the text up to the first } is the default
        assertThat(spec.workdir()).isEqualTo("/scratch/${env:USER_NAME:-me}");
    }

    @Test
    void unquotedReferencesKeepTheExactTextUnlessItIsAPlainNumberOrBoolean() throws Exception {
        Path f = write("e.yaml", "name: e\nnodes: [{name: a, host: h, gpus: [0]}]\nentrypoint: {command: [python3]}\n"
                + "rendezvous:\n  port: ${env:PORT}\n"
                + "env:\n  PW: ${env:PW}\n  ZEROS: ${env:ZEROS}\n  ANCHOR: ${env:ANCHOR}\n  QUOTES: ${env:QUOTES}\n"
                + "  AFFIRM: ${env:YES}\n  FLAG: ${env:FLAG}\n  NUM: ${env:NUM}\n  RATE: ${env:RATE}\n");
        JobSpec spec = load(f, Map.of("PORT", "29555", "PW", "p@ss&w0rd #1", "ZEROS", "007", "ANCHOR", "&a x",
                "QUOTES", "'it''s' \"x\"", "YES", "yes", "FLAG", "true", "NUM", "-12", "RATE", "0.5"));
        assertThat(spec.rendezvous().port()).isEqualTo(new JobSpec.MasterPort.Fixed(29555));
        assertThat(spec.env()).containsExactly(Map.entry("PW", "p@ss&w0rd #1"), Map.entry("ZEROS", "007"),
                Map.entry("ANCHOR", "&a x"), Map.entry("QUOTES", "'it''s' \"x\""), Map.entry("AFFIRM", "yes"),
                Map.entry("FLAG", "true"), Map.entry("NUM", "-12"), Map.entry("RATE", "0.5"));
    }

    @Test
    void aJobFileThatIsNotARegularFileIsRefusedAtOnce() throws Exception {
        assertThat(problems(Path.of("/dev/zero"), Map.of())).containsExactly(
                "zero:1:1: is not a regular file (a device, FIFO or socket): a job file must be a file");
        Path fifo = dir.resolve("pipe.yaml");
        new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        assertThat(problems(fifo, Map.of())).containsExactly(
                "pipe.yaml:1:1: is not a regular file (a device, FIFO or socket): a job file must be a file");
        Files.createDirectories(dir.resolve("d.yaml"));
        assertThat(problems(dir.resolve("d.yaml"), Map.of())).containsExactly("d.yaml:1:1: is a directory, not a job file");
    }

    @Test
    void aSixtyFourNodeInventoryWrittenWithMergeKeysLoads() throws Exception {
        StringBuilder y = new StringBuilder("name: big\nnodes:\n  - &node {name: n0, host: 10.0.0.1, user: ann, port: 2222, workers: 8}\n");
        for (int i = 1; i < 64; i++) {
            y.append("  - {<<: *node, name: n").append(i).append(", host: 10.0.").append(i / 250).append('.').append(i % 250 + 1).append("}\n");
        }
        y.append("entrypoint: {command: [python3, t.py]}\n");
        JobSpec spec = load(write("big.yaml", y.toString()), Map.of());
        assertThat(spec.nodes()).hasSize(64);
        assertThat(((NodeAddress.Ssh) spec.nodes().get(63).address()).user()).isEqualTo(Optional.of("ann"));
        assertThat(((NodeAddress.Ssh) spec.nodes().get(63).address()).port()).isEqualTo(OptionalInt.of(2222));
        assertThat(((NodeAddress.Ssh) spec.nodes().get(63).address()).host()).isEqualTo(("10.0.0.64"));
    }

    @Test
    void setOverridesApplyBeforeValidation() throws Exception {
        Path f = write("s.yaml", "name: s\nnodes:\n  - {name: a, host: h1, gpus: [0]}\n  - {name: b, host: h2, gpus: [0]}\n"
                + "entrypoint: {command: [python3]}\n");
        JobSpec spec = load(f, Map.of(), "nodes[1].gpus=[0,1]", "logs.dir=/tmp/runs", "nodes[a].workers=3",
                "rendezvous.port=auto", "env.MODE='29500'", "failure.grace_period_s=2.5");
        assertThat(spec.nodes().get(1).gpus()).isEqualTo(new NodeSpec.GpuRequest.Listed(List.of(0, 1)));
        assertThat(spec.nodes().get(0).workers()).isEqualTo(OptionalInt.of(3));
        assertThat(spec.logsDir()).isEqualTo("/tmp/runs");
        assertThat(spec.rendezvous().port()).isEqualTo(new JobSpec.MasterPort.Auto());
        assertThat(spec.env()).containsExactly(Map.entry("MODE", "29500"));
        assertThat(spec.failure().gracePeriodSeconds()).isEqualTo(2.5);
    }

    @Test
    void setErrorsNameTheOverrideWithItsColumn() throws Exception {
        Path f = write("s.yaml", MINIMAL);
        assertThat(problems(f, Map.of(), "nodes[0].gpus=[0,x]", "nodes[3].port=22", "name.first=x", "nodes[0].hots=h", "oops", "a..b=1"))
                .containsExactly(
                        "--set a..b=1:1:1: bad path 'a..b': use keys joined by '.', with [N] or [NODE-NAME] for list items",
                        "--set name.first=x:1:7: /name: cannot set key 'first': this value is not a map",
                        "--set nodes[3].port=22:1:7: /nodes: no list item [3] (the list has 1 items, counted from 0)",
                        "--set oops:1:1: --set takes PATH=VALUE, e.g. --set nodes[0].gpus=[0,1]");
        assertThat(problems(f, Map.of(), "nodes[0].gpus=[0,x]", "nodes[0].hots=h")).containsExactly(
                "--set nodes[0].gpus=[0,x]:1:24: /nodes/0/gpus/1: a GPU index is a whole number such as 0 (found \"x\")",
                "--set nodes[0].hots=h:1:7: /nodes/0/hots: unknown key 'hots'; did you mean 'host'?");
    }

    @Test
    void anchorsAndMergeKeysWork() throws Exception {
        Path g = write("g.yaml", "name: m\nnodes:\n  - &first {name: a, host: h1, user: root, port: 30430, gpus: [0, 1]}\n"
                + "  - <<: *first\n    name: b\n    host: h2\n    port: 22\nentrypoint: {command: [python3]}\n");
        JobSpec spec = load(g, Map.of());
        NodeSpec b = spec.nodes().get(1);
        assertThat(b.name()).isEqualTo("b");
        assertThat(((NodeAddress.Ssh) b.address()).host()).isEqualTo(("h2"));
        assertThat(((NodeAddress.Ssh) b.address()).port()).isEqualTo(OptionalInt.of(22));
        assertThat(((NodeAddress.Ssh) b.address()).user()).isEqualTo(Optional.of("root"));
        assertThat(b.gpus()).isEqualTo(new NodeSpec.GpuRequest.Listed(List.of(0, 1)));
    }

    @Test
    void gpusAllAndLocalNodes() throws Exception {
        JobSpec spec = load(write("l.yaml", "name: l\nnodes:\n  - {name: here, local: true, workers: 2}\n"
                + "  - {name: box, host: h, gpus: all}\nrendezvous: {addr: 10.0.0.1, port: auto}\nentrypoint: {command: [python3]}\n"), Map.of());
        assertThat(spec.nodes().get(0).local()).isTrue();
        assertThat(spec.nodes().get(0).address()).isEqualTo(new NodeAddress.Local(Optional.empty()));
        assertThat(spec.nodes().get(1).gpus()).isEqualTo(new NodeSpec.GpuRequest.All());
        assertThat(spec.rendezvous().addr()).isEqualTo(Optional.of("10.0.0.1"));
        assertThat(spec.rendezvous().port()).isEqualTo(new JobSpec.MasterPort.Auto());
    }
}
