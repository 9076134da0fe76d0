package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.testbed.Poll;
import org.runjob.testbed.Testbed;

/**
 * The stack hook on real processes: a Python process answers with every thread's stack and goes
 * on; the job's own sitecustomize still runs and its own SIGUSR1 handler still works; a JVM gives
 * its thread dump; a process that is no hooked Python, or a JVM without SIGQUIT, is never signalled.
 */
class StackHookTest {

    static final String PYTHON = "/usr/bin/python3";
    static final String SCRIPT = String.join("\n",
            "import os, signal, sys, threading, time",
            "def on_usr1(s, f):",
            "    print('usr1', flush=True)",
            "signal.signal(signal.SIGUSR1, on_usr1)",
            "def waiting_here():",
            "    while True:",
            "        time.sleep(0.05)",
            "threading.Thread(target=lambda: time.sleep(60), daemon=True).start()",
            "print('ready', flush=True)",
            "waiting_here()");

    @TempDir
    Path tmp;

    final List<Process> started = new ArrayList<>();

    @AfterEach
    void kill() {
        started.forEach(Process::destroyForcibly);
    }

    Process start(Map<String, String> env, String... argv) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        started.add(p);
        return p;
    }

    @Test
    void aPythonRankAnswersWithEveryThreadAndItsOwnSitecustomizeAndSignalHandlerStillWork() throws Exception {
        Testbed.require(Files.isExecutable(Path.of(PYTHON)), PYTHON);
        Path own = Files.createDirectories(tmp.resolve("own"));
        Files.writeString(own.resolve("sitecustomize.py"), "open(" + pyString(tmp.resolve("own-ran").toString()) + ", 'w').close()\n");
        StackHook hook = StackHook.create(Optional.of(Files.createDirectories(tmp.resolve("state")))).orElseThrow();
        Map<String, String> env = new HashMap<>(Map.of("PYTHONPATH", own.toString()));
        hook.addTo(env);
        assertThat(env.get("PYTHONPATH")).isEqualTo(tmp.resolve("state") + ":" + own);

        Process python = start(env, PYTHON, "-c", SCRIPT);
        Process sleep = start(env, "sleep", "60");
        var out = python.inputReader(StandardCharsets.UTF_8);
        assertThat(out.readLine()).isEqualTo("ready");
        assertThat(tmp.resolve("own-ran")).as("the job's own sitecustomize ran after runjob's").exists();

        // "ready" is printed just before the main thread enters waiting_here: a capture in between shows it on line 9
        String text = hook.capture(List.of(python.pid(), sleep.pid()));
        for (long deadline = System.nanoTime() + 10_000_000_000L; !text.contains("line 7 in waiting_here") && System.nanoTime() < deadline; ) {
            text = hook.capture(List.of(python.pid(), sleep.pid()));
        }
        assertThat(text).startsWith("process " + python.pid() + " (python3), main thread 0x")
                .containsPattern("Current thread 0x[0-9a-f]{16} \\(most recent call first\\):\n  File \"<string>\", line 7 in waiting_here\n"
                        + "  File \"<string>\", line 10 in <module>")
                .containsPattern("Thread 0x[0-9a-f]{16} \\(most recent call first\\):\n  File \"<string>\", line 8 in <lambda>")
                .doesNotContain("process " + sleep.pid());
        assertThat(python.isAlive()).isTrue();
        assertThat(sleep.isAlive()).as("a process that is no hooked Python is not signalled").isTrue();
        // a second capture takes only what was written since
        assertThat(hook.capture(List.of(python.pid()))).containsOnlyOnce("in waiting_here");
        // native frames come from py-spy where it is installed: it is asked for each Python process (here a stand-in that echoes)
        Path spy = tmp.resolve("py-spy");
        Files.writeString(spy, "#!/bin/sh\necho \"py-spy $*\"\n");
        Files.setPosixFilePermissions(spy, PosixFilePermissions.fromString("rwx------"));
        assertThat(hook.capture(List.of(python.pid()), Optional.of(spy))).contains("in waiting_here")
                .endsWith("\npy-spy dump --native (native frames too):\npy-spy dump --native --pid " + python.pid() + "\n\n");

        new ProcessBuilder("kill", "-USR1", Long.toString(python.pid())).start().waitFor();
        assertThat(out.readLine()).as("the script's own SIGUSR1 handler").isEqualTo("usr1");
        hook.close();
        assertThat(tmp.resolve("state/stacks")).doesNotExist();
        assertThat(tmp.resolve("state")).exists();
    }

    @Test
    void aForkedChildAnswersFromItsOwnFile() throws Exception {
        Testbed.require(Files.isExecutable(Path.of(PYTHON)), PYTHON);
        StackHook hook = StackHook.create(Optional.of(Files.createDirectories(tmp.resolve("state")))).orElseThrow();
        Map<String, String> env = new HashMap<>();
        hook.addTo(env);
        Process python = start(env, PYTHON, "-c", String.join("\n",
                "import os, time",
                "def child_waits():",
                "    while True:",
                "        time.sleep(0.05)",
                "def parent_waits():",
                "    while True:",
                "        time.sleep(0.05)",
                "pid = os.fork()",
                "if pid == 0:",
                "    child_waits()",
                "print(pid, flush=True)",
                "parent_waits()"));
        long child = Long.parseLong(python.inputReader(StandardCharsets.UTF_8).readLine().strip());
        try {
            // the parent says the pid at once; the child registers (and writes its file's header) when it runs
            Path childFile = tmp.resolve("state/stacks/" + child);
            Poll.until(() -> headed(childFile), Duration.ofSeconds(10), "the child's own stack file");
            String text = hook.capture(List.of(python.pid(), child));
            assertThat(text).containsPattern("process " + python.pid() + " \\(python3\\), main thread 0x[0-9a-f]{16}\n"
                    + "Current thread 0x[0-9a-f]{16} \\(most recent call first\\):\n  File \"<string>\", line 7 in parent_waits\n")
                    .containsPattern("process " + child + " \\(python3\\), main thread 0x[0-9a-f]{16}\n"
                    + "Current thread 0x[0-9a-f]{16} \\(most recent call first\\):\n  File \"<string>\", line 4 in child_waits\n");
        } finally {
            ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void aRankWithoutHookedPythonSaysWhyAndIsLeftAlone() throws Exception {
        StackHook hook = StackHook.create(Optional.empty()).orElseThrow();
        Map<String, String> env = new HashMap<>();
        hook.addTo(env);
        Process sleep = start(env, "sleep", "60");
        // a Python that ignores PYTHONPATH (-E) has no hook either
        Process isolated = start(env, PYTHON, "-E", "-c", "print('ready', flush=True)\nimport time\ntime.sleep(60)");
        assertThat(isolated.inputReader(StandardCharsets.UTF_8).readLine()).isEqualTo("ready");
        assertThat(hook.capture(List.of(sleep.pid(), isolated.pid()))).isEqualTo(
                "no stack: no process of this rank is a Python with runjob's stack hook or a JVM"
                        + " (a Python started with -I or -E ignores PYTHONPATH; a JVM started with -Xrs takes no SIGQUIT)\n");
        assertThat(sleep.isAlive() && isolated.isAlive()).as("neither was signalled").isTrue();
        Path dir = Path.of(env.get(StackHook.VARIABLE)).getParent();
        hook.close();
        assertThat(dir).as("its own temporary directory is removed").doesNotExist();
    }

    @Test
    void aJvmRankGivesItsThreadDumpAndGoesOnAndOneWithoutSigquitIsLeftAlone() throws Exception {
        StackHook hook = StackHook.create(Optional.empty()).orElseThrow();
        Map<String, String> env = new HashMap<>();
        hook.addTo(env);
        String java = ProcessHandle.current().info().command().orElseThrow();
        String cp = System.getProperty("java.class.path");
        Process jvm = start(env, java, "-Xshare:auto", "-cp", cp, StuckJava.class.getName());
        Process rs = start(env, java, "-Xrs", "-cp", cp, StuckJava.class.getName());
        assertThat(jvm.inputReader(StandardCharsets.UTF_8).readLine()).isEqualTo("ready");
        assertThat(rs.inputReader(StandardCharsets.UTF_8).readLine()).isEqualTo("ready");

        String text = hook.capture(List.of(jvm.pid(), rs.pid()));
        assertThat(text).startsWith("process " + jvm.pid() + " (java), thread dump\n")
                .containsPattern("\n\"main\" #1 [^\n]*\n   " + Thread.class.getName() + ".State: TIMED_WAITING \\(sleeping\\)\n"
                        + "\tat " + Thread.class.getName() + ".sleep\\([^)]*\\)\n\tat org.runjob.agent.StuckJava.waitingHere\\(StuckJava.java:11\\)\n")
                .doesNotContain("process " + rs.pid());
        // the listener runs now: the second dump needs no signal
        assertThat(hook.capture(List.of(jvm.pid()))).contains("StuckJava.waitingHere(StuckJava.java:11)");
        assertThat(jvm.isAlive()).isTrue();
        assertThat(rs.isAlive()).as("a JVM that takes no SIGQUIT is not sent one").isTrue();
        hook.close();
    }

    static String pyString(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    private static boolean headed(Path file) {
        try {
            return Files.readString(file).startsWith("runjob-stacks ");
        } catch (IOException e) {
            return false;
        }
    }
}
