package org.runjob.spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;

/**
 * Reads one YAML document into a {@link SourceNode} tree, safely.
 *
 * <p>Contract:
 * <ol>
 *   <li>Only YAML's standard tags are accepted; a global tag or Java type ({@code !!java...},
 *       {@code !foo}) is a problem, never an object.</li>
 *   <li>Duplicate keys in one mapping are a problem naming both lines.</li>
 *   <li>Aliases are bounded by what they expand to: the expanded tree may hold at most
 *       {@value #MAX_VALUES} values, so an exponential "billion laughs" document fails fast while a
 *       large inventory of nodes merging one anchor ({@code <<: *node}) loads (SnakeYAML's own
 *       alias count is set to {@value #MAX_ALIASES}). A self-referencing alias is a problem.</li>
 *   <li>The file may be at most {@value #MAX_CODE_POINTS} code points and must be UTF-8.</li>
 *   <li>YAML merge keys ({@code <<: *base}) are applied: keys written in the mapping win.</li>
 * </ol>
 * Every problem found is returned at once; reading never throws for bad input.
 */
public final class YamlReader {

    /** High enough for a 64-node inventory written with merge keys; {@link #MAX_VALUES} is what stops a bomb. */
    static final int MAX_ALIASES = 10_000;
    static final int MAX_VALUES = 100_000;
    static final int MAX_CODE_POINTS = 4 * 1024 * 1024;
    /** The longest line read (in UTF-16 units): far above any real value, far below where reading slows. */
    static final int MAX_LINE_CHARS = 256 * 1024;
    static final int MAX_DEPTH = 64;

    private static final Set<Tag> SCALAR_TAGS = Set.of(Tag.STR, Tag.INT, Tag.FLOAT, Tag.BOOL, Tag.NULL, Tag.TIMESTAMP);

    /** What reading produced: a tree when there were no problems. */
    public record Result(SourceNode root, List<Problem> problems) {
        public Result {
            problems = List.copyOf(problems);
        }
    }

    /** Reads a file; {@code display} is how messages name it. */
    public Result readFile(Path file, String display) {
        Location start = new Location(display, file, 1, 1);
        String text;
        try {
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attrs.isRegularFile()) {
                return failed(start, attrs.isDirectory() ? "is a directory, not a job file"
                        : "is not a regular file (a device, FIFO or socket): a job file must be a file");
            }
            if (attrs.size() > MAX_FILE_BYTES) {
                return failed(start, "is " + attrs.size() + " bytes; a job file may have at most " + MAX_FILE_BYTES + " bytes ("
                        + (MAX_FILE_BYTES >> 20) + " MiB)");
            }
            byte[] bytes = readAtMost(file, MAX_FILE_BYTES);
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (NoSuchFileException e) {
            return failed(start, "no such file");
        } catch (CharacterCodingException e) {
            return failed(start, "not UTF-8 text");
        } catch (IOException e) {
            return failed(start, "cannot read: " + e.getMessage());
        }
        return readText(text, display, file);
    }

    /** The largest job file read: far above any real inventory, far below the JVM's heap. */
    static final long MAX_FILE_BYTES = 8L << 20;

    /** A file's bytes, refusing one that grows past {@code max} while it is read. */
    private static byte[] readAtMost(Path file, long max) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes((int) max + 1);
            if (bytes.length > max) {
                throw new IOException("larger than " + (max >> 20) + " MiB");
            }
            return bytes;
        }
    }

    /**
     * The first line longer than {@link #MAX_LINE_CHARS}, if any: the YAML reader's time grows with
     * the square of a token's length (a 3 MiB line took 19-28 s), so such a line is refused
     * before it is read.
     */
    private static Optional<Location> longLine(String text, String display, Path path, int columnOffset) {
        int lineStart = 0;
        int line = 1;
        for (int i = 0; i <= text.length(); i++) {
            if (i == text.length() || text.charAt(i) == '\n') {
                if (i - lineStart > MAX_LINE_CHARS) {
                    return Optional.of(new Location(display, path, line, 1 + columnOffset));
                }
                lineStart = i + 1;
                line++;
            }
        }
        return Optional.empty();
    }

    /** Reads YAML text; {@code path} may be null for text that is not a file (a --set value). */
    public Result readText(String text, String display, Path path) {
        return readText(text, display, path, 0);
    }

    /** As {@link #readText(String, String, Path)}, with every column shifted right by {@code columnOffset}. */
    Result readText(String text, String display, Path path, int columnOffset) {
        Location start = new Location(display, path, 1, 1 + columnOffset);
        if (text.codePointCount(0, text.length()) > MAX_CODE_POINTS) {
            return failed(start, "file is larger than " + MAX_CODE_POINTS + " characters");
        }
        Optional<Location> longLine = longLine(text, display, path, columnOffset);
        if (longLine.isPresent()) {
            return failed(longLine.get(), "this line is longer than " + MAX_LINE_CHARS
                    + " characters; split a long value over several lines (a YAML block scalar or a list)");
        }
        Node node;
        try (Reader reader = new StringReader(text)) {
            node = newYaml().compose(reader);
        } catch (MarkedYAMLException e) {
            Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            Location at = mark == null ? start : new Location(display, path, mark.getLine() + 1, mark.getColumn() + 1 + columnOffset);
            String what = e.getProblem() == null ? e.getMessage() : e.getProblem();
            String context = e.getContext() == null ? "" : " (" + e.getContext() + ")";
            return failed(at, "YAML syntax: " + what + context);
        } catch (YAMLException e) {
            return failed(start, "YAML: " + e.getMessage());
        } catch (IOException e) {
            return failed(start, "cannot read: " + e.getMessage());
        }
        if (node == null) {
            return failed(start, "the document is empty");
        }
        Converter converter = new Converter(display, path, columnOffset);
        SourceNode root = converter.convert(node, 0);
        return new Result(converter.problems.isEmpty() ? root : null, converter.problems);
    }

    private static Yaml newYaml() {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(MAX_ALIASES);
        options.setAllowRecursiveKeys(false);
        options.setNestingDepthLimit(MAX_DEPTH);
        options.setCodePointLimit(MAX_CODE_POINTS);
        options.setProcessComments(false);
        DumperOptions dumper = new DumperOptions();
        return new Yaml(new SafeConstructor(options), new Representer(dumper), dumper, options);
    }

    private static Result failed(Location at, String message) {
        return new Result(null, List.of(new Problem(at, null, message)));
    }

    /** SafeConstructor's scalar rules (YAML 1.1 ints, floats, bools, nulls), nothing else. */
    private static final class ScalarConstructor extends SafeConstructor {
        ScalarConstructor() {
            super(new LoaderOptions());
        }

        Object construct(ScalarNode node) {
            if (node.getTag().equals(Tag.TIMESTAMP)) {
                return node.getValue(); // a date stays the text the user wrote
            }
            return constructObject(node);
        }
    }

    /** Node graph to SourceNode tree, with the safety rules of the class contract. */
    private static final class Converter {
        private final String display;
        private final Path path;
        private final int columnOffset;
        private final List<Problem> problems = new ArrayList<>();
        private final Set<Node> inProgress = Collections.newSetFromMap(new IdentityHashMap<>());
        private final ScalarConstructor scalars = new ScalarConstructor();
        private int values;
        private boolean tooBig;

        Converter(String display, Path path, int columnOffset) {
            this.display = display;
            this.path = path;
            this.columnOffset = columnOffset;
        }

        Location at(Node node) {
            Mark m = node.getStartMark();
            return new Location(display, path, m.getLine() + 1, m.getColumn() + 1 + columnOffset);
        }

        SourceNode convert(Node node, int depth) {
            if (tooBig) {
                return null;
            }
            if (++values > MAX_VALUES) {
                tooBig = true;
                problems.add(new Problem(at(node), null,
                        "the document expands to more than " + MAX_VALUES + " values (aliases nested too deeply?)"));
                return null;
            }
            if (!inProgress.add(node)) {
                problems.add(new Problem(at(node), null, "an alias refers to a value that contains it"));
                return null;
            }
            try {
                return switch (node.getNodeId()) {
                    case scalar -> scalar((ScalarNode) node);
                    case sequence -> sequence((SequenceNode) node, depth);
                    case mapping -> mapping((MappingNode) node, depth);
                    default -> {
                        problems.add(new Problem(at(node), null, "unsupported YAML node"));
                        yield null;
                    }
                };
            } finally {
                inProgress.remove(node);
            }
        }

        private boolean tagAllowed(Node node, Tag expected) {
            Tag tag = node.getTag();
            boolean ok = expected == null ? SCALAR_TAGS.contains(tag) : tag.equals(expected);
            if (!ok) {
                problems.add(new Problem(at(node), null,
                        "YAML tag " + tag + " is not allowed here: a job file holds plain maps, lists and scalars"));
            }
            return ok;
        }

        private SourceNode scalar(ScalarNode node) {
            if (!tagAllowed(node, null)) {
                return null;
            }
            Object value;
            try {
                value = scalars.construct(node);
            } catch (YAMLException | NumberFormatException e) {
                problems.add(new Problem(at(node), null, "cannot read scalar '" + node.getValue() + "'"));
                return null;
            }
            boolean plain = node.getScalarStyle() == DumperOptions.ScalarStyle.PLAIN;
            return new SourceNode.Scalar(at(node), value, plain);
        }

        private SourceNode sequence(SequenceNode node, int depth) {
            if (!tagAllowed(node, Tag.SEQ)) {
                return null;
            }
            List<SourceNode> items = new ArrayList<>();
            for (Node item : node.getValue()) {
                SourceNode converted = convert(item, depth + 1);
                if (converted == null) {
                    return null; // the problem is recorded; the tree is discarded
                }
                items.add(converted);
            }
            return new SourceNode.Sequence(at(node), items);
        }

        private SourceNode mapping(MappingNode node, int depth) {
            if (!tagAllowed(node, Tag.MAP)) {
                return null;
            }
            Map<String, SourceNode.Entry> entries = new LinkedHashMap<>();
            List<SourceNode.Mapping> merged = new ArrayList<>();
            for (NodeTuple tuple : node.getValue()) {
                Node keyNode = tuple.getKeyNode();
                if (keyNode.getTag().equals(Tag.MERGE)) {
                    merged.addAll(mergeSources(tuple.getValueNode(), depth));
                    continue;
                }
                if (!(keyNode instanceof ScalarNode key)) {
                    problems.add(new Problem(at(keyNode), null, "a key must be a plain name, not a list or map"));
                    continue;
                }
                String name = key.getValue();
                SourceNode.Entry earlier = entries.get(name);
                if (earlier != null) {
                    problems.add(new Problem(at(keyNode), null,
                            "duplicate key '" + name + "' (first at line " + earlier.keyAt().line() + ")"));
                    continue;
                }
                SourceNode converted = convert(tuple.getValueNode(), depth + 1);
                if (tooBig) {
                    return null;
                }
                entries.put(name, new SourceNode.Entry(at(keyNode), converted));
            }
            for (SourceNode.Mapping base : merged) {
                base.entries().forEach(entries::putIfAbsent);
            }
            return new SourceNode.Mapping(at(node), entries);
        }

        private List<SourceNode.Mapping> mergeSources(Node value, int depth) {
            List<Node> sources = value instanceof SequenceNode seq ? seq.getValue() : List.of(value);
            List<SourceNode.Mapping> out = new ArrayList<>();
            for (Node source : sources) {
                SourceNode converted = convert(source, depth + 1);
                if (converted instanceof SourceNode.Mapping m) {
                    out.add(m);
                } else if (converted != null) {
                    problems.add(new Problem(at(source), null, "a merge key (<<) takes a map or a list of maps"));
                }
            }
            return out;
        }
    }
}
