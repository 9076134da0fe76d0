package org.runjob.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A running HotSpot JVM's thread dump through its attach listener, the way {@code jcmd PID
 * Thread.print} asks for it, with no JDK tools on the node: when {@code /tmp/.java_pidPID} is no
 * socket yet, an {@code .attach_pidPID} file in the JVM's working directory and a SIGQUIT start
 * the listener; the request is {@code 1 NUL threaddump NUL NUL NUL NUL}, the answer a status line
 * ({@code 0}) and the dump. The caller checks first that the JVM catches SIGQUIT (a JVM started
 * with {@code -Xrs} does not, and would die of it). A first SIGQUIT also prints a dump on the
 * worker's own stdout, as the JVM always does. A socket of that name owned by another user (in a
 * shared {@code /tmp}) is not asked.
 */
final class JavaAttach {

    private static final long POLL_MS = 20;
    private static final int MAX_DUMP = 4 << 20;

    private JavaAttach() {
    }

    /** The dump, or empty when the JVM did not answer within {@code timeoutMs}. */
    static Optional<String> threadDump(long pid, long timeoutMs) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        long nspid = ProcInfo.nsPid(pid);
        Path socket = Path.of("/proc", Long.toString(pid), "root", "tmp", ".java_pid" + nspid);
        Path trigger = Path.of("/proc", Long.toString(pid), "cwd", ".attach_pid" + nspid);
        boolean triggered = false;
        try {
            if (!isSocket(socket)) {
                Files.deleteIfExists(trigger);
                Files.createFile(trigger);
                triggered = true;
                Commands.kill(pid, "QUIT");
                while (!isSocket(socket)) {
                    if (System.nanoTime() > deadline) {
                        return Optional.empty();
                    }
                    Thread.sleep(POLL_MS);
                }
            }
            // /tmp is shared: a socket someone else made under that name is not the JVM's listener
            if (!Files.getOwner(socket, LinkOption.NOFOLLOW_LINKS).equals(Files.getOwner(Path.of("/proc", Long.toString(pid))))) {
                return Optional.empty();
            }
            return ask(socket);
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } finally {
            if (triggered) {
                try {
                    Files.deleteIfExists(trigger);
                } catch (IOException e) {
                    // the JVM's working directory went away
                }
            }
        }
    }

    private static Optional<String> ask(Path socket) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ch.write(ByteBuffer.wrap("1\0threaddump\0\0\0\0".getBytes(StandardCharsets.US_ASCII)));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(65536);
            while (ch.read(buf) > 0 && out.size() < MAX_DUMP) {
                out.write(buf.array(), 0, buf.position());
                buf.clear();
            }
            String answer = out.toString(StandardCharsets.UTF_8);
            int nl = answer.indexOf('\n');
            if (nl < 0 || !answer.substring(0, nl).strip().equals("0")) {
                return Optional.empty();
            }
            return Optional.of(answer.substring(nl + 1));
        }
    }

    private static boolean isSocket(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther();
        } catch (IOException e) {
            return false;
        }
    }
}
