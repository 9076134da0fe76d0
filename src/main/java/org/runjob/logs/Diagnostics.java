package org.runjob.logs;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.Property;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;
import org.apache.logging.log4j.core.layout.PatternLayout;

/**
 * Log4j 2 set-up for a run: everything (DEBUG) to the run folder's runjob.log; warnings, or
 * everything with --verbose, to stderr. A run's log takes what the thread that started the run,
 * and every thread started from it, logs. One runjob process is one run; where a JVM holds
 * several at once (the in-process tests), each run's log still holds its own lines, and a line
 * from a thread of no run goes to every open run's log.
 */
public final class Diagnostics {

    private static final String PATTERN = "%d{ISO8601} %-5level %c{1} [%t] %msg%n%throwable";
    /** The run logs open in this JVM. */
    private static final List<RunLog> OPEN = new CopyOnWriteArrayList<>();
    /** The run a thread works for: set by the thread that starts it, inherited by the threads it starts. */
    private static final InheritableThreadLocal<RunLog> MINE = new InheritableThreadLocal<>();

    private Diagnostics() {
    }

    /** Starts {@code logFile} as the log of the run this thread starts; stderr shows warnings, or everything when {@code verbose}. */
    public static synchronized void toRunFolder(Path logFile, boolean verbose) {
        RunLog log;
        try {
            log = new RunLog(new FileOutputStream(logFile.toFile(), true));
        } catch (IOException e) {
            System.err.println("runjob: cannot write " + logFile + ": " + e.getMessage());
            return;
        }
        OPEN.add(log);
        MINE.set(log);
        ConfigurationBuilder<BuiltConfiguration> b = ConfigurationBuilderFactory.newConfigurationBuilder();
        b.setStatusLevel(Level.ERROR);
        b.add(b.newAppender("stderr", "Console").addAttribute("target", ConsoleAppender.Target.SYSTEM_ERR)
                .add(b.newLayout("PatternLayout").addAttribute("pattern", "runjob: %msg%n")));
        b.add(b.newRootLogger(Level.DEBUG)
                .add(b.newAppenderRef("stderr").addAttribute("level", verbose ? Level.DEBUG : Level.WARN)));
        Configurator.reconfigure(b.build());
        LoggerContext context = LoggerContext.getContext(false);
        Configuration config = context.getConfiguration();
        RunLogs appender = new RunLogs();
        appender.start();
        config.addAppender(appender);
        config.getRootLogger().addAppender(appender, Level.DEBUG, null);
        context.updateLoggers();
    }

    /** Ends the log of this thread's run; once no run's log is open, back to the bundled configuration (stderr only). */
    public static synchronized void reset() {
        RunLog mine = MINE.get();
        if (mine != null) {
            MINE.remove();
            OPEN.remove(mine);
            mine.close();
        }
        if (OPEN.isEmpty()) {
            Configurator.reconfigure();
        }
    }

    /** One run's runjob.log: whole lines, flushed as they come. */
    private static final class RunLog {
        private final OutputStream out;
        private boolean closed;

        RunLog(OutputStream out) {
            this.out = out;
        }

        synchronized void write(byte[] line) {
            if (closed) {
                return;
            }
            try {
                out.write(line);
                out.flush();
            } catch (IOException e) {
                // the disk is full or the folder gone: the run goes on without its log
            }
        }

        synchronized void close() {
            closed = true;
            try {
                out.close();
            } catch (IOException e) {
                // nothing more to write
            }
        }
    }

    /** The appender: each event to its thread's run's log, or, from a thread of no run, to every open one. */
    private static final class RunLogs extends AbstractAppender {
        RunLogs() {
            super("runlogs", null, PatternLayout.newBuilder().withPattern(PATTERN).build(), true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(LogEvent event) {
            byte[] line = getLayout().toByteArray(event);
            RunLog mine = MINE.get();
            if (mine != null && OPEN.contains(mine)) {
                mine.write(line);
            } else {
                OPEN.forEach(log -> log.write(line));
            }
        }
    }
}
