package org.runjob.observe;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.regex.Pattern;

/**
 * The sources registered through {@code META-INF/services/org.runjob.observe.Source} on this class
 * path, in the order the service files list them; a line whose class cannot be loaded is skipped.
 * The built-in {@code gpus} is the agent's own and not among them.
 */
public final class Sources {

    /** What a source's name may be: also the file name part {@code source-NAME-NODE.jsonl}, so no {@code -}. */
    public static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]{0,31}");
    /** The built-in source's name: the node's GPUs, sampled whenever {@code observe.interval_s} is above 0. */
    public static final String GPUS = "gpus";

    private Sources() {
    }

    /** Every registered source whose class loads and whose name is {@link #NAME}. */
    public static List<Source> registered() {
        List<Source> all = new ArrayList<>();
        Iterator<Source> it = ServiceLoader.load(Source.class, Sources.class.getClassLoader()).iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    return all;
                }
                Source s = it.next();
                if (NAME.matcher(s.name()).matches() && !s.name().equals(GPUS)) {
                    all.add(s);
                }
            } catch (ServiceConfigurationError | LinkageError e) {
                // a line whose class is missing or broken: the others still load
            }
        }
    }

    /** The registered source named {@code name}. */
    public static Optional<Source> find(String name) {
        return registered().stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /** The registered sources' names. */
    public static List<String> names() {
        return registered().stream().map(Source::name).toList();
    }
}
