package org.runjob.cli;

import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as users write them on the command line: 90 (seconds), 90s, 10m, 2h, 1d. */
final class Durations {

    private static final Pattern FORM = Pattern.compile("(\\d{1,9})([smhd]?)");

    private Durations() {
    }

    static Optional<Duration> parse(String text) {
        Matcher m = FORM.matcher(text.trim());
        if (!m.matches()) {
            return Optional.empty();
        }
        long n = Long.parseLong(m.group(1));
        return Optional.of(switch (m.group(2)) {
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            case "d" -> Duration.ofDays(n);
            default -> Duration.ofSeconds(n);
        });
    }
}
