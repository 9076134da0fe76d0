package org.runjob.logs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** The git commit, and whether the work tree is dirty, of the repository that holds a job file. */
public record GitInfo(String commit, boolean dirty) {

    public static Optional<GitInfo> of(Path jobFile) {
        Path dir = jobFile.toAbsolutePath().getParent();
        Optional<String> commit = git(dir, "rev-parse", "HEAD");
        if (commit.isEmpty()) {
            return Optional.empty();
        }
        boolean dirty = git(dir, "status", "--porcelain").map(s -> !s.isBlank()).orElse(false);
        return Optional.of(new GitInfo(commit.get().trim(), dirty));
    }

    private static Optional<String> git(Path dir, String... args) {
        List<String> cmd = new ArrayList<>(List.of("git", "-C", dir.toString()));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return Optional.empty();
            }
            return Optional.of(new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
