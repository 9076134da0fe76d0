package org.runjob.logs;

import java.nio.file.Path;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;

/** Log4j 2 set-up for a run: everything (DEBUG) to the run folder's runjob.log; warnings, or everything with --verbose, to stderr. */
public final class Diagnostics {

    private Diagnostics() {
    }

    public static void toRunFolder(Path logFile, boolean verbose) {
        ConfigurationBuilder<BuiltConfiguration> b = ConfigurationBuilderFactory.newConfigurationBuilder();
        b.setStatusLevel(Level.ERROR);
        b.add(b.newAppender("file", "File").addAttribute("fileName", logFile.toString())
                .add(b.newLayout("PatternLayout").addAttribute("pattern", "%d{ISO8601} %-5level %c{1} [%t] %msg%n%throwable")));
        b.add(b.newAppender("stderr", "Console").addAttribute("target", ConsoleAppender.Target.SYSTEM_ERR)
                .add(b.newLayout("PatternLayout").addAttribute("pattern", "runjob: %msg%n")));
        b.add(b.newRootLogger(Level.DEBUG)
                .add(b.newAppenderRef("file"))
                .add(b.newAppenderRef("stderr").addAttribute("level", verbose ? Level.DEBUG : Level.WARN)));
        Configurator.reconfigure(b.build());
    }

    /** Back to the bundled configuration (stderr only), after a run in this JVM. */
    public static void reset() {
        Configurator.reconfigure();
    }
}
