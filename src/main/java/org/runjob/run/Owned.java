package org.runjob.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Whether runjob may believe what it reads back from a run folder or the run index: the same rule
 * as for workdirs. A run folder (and its job's folder) must be no symlink, owned by this user or
 * root, and writable by nobody else; the run index's directory must be this user's and private
 * (mode 700). Otherwise another user could plant a run whose {@code job.yaml} {@code resume}
 * would run, or lines {@code logs} would print. Read with lstat.
 */
public final class Owned {

    private static final int GROUP_OR_OTHER_WRITE = 0022;
    private static final int GROUP_OR_OTHER_ANY = 0077;

    private Owned() {
    }

    /** This process's uid, or -1 when it cannot be read. */
    public static long myUid() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Why the run folder {@code dir} is not to be believed; empty when it is. */
    public static Optional<String> runFolder(Path dir) {
        return judge(dir, GROUP_OR_OTHER_WRITE, "run folder");
    }

    /** Why the run index's directory is not to be used; empty when it is (or is not there yet). */
    public static Optional<String> privateDir(Path dir) {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        return judge(dir, GROUP_OR_OTHER_ANY, "run index");
    }

    private static Optional<String> judge(Path dir, int forbidden, String what) {
        try {
            if (Files.isSymbolicLink(dir)) {
                return Optional.of("the " + what + " " + dir + " is a symlink: runjob never reads through one");
            }
            int uid = ((Number) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS)).intValue();
            int mode = ((Number) Files.getAttribute(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS)).intValue();
            long me = myUid();
            if (uid != me && uid != 0) {
                return Optional.of("the " + what + " " + dir + " is owned by uid " + uid + ", not by you (uid " + me + ") or root: another"
                        + " user could have planted it");
            }
            if ((mode & forbidden) != 0) {
                return Optional.of("the " + what + " " + dir + " is " + (forbidden == GROUP_OR_OTHER_ANY ? "open to" : "writable by")
                        + " other users (mode " + String.format("%04o", mode & 07777) + "): chmod " + (forbidden == GROUP_OR_OTHER_ANY
                        ? "700" : "go-w") + " " + dir);
            }
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.of("cannot read the " + what + " " + dir + ": " + e.getMessage());
        }
    }
}
