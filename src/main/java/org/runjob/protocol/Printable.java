package org.runjob.protocol;

/**
 * Text from a node or a worker made safe to print in runjob's own lines, tables and records:
 * every control character (C0, DEL, C1) and every bidirectional override is written as an escape
 * ({@code \x1b}, {@code \u009b}, {@code \u202e}), so no such text can move the cursor, clear the
 * screen, set a window title or write the clipboard of the terminal that shows it. Worker output
 * lines are not passed through here: they reach the console as the worker wrote them.
 */
public final class Printable {

    private Printable() {
    }

    /** {@code s} on one line: a newline, a carriage return and every other control escaped; a tab a space. */
    public static String line(String s) {
        return escape(s, false);
    }

    /** {@code s} keeping its newlines and tabs; every other control escaped. */
    public static String text(String s) {
        return escape(s, true);
    }

    private static String escape(String s, boolean lines) {
        if (s == null) {
            return null;
        }
        int i = 0;
        while (i < s.length() && !unsafe(s.charAt(i))) {
            i++;
        }
        if (i == s.length()) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length() + 16).append(s, 0, i);
        for (; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!unsafe(c)) {
                b.append(c);
            } else if (c == '\t') {
                b.append(lines ? '\t' : ' ');
            } else if (c == '\n' && lines) {
                b.append('\n');
            } else if (c < 0x80) {
                b.append(String.format("\\x%02x", (int) c));
            } else {
                b.append(String.format("\\u%04x", (int) c));
            }
        }
        return b.toString();
    }

    private static boolean unsafe(char c) {
        return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
    }
}
