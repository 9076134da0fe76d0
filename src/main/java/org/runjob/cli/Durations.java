package org.runjob.cli;

import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import picocli.CommandLine.ITypeConverter;

/** Durations as users write them on the command line: 90 (seconds), 90s, 10m, 2h, 1d; picocli's converter for them. */
final class Durations implements ITypeConverter<Duration> {

    private static final Pattern FORM = Pattern.compile("(\\d{1,9})([smhd]?)");

    private static Optional<Duration> parse(String text) {
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

    /** {@code --wait-for-gpus}, the one duration option. */
    @Override
    public Duration convert(String value) {
        return parse(value).orElseThrow(() -> new OptionValueError("--wait-for-gpus takes a duration such as 90s, 10m or 2h, not '" + value + "'"));
    }
}
