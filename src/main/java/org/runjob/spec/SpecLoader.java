package org.runjob.spec;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Loads a job file in layers and reports every problem at once.
 *
 * <ol>
 *   <li>YAML, safely ({@link YamlReader}); a syntax error stops here.</li>
 *   <li>{@code extends} chains are merged ({@link Composer}).</li>
 *   <li>{@code ${env:...}} references are replaced from the given environment ({@link Interpolator}).</li>
 *   <li>{@code --set} overrides are applied ({@link Overrides}).</li>
 *   <li>{@code ${sweep.NAME}} references take the values of one point of the {@code sweep:} block ({@link Sweep}).</li>
 *   <li>The JSON Schema ({@link SchemaCheck}) and the semantic rules ({@link SemanticCheck}) run
 *       together, so both kinds of problem come in one report.</li>
 *   <li>With no problem left, the document becomes a {@link JobSpec}.</li>
 * </ol>
 * Nothing here prints, exits or reads the process environment.
 */
public final class SpecLoader {

    private final YamlReader reader = new YamlReader();
    private final SchemaCheck schema;
    private final BackendSpecs backends;
    private final Map<String, String> env;

    /**
     * @param env      the environment {@code ${env:NAME}} reads
     * @param backends the backends a job may name
     */
    public SpecLoader(Map<String, String> env, BackendSpecs backends) {
        this(env, backends, new SchemaCheck(backends));
    }

    /** The same, with a schema already composed for {@code backends}. */
    public SpecLoader(Map<String, String> env, BackendSpecs backends, SchemaCheck schema) {
        this.env = Map.copyOf(env);
        this.backends = backends;
        this.schema = schema;
    }

    /**
     * A loaded job: the spec, the composed document it came from (what runs, as JSON), its sweep
     * when it has one, and the point of the sweep this spec is (empty without a sweep).
     */
    public record Loaded(JobSpec spec, LocatedJson document, Optional<Sweep> sweep, Map<String, String> point) {

        public Loaded(JobSpec spec, LocatedJson document) {
            this(spec, document, Optional.empty(), Map.of());
        }

        public Loaded {
            point = Collections.unmodifiableMap(new LinkedHashMap<>(point));
        }

        /** The same job with {@code more} arguments after the entrypoint's, {@code ${sweep.NAME}} in them replaced. */
        public Loaded withEntrypointArgs(List<String> more) {
            List<String> args = more.stream().map(a -> Sweep.interpolate(a, point)).toList();
            return new Loaded(spec.withEntrypointArgs(args), document, sweep, point);
        }
    }

    /**
     * @param file    the job file
     * @param display how messages name the file (as the user typed it)
     * @param sets    {@code --set PATH=VALUE} overrides, applied in order
     */
    public Loaded load(Path file, String display, List<String> sets) throws InvalidSpecException {
        return load(file, display, sets, 0);
    }

    /**
     * The same, as point {@code point} of the job's sweep (its first point checks a job with a
     * sweep; a job without one has only point 0).
     */
    public Loaded load(Path file, String display, List<String> sets, int point) throws InvalidSpecException {
        Composer composer = new Composer(reader);
        SourceNode tree = composer.compose(file, display);
        fail(composer.problems());
        Interpolator interpolator = new Interpolator(env);
        tree = interpolator.apply(tree, "");
        Overrides overrides = new Overrides(reader);
        tree = overrides.apply(tree, sets);
        List<Problem> problems = new ArrayList<>(interpolator.problems());
        problems.addAll(overrides.problems());
        fail(problems);
        Optional<Sweep> sweep = Sweep.of(tree, problems);
        fail(problems);
        if (point < 0 || point >= sweep.map(Sweep::size).orElse(1)) {
            throw new IllegalArgumentException("no point " + point + " in this job's sweep");
        }
        Map<String, String> values = sweep.map(w -> w.point(point)).orElse(Map.of());
        Interpolator swept = Interpolator.sweep(values);
        tree = swept.apply(tree, "");
        // a sweep: block that is there but unusable ({lr: 0.1}): the schema's problem with it comes
        // first, and each ${sweep.NAME} is reported only when the schema finds nothing
        boolean unusableSweep = sweep.isEmpty() && tree instanceof SourceNode.Mapping m && m.get("sweep") != null;
        if (!unusableSweep) {
            fail(swept.problems());
        }
        LocatedJson doc = LocatedJson.of(tree);
        problems.addAll(schema.check(doc));
        problems.addAll(SemanticCheck.check(doc, backends));
        if (problems.isEmpty()) {
            problems.addAll(swept.problems());
        }
        fail(problems);
        return new Loaded(SpecBinder.bind(doc, backends.of(doc.json()).orElseThrow(), file), doc, sweep, values);
    }

    private static void fail(List<Problem> problems) throws InvalidSpecException {
        if (!problems.isEmpty()) {
            throw new InvalidSpecException(problems);
        }
    }
}
