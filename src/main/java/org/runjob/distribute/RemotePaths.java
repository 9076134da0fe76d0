package org.runjob.distribute;

/**
 * Paths as a node's sshd sees them: commands and SFTP start in the user's home directory, so a
 * {@code ~/x} path is sent as the relative {@code x}, and no shell is needed to expand it.
 */
public final class RemotePaths {

    private RemotePaths() {
    }

    public static String of(String path) {
        if (path.equals("~")) {
            return ".";
        }
        return path.startsWith("~/") ? path.substring(2) : path;
    }

    public static String join(String dir, String rel) {
        return dir.endsWith("/") ? dir + rel : dir + "/" + rel;
    }

    /** Where the agent jar lives inside a workdir. */
    public static String agentJar(String workdir) {
        return join(of(workdir), ".runjob/runjob.jar");
    }
}
