package org.runjob.spec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Resolves {@code extends}: a job file is merged over the base file it names.
 *
 * <p>Rules:
 * <ol>
 *   <li>The base path is relative to the file that names it; bases may extend further bases.</li>
 *   <li>Maps merge deeply, key by key; the extending file wins. Lists and scalars are replaced whole.</li>
 *   <li>A file that extends itself, directly or through others, is a problem naming the chain.</li>
 *   <li>Every value keeps the location of the file that wrote it; {@code extends} itself is dropped.</li>
 * </ol>
 */
final class Composer {

    static final String EXTENDS = "extends";

    private final YamlReader reader;
    private final List<Problem> problems = new ArrayList<>();

    Composer(YamlReader reader) {
        this.reader = reader;
    }

    List<Problem> problems() {
        return problems;
    }

    /** The composed tree of {@code file}, or null when a problem stopped composition. */
    SourceNode compose(Path file, String display) {
        return compose(file, display, new ArrayList<>());
    }

    private SourceNode compose(Path file, String display, List<Path> chain) {
        YamlReader.Result read = reader.readFile(file, display);
        problems.addAll(read.problems());
        if (read.root() == null) {
            return null;
        }
        if (!(read.root() instanceof SourceNode.Mapping top)) {
            problems.add(new Problem(read.root().at(), "", "a job file is a map of keys (name, nodes, entrypoint, ...)"));
            return null;
        }
        SourceNode.Entry ext = top.entries().get(EXTENDS);
        if (ext == null) {
            return top;
        }
        Map<String, SourceNode.Entry> own = new LinkedHashMap<>(top.entries());
        own.remove(EXTENDS);
        SourceNode.Mapping self = new SourceNode.Mapping(top.at(), own);
        if (!(ext.value() instanceof SourceNode.Scalar s) || !(s.value() instanceof String rel) || rel.isBlank()) {
            problems.add(new Problem(ext.value().at(), "/" + EXTENDS, "extends takes the path of a base job file"));
            return null;
        }
        Path base = file.toAbsolutePath().getParent().resolve(rel).normalize();
        Path me = real(file);
        List<Path> next = new ArrayList<>(chain);
        next.add(me);
        if (!Files.isRegularFile(base)) {
            problems.add(new Problem(s.at(), "/" + EXTENDS, "base file not found: " + base));
            return null;
        }
        if (next.contains(real(base))) {
            StringBuilder cycle = new StringBuilder();
            for (Path p : next.subList(next.indexOf(real(base)), next.size())) {
                cycle.append(p.getFileName()).append(" -> ");
            }
            problems.add(new Problem(s.at(), "/" + EXTENDS, "extends cycle: " + cycle + base.getFileName()));
            return null;
        }
        String baseDisplay = displayOf(display, rel);
        SourceNode baseTree = compose(base, baseDisplay, next);
        if (baseTree == null) {
            return null;
        }
        return merge(baseTree, self);
    }

    /** Deep merge: maps key by key, everything else replaced by {@code over}. */
    static SourceNode merge(SourceNode base, SourceNode over) {
        if (!(base instanceof SourceNode.Mapping b) || !(over instanceof SourceNode.Mapping o)) {
            return over;
        }
        Map<String, SourceNode.Entry> out = new LinkedHashMap<>(b.entries());
        o.entries().forEach((key, entry) -> {
            SourceNode.Entry under = out.get(key);
            SourceNode value = under == null ? entry.value() : merge(under.value(), entry.value());
            out.put(key, new SourceNode.Entry(entry.keyAt(), value));
        });
        return new SourceNode.Mapping(o.at(), out);
    }

    /** How to name a base file in messages: beside the naming file, as the user would type it. */
    private static String displayOf(String namingDisplay, String rel) {
        Path namer = Path.of(namingDisplay);
        Path parent = namer.getParent();
        Path shown = parent == null ? Path.of(rel) : parent.resolve(rel);
        return shown.normalize().toString();
    }

    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }
}
