package org.runjob.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/** Regenerates a golden file by hand after a deliberate output change: review the diff before committing. */
final class GoldenWriter {
    public static void main(String[] args) throws Exception {
        Cli r = Cli.run(Arrays.copyOfRange(args, 1, args.length));
        Files.writeString(Path.of(args[0]), r.out());
    }
}
