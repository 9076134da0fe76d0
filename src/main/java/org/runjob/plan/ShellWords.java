package org.runjob.plan;

import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * POSIX shell quoting: the one place argv becomes shell text. A word is left bare when it holds only
 * characters no POSIX shell treats specially; otherwise it is wrapped in single quotes, with each
 * single quote written as {@code '\''}. The result, read by sh, yields the original bytes exactly.
 */
public final class ShellWords {

    private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9_@%+=:,./-]+");

    private ShellWords() {
    }

    public static String quote(String word) {
        if (!word.isEmpty() && SAFE.matcher(word).matches()) {
            return word;
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }

    /**
     * The words quoted and joined by single spaces, as a command line: a first word containing
     * {@code =} is quoted too, since a shell would read it as a variable assignment.
     */
    public static String join(List<String> words) {
        if (words.isEmpty()) {
            return "";
        }
        String first = words.get(0);
        String head = first.contains("=") ? "'" + first.replace("'", "'\\''") + "'" : quote(first);
        return words.stream().skip(1).map(ShellWords::quote)
                .collect(Collectors.joining(" ", head + (words.size() > 1 ? " " : ""), ""));
    }
}
