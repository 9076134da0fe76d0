package org.runjob.session;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.agent.Watchdog;
import org.runjob.protocol.NodeJvm;

/**
 * The one command per node (local nodes too): a constant shell script that makes sure the node has runjob's
 * agent jar (or, for {@link NodeCommand}, runjob's whole jar), verified by content, and starts the agent under its {@link Watchdog}, on the same
 * channel that then carries the agent's frames.
 *
 * <ol>
 *   <li>It prints {@code RUNJOB-BOOT 1} (whatever a login shell printed before it is skipped).</li>
 *   <li>It uses the java named by {@code RUNJOB_JAVA} (set for local nodes: the one runjob runs
 *       on; unset before the agent starts), else {@code java} from the PATH when it is >= 17 (read from the JDK's release file, else
 *       {@code java -version}); else a runtime runjob sent before
 *       ({@code .../runjob/runtimes/SHA256/rt}; for runjob's own main, only one whose {@code release}
 *       lists java.desktop, which the agent's runtime lacks); else it prints {@code RUNJOB-NEED runtime ARCH LIBC}
 *       and reads {@code SHA256 SIZE} and the {@link NodeRuntime} archive (or {@code none 0}: then
 *       {@code RUNJOB-FAIL java ...}), checks it, unpacks it into a new directory and renames that
 *       into place. An unpacked runtime is not hashed again at each start: it lives in the user's
 *       own cache, which no one else can write.</li>
 *   <li>The jar is cached per user, content-addressed: {@code ${XDG_CACHE_HOME:-~/.cache}/runjob/agents/SHA256.jar}.
 *       The cache directories must be the user's own and writable by nobody else (else
 *       {@code RUNJOB-FAIL cache ...}). A cached jar is used only when its SHA-256 matches;
 *       otherwise the script prints {@code RUNJOB-NEED jar}, reads exactly SIZE bytes from stdin
 *       into a new temporary file there ({@code mktemp}, mode 600), checks its SHA-256 and renames
 *       it into place. Nodes that share a home directory race harmlessly: same content, atomic rename.</li>
 *   <li>The first agent of a jar on a node records a class-data archive of what it loaded
 *       ({@code SHA256.jsa} beside the jar, renamed into place by the watchdog only after a
 *       normal exit, with its {@code cksum} in {@code SHA256.jsa.sum}); later agents start from it,
 *       in about half the CPU time, when its checksum still matches (else it is made again: a
 *       truncated archive would crash the JVM). The JVM's own
 *       messages and logging go to stderr, never into the frames on stdout.</li>
 *   <li>It prints {@code RUNJOB-START} and execs the watchdog, which starts
 *       {@code java ... -cp JAR MAIN agent --jar SHA OPTIONS}: from here on, stdout carries frames.
 *       MAIN is the agent artifact's main class, or runjob's for a command run with {@link NodeCommand}.</li>
 * </ol>
 * Unless the session's locale is UTF-8, it sets {@code LC_CTYPE=C.UTF-8} first, so argv and
 * environment reach workers byte for byte. Every value (hash, size, agent options) is an argument;
 * none is ever part of the script's text.
 */
final class Bootstrap {

    private static final Logger LOG = LogManager.getLogger(Bootstrap.class);

    static final String SCRIPT = String.join("\n",
            "case \"${LC_ALL:-${LC_CTYPE:-$LANG}}\" in *[Uu][Tt][Ff]-8*|*[Uu][Tt][Ff]8*) ;; *) LC_CTYPE=C.UTF-8; export LC_CTYPE ;; esac",
            "sha=$1; size=$2; w=$3; jit=$4; main=$5; shift 5",
            "rj=${RUNJOB_JAVA:-}; unset RUNJOB_JAVA",
            "printf 'RUNJOB-BOOT 1\\n'",
            "fail() { printf 'RUNJOB-FAIL %s\\n' \"$*\"; exit 0; }",
            // a function: its own positional parameters, so the agent's options in "$@" stay
            "own() {",
            "  [ -L \"$1\" ] && fail cache \"$1\" is a symlink: remove it",
            "  s=$(stat -c '%u %a' \"$1\") || fail cache cannot read \"$1\"",
            "  set -- \"$1\" $s",
            "  [ \"$2\" = \"$me\" ] || fail cache \"$1\" is owned by uid \"$2\", not by you: remove it",
            "  case $3 in *[2367]?|*[2367]) fail cache \"$1\" is writable by others: chmod go-w \"$1\" ;; esac",
            "}",
            "java=; v=",
            // a local node: the java runjob itself runs on
            "if [ -n \"$rj\" ] && [ -x \"$rj\" ]; then java=$rj",
            "elif j=$(command -v java); then",
            "  r=\"$(dirname \"$(readlink -f \"$j\")\")/../release\"",
            "  v=$(sed -n 's/^JAVA_VERSION=\"\\([0-9]*\\).*/\\1/p' \"$r\" 2>/dev/null)",
            "  [ -n \"$v\" ] || v=$(java -version 2>&1 | sed -n '1s/.*version \"\\(1\\.\\)\\{0,1\\}\\([0-9]*\\).*/\\2/p')",
            "  [ \"${v:-0}\" -ge 17 ] 2>/dev/null && java=java",
            "fi",
            "umask 077",
            "c=${XDG_CACHE_HOME:-$HOME/.cache}/runjob",
            "mkdir -p \"$c/agents\" || fail cache cannot create \"$c/agents\"",
            "me=$(id -u)",
            "own \"$c\"; own \"$c/agents\"",
            // no java >= 17: a runtime runjob sent before, else ask for one (kept by its SHA-256)
            "if [ -z \"$java\" ] && [ -d \"$c/runtimes\" ]; then",
            "  own \"$c/runtimes\"",
            // runjob itself (a submitted run's coordinator) needs java.desktop, which the agent's runtime lacks
            "  for x in \"$c\"/runtimes/*/rt; do",
            "    [ -x \"$x/bin/java\" ] || continue",
            "    [ \"$main\" = " + NodeJvm.RUNJOB_MAIN + " ] && ! grep -q '^MODULES=.*[\" ]java\\.desktop[\" ]' \"$x/release\" 2>/dev/null && continue",
            "    java=$x/bin/java",
            "  done",
            "fi",
            "if [ -z \"$java\" ]; then",
            "  libc=glibc; for x in /lib/ld-musl-*; do [ -e \"$x\" ] && libc=musl; done",
            "  printf 'RUNJOB-NEED runtime %s %s\\n' \"$(uname -m)\" \"$libc\"",
            "  read -r rsha rsize || fail java no answer about a runtime",
            "  [ \"$rsha\" = none ] && fail java no java '>=' 17 on the node\"'\"s PATH \"(found: ${v:-none})\", and this machine cannot send one"
                    + " for \"$(uname -m)/$libc\": install a JRE '>=' 17 on the node",
            "  mkdir -p \"$c/runtimes\" || fail cache cannot create \"$c/runtimes\"",
            "  own \"$c/runtimes\"",
            "  t=$(mktemp -d \"$c/runtimes/.new.XXXXXXXX\") || fail cache cannot write in \"$c/runtimes\"",
            "  head -c \"$rsize\" > \"$t/rt.tgz\" || { rm -rf \"$t\"; fail cache cannot write the runtime in \"$c/runtimes\"; }",
            "  [ \"$(sha256sum < \"$t/rt.tgz\" | cut -c1-64)\" = \"$rsha\" ] || { rm -rf \"$t\"; fail jar the runtime arrived damaged; }",
            "  tar -xzf \"$t/rt.tgz\" -C \"$t\" && rm -f \"$t/rt.tgz\" || { rm -rf \"$t\"; fail cache cannot unpack the runtime in \"$c/runtimes\"; }",
            // another node of a shared home may have put the same one there first
            "  mv \"$t\" \"$c/runtimes/$rsha\" 2>/dev/null || rm -rf \"$t\"",
            "  java=$c/runtimes/$rsha/rt/bin/java",
            "fi",
            "f=$c/agents/$sha.jar",
            "if [ \"$(sha256sum 2>/dev/null < \"$f\" | cut -c1-64)\" != \"$sha\" ]; then",
            "  t=$(mktemp \"$c/agents/.$sha.XXXXXXXX\") || fail cache cannot write in \"$c/agents\"",
            "  printf 'RUNJOB-NEED jar\\n'",
            "  head -c \"$size\" > \"$t\" || { rm -f \"$t\"; fail cache cannot write the agent jar in \"$c/agents\"; }",
            "  [ \"$(sha256sum < \"$t\" | cut -c1-64)\" = \"$sha\" ] || { rm -f \"$t\"; fail jar the agent jar arrived damaged; }",
            "  mv -f \"$t\" \"$f\" || { rm -f \"$t\"; fail cache cannot rename the agent jar into \"$c/agents\"; }",
            "fi",
            // a class-data archive of the agent, made by the first agent of this jar at its (normal) exit; used only when its
            // checksum is the one recorded then (a truncated archive crashes the JVM), else made again
            "RUNJOB_JSA=$c/agents/$sha.jsa",
            "if [ -s \"$RUNJOB_JSA\" ] && [ \"$(cksum < \"$RUNJOB_JSA\")\" != \"$(cat \"$RUNJOB_JSA.sum\" 2>/dev/null)\" ]; then"
                    + " rm -f \"$RUNJOB_JSA\" \"$RUNJOB_JSA.sum\"; fi",
            // an install lock left by an agent killed between its two renames (older than a minute) is not waited for
            "[ -d \"$RUNJOB_JSA.lock\" ] && find \"$RUNJOB_JSA.lock\" -maxdepth 0 -mmin +1 -exec rmdir {} \\; 2>/dev/null",
            "if [ -s \"$RUNJOB_JSA\" ]; then x=-XX:SharedArchiveFile=$RUNJOB_JSA; RUNJOB_JSA=",
            "else RUNJOB_JSA_DUMP=$(mktemp \"$RUNJOB_JSA.XXXXXXXX\") && x=-XX:ArchiveClassesAtExit=$RUNJOB_JSA_DUMP || x=; fi",
            "export RUNJOB_JSA RUNJOB_JSA_DUMP",
            "printf 'RUNJOB-START\\n'",
            "exec sh -c \"$w\" sh " + String.join(" ", NodeJvm.argv("\"$java\"", "\"$jit\"", List.of("${x:+\"$x\"}", "-XX:+DisplayVMOutputToStderr", "-Xlog:disable", "-Xlog:all=warning,cds*=off:stderr"),
                    "\"$f\"", "\"$main\"", NodeJvm.AGENT, "--jar", "\"$sha\"")) + " \"$@\"");

    /** Why a node's agent could not be started: {@code what} is {@code java}, {@code cache} or {@code jar}. */
    static final class Failure extends IOException {
        final String what;

        Failure(String what, String message) {
            super(message);
            this.what = what;
        }
    }

    private Bootstrap() {
    }

    /**
     * The remote command's argv: {@code sh -c SCRIPT sh SHA SIZE WATCHDOG JIT-FLAG MAIN AGENT-OPTIONS...}:
     * {@code jar}'s main class {@code main} ({@link NodeJvm#AGENT_MAIN} or {@link NodeJvm#RUNJOB_MAIN}).
     */
    static List<String> argv(PinnedJar jar, NodeJvm.Jit jit, List<String> agentArgs) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", SCRIPT, "sh", jar.sha256(), Long.toString(jar.size()), Watchdog.SCRIPT, jit.flag,
                jar.main()));
        argv.addAll(agentArgs);
        return argv;
    }

    /**
     * Talks the script through to {@code RUNJOB-START}: sends the jar when asked. Reads byte by
     * byte, so nothing of the agent's first frame is consumed.
     *
     * @return true when the jar was sent
     */
    static boolean converse(String node, InputStream in, OutputStream out, Path jar,
                            BiFunction<String, String, Optional<NodeRuntime>> runtimes) throws IOException {
        boolean booted = false;
        boolean sent = false;
        while (true) {
            String line = readLine(in);
            if (line == null) {
                throw new IOException("the node closed the channel before the agent started");
            }
            if (!booted) {
                if (line.equals("RUNJOB-BOOT 1")) {
                    booted = true;
                } else if (!line.isBlank()) {
                    LOG.info("node {}: the login shell printed: {}", node, line);
                }
                continue;
            }
            if (line.equals("RUNJOB-START")) {
                return sent;
            }
            if (line.equals("RUNJOB-NEED jar")) {
                LOG.debug("node {}: sending the agent jar ({} bytes)", node, Files.size(jar));
                Files.copy(jar, out);
                out.flush();
                sent = true;
            } else if (line.startsWith("RUNJOB-NEED runtime ")) {
                String[] w = line.split(" ");
                Optional<NodeRuntime> rt = w.length == 4 ? runtimes.apply(w[2], w[3]) : Optional.empty();
                if (rt.isEmpty()) {
                    out.write("none 0\n".getBytes(StandardCharsets.US_ASCII));
                } else {
                    LOG.info("node {}: no java >= 17 there; sending a runtime ({} MiB)", node, rt.get().size() >> 20);
                    out.write((rt.get().sha256() + " " + rt.get().size() + "\n").getBytes(StandardCharsets.US_ASCII));
                    Files.copy(rt.get().archive(), out);
                    sent = true;
                }
                out.flush();
            } else if (line.startsWith("RUNJOB-FAIL ")) {
                String rest = line.substring("RUNJOB-FAIL ".length());
                int sp = rest.indexOf(' ');
                throw new Failure(sp < 0 ? rest : rest.substring(0, sp), sp < 0 ? rest : rest.substring(sp + 1));
            } else {
                throw new IOException("the node's start-up script said: " + line);
            }
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (line.size() < 8192) {
                line.write(b);
            }
        }
        return b < 0 && line.size() == 0 ? null : line.toString(StandardCharsets.UTF_8);
    }
}
