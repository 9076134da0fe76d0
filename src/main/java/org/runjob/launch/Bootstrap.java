package org.runjob.launch;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.agent.NodeJvm;
import org.runjob.agent.Watchdog;

/**
 * The one remote command per node: a constant shell script that makes sure the node has runjob's
 * agent jar, verified by content, and starts the agent under its {@link Watchdog}, on the same
 * channel that then carries the agent's frames.
 *
 * <ol>
 *   <li>It prints {@code RUNJOB-BOOT 1} (whatever a login shell printed before it is skipped).</li>
 *   <li>It needs {@code java} >= 17 on the PATH (read from the JDK's release file, else
 *       {@code java -version}); else {@code RUNJOB-FAIL java ...}.</li>
 *   <li>The jar is cached per user, content-addressed: {@code ${XDG_CACHE_HOME:-~/.cache}/runjob/agents/SHA256.jar}.
 *       The cache directories must be the user's own and writable by nobody else (else
 *       {@code RUNJOB-FAIL cache ...}). A cached jar is used only when its SHA-256 matches;
 *       otherwise the script prints {@code RUNJOB-NEED jar}, reads exactly SIZE bytes from stdin
 *       into a new temporary file there ({@code mktemp}, mode 600), checks its SHA-256 and renames
 *       it into place. Nodes that share a home directory race harmlessly: same content, atomic rename.</li>
 *   <li>It prints {@code RUNJOB-START} and execs the watchdog, which starts
 *       {@code java ... -cp JAR org.runjob.cli.Main agent OPTIONS}: from here on, stdout carries frames.</li>
 * </ol>
 * Unless the session's locale is UTF-8, it sets {@code LC_CTYPE=C.UTF-8} first, so argv and
 * environment reach workers byte for byte. Every value (hash, size, agent options) is an argument;
 * none is ever part of the script's text.
 */
final class Bootstrap {

    private static final Logger LOG = LogManager.getLogger(Bootstrap.class);

    static final String SCRIPT = String.join("\n",
            "case \"${LC_ALL:-${LC_CTYPE:-$LANG}}\" in *[Uu][Tt][Ff]-8*|*[Uu][Tt][Ff]8*) ;; *) LC_CTYPE=C.UTF-8; export LC_CTYPE ;; esac",
            "sha=$1; size=$2; w=$3; shift 3",
            "printf 'RUNJOB-BOOT 1\\n'",
            "fail() { printf 'RUNJOB-FAIL %s\\n' \"$*\"; exit 0; }",
            "j=$(command -v java) || fail java no java on the node\"'\"s PATH: install a JRE '>=' 17",
            "r=\"$(dirname \"$(readlink -f \"$j\")\")/../release\"",
            "v=$(sed -n 's/^JAVA_VERSION=\"\\([0-9]*\\).*/\\1/p' \"$r\" 2>/dev/null)",
            "[ -n \"$v\" ] || v=$(java -version 2>&1 | sed -n '1s/.*version \"\\(1\\.\\)\\{0,1\\}\\([0-9]*\\).*/\\2/p')",
            "[ \"${v:-0}\" -ge 17 ] 2>/dev/null || fail java java \"${v:-?}\" is too old: needs '>=' 17",
            "umask 077",
            "c=${XDG_CACHE_HOME:-$HOME/.cache}/runjob",
            "mkdir -p \"$c/agents\" || fail cache cannot create \"$c/agents\"",
            "me=$(id -u)",
            // a function: its own positional parameters, so the agent's options in "$@" stay
            "own() {",
            "  [ -L \"$1\" ] && fail cache \"$1\" is a symlink: remove it",
            "  s=$(stat -c '%u %a' \"$1\") || fail cache cannot read \"$1\"",
            "  set -- \"$1\" $s",
            "  [ \"$2\" = \"$me\" ] || fail cache \"$1\" is owned by uid \"$2\", not by you: remove it",
            "  case $3 in *[2367]?|*[2367]) fail cache \"$1\" is writable by others: chmod go-w \"$1\" ;; esac",
            "}",
            "own \"$c\"; own \"$c/agents\"",
            "f=$c/agents/$sha.jar",
            "if [ \"$(sha256sum < \"$f\" 2>/dev/null | cut -c1-64)\" != \"$sha\" ]; then",
            "  t=$(mktemp \"$c/agents/.$sha.XXXXXXXX\") || fail cache cannot write in \"$c/agents\"",
            "  printf 'RUNJOB-NEED jar\\n'",
            "  head -c \"$size\" > \"$t\" || { rm -f \"$t\"; fail cache cannot write the agent jar in \"$c/agents\"; }",
            "  [ \"$(sha256sum < \"$t\" | cut -c1-64)\" = \"$sha\" ] || { rm -f \"$t\"; fail jar the agent jar arrived damaged; }",
            "  mv -f \"$t\" \"$f\" || { rm -f \"$t\"; fail cache cannot rename the agent jar into \"$c/agents\"; }",
            "fi",
            "printf 'RUNJOB-START\\n'",
            "exec sh -c \"$w\" sh " + String.join(" ", NodeJvm.argv("java", "\"$f\"", "agent")) + " \"$@\"");

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

    /** The remote command's argv: {@code sh -c SCRIPT sh SHA SIZE WATCHDOG AGENT-OPTIONS...}. */
    static List<String> argv(String sha, long size, List<String> agentArgs) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", SCRIPT, "sh", sha, Long.toString(size), Watchdog.SCRIPT));
        argv.addAll(agentArgs);
        return argv;
    }

    /**
     * Talks the script through to {@code RUNJOB-START}: sends the jar when asked. Reads byte by
     * byte, so nothing of the agent's first frame is consumed.
     *
     * @return true when the jar was sent
     */
    static boolean converse(String node, InputStream in, OutputStream out, Path jar) throws IOException {
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
