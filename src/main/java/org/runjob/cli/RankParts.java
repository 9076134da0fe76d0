package org.runjob.cli;

import java.util.List;

import org.runjob.run.RankSelection;

import picocli.CommandLine.ITypeConverter;

/**
 * picocli's converter for each comma-separated part of {@code --ranks} ({@code 0-3}, {@code 7}): the
 * part as given, once {@link RankSelection#parse} reads it; else the reason, as a usage error.
 */
final class RankParts implements ITypeConverter<String> {

    @Override
    public String convert(String value) {
        try {
            RankSelection.parse(List.of(value));
            return value;
        } catch (IllegalArgumentException e) {
            throw new OptionValueError(e.getMessage());
        }
    }
}
