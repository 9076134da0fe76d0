package org.runjob.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.runjob.backends.Backends;

/**
 * Every {@code specs/invalid/NAME.yaml} fails to load with exactly the problems in {@code NAME.expected}
 * (file:line:col, pointer and message; FIXTURES stands for the fixture directory).
 */
class InvalidSpecFixturesTest {

    static final Path DIR = Path.of("src/test/resources/specs/invalid").toAbsolutePath();
    static final Map<String, String> ENV = Map.of("RUNJOB_TEST_PORT", "2222", "RUNJOB_TEST_WORD", "soon");
    private static final SchemaCheck SCHEMA = new SchemaCheck(Backends.specs());

    static List<Path> fixtures() throws IOException {
        try (Stream<Path> files = Files.list(DIR)) {
            return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
    }

    @Test
    void thereAreAtLeastThirtyInvalidCasesEachWithExpectedMessages() throws IOException {
        List<Path> fixtures = fixtures();
        assertThat(fixtures).hasSizeGreaterThanOrEqualTo(30);
        for (Path f : fixtures) {
            assertThat(expectedOf(f)).as("expected messages of %s", f.getFileName()).exists();
        }
    }

    @TestFactory
    Stream<DynamicTest> eachInvalidFileReportsExactlyItsProblems() throws IOException {
        return fixtures().stream().map(f -> DynamicTest.dynamicTest(f.getFileName().toString(), () -> {
            List<String> expected = Files.readAllLines(expectedOf(f));
            InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class,
                    () -> new SpecLoader(ENV, Backends.specs(), SCHEMA).load(f, f.getFileName().toString(), List.of()));
            assertThat(e).as("%s must be rejected", f.getFileName()).isNotNull();
            List<String> actual = e.problems().stream().map(p -> p.toString().replace(DIR.toString(), "FIXTURES")).toList();
            assertThat(actual).containsExactlyElementsOf(expected);
        }));
    }

    private static Path expectedOf(Path yaml) {
        String name = yaml.getFileName().toString();
        return yaml.resolveSibling(name.substring(0, name.length() - ".yaml".length()) + ".expected");
    }
}
