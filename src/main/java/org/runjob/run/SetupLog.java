package org.runjob.run;

import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

import org.runjob.preflight.EnvironmentCheck;

/**
 * Where a run's setup output goes: each node's lines to {@code setup/NODE.log} in the run folder
 * and to the console as {@code [NODE/setup] LINE}, as they come. Closed when preflight is over.
 */
final class SetupLog implements EnvironmentCheck.SetupOutput, AutoCloseable {

    private final Path dir;
    private final PrintStream console;
    private final Map<String, Writer> files = new HashMap<>();

    SetupLog(Path runFolder, PrintStream console) {
        this.dir = runFolder.resolve("setup");
        this.console = console;
    }

    @Override
    public synchronized void line(String node, String line) {
        console.println("[" + node + "/setup] " + line);
        try {
            Writer w = files.get(node);
            if (w == null) {
                Files.createDirectories(dir);
                w = Files.newBufferedWriter(dir.resolve(node + ".log"), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                files.put(node, w);
            }
            w.write(line);
            w.write('\n');
            w.flush();
        } catch (IOException e) {
            // the run folder cannot take it: the console still has the line
        }
    }

    @Override
    public synchronized void close() {
        for (Writer w : files.values()) {
            try {
                w.close();
            } catch (IOException e) {
                // flushed after every line
            }
        }
        files.clear();
    }
}
