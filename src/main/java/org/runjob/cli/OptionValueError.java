package org.runjob.cli;

import picocli.CommandLine.TypeConversionException;

/**
 * A value runjob's own converters refuse, with the whole message the user reads: {@link Main}
 * prints it as {@code runjob: MESSAGE} (exit 2), without picocli's "Invalid value for" and the
 * usage that picocli's own conversion errors get.
 */
final class OptionValueError extends TypeConversionException {

    private static final long serialVersionUID = 1L;

    OptionValueError(String message) {
        super(message);
    }
}
