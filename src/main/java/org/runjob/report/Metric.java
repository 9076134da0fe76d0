package org.runjob.report;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A run's metric ({@code logs.metric}): the last line of a rank's file that contains a match of the
 * job's regular expression, or the match's first group when the expression has one ("val_loss
 * ([0-9.]+)" gives "0.231"). Read line by line, so a long rank file costs time, not memory.
 */
public final class Metric {

    private Metric() {
    }

    /** The metric in {@code rankFile}; empty when no line matches or the file cannot be read. */
    public static Optional<String> last(Pattern pattern, Path rankFile) {
        String found = null;
        try (BufferedReader in = Files.newBufferedReader(rankFile, StandardCharsets.UTF_8)) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                Matcher m = pattern.matcher(line);
                if (m.find()) {
                    found = m.groupCount() > 0 && m.group(1) != null ? m.group(1) : line.strip();
                }
            }
        } catch (IOException | RuntimeException e) {
            return Optional.ofNullable(found);
        }
        return Optional.ofNullable(found);
    }
}
