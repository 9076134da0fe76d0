package org.runjob.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;

/** What the YAML reader refuses before it reads: a file too large, a line too long; each exit 2 with one exact message. */
class ReadLimitsTest {

    @TempDir
    Path tmp;

    @Test
    void aLineLongerThanTheLimitIsRefusedAtItsLineBeforeParsing() throws Exception {
        Path job = tmp.resolve("long.yaml");
        String value = "x".repeat(YamlReader.MAX_LINE_CHARS);
        Files.writeString(job, "name: long\nnodes: [{name: a, local: true, workers: 1}]\nentrypoint: {command: [echo, " + value + "]}\n");
        Cli r = Cli.run("validate", job.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo(job + ":3:1: this line is longer than 262144 characters; split a long value over several"
                + " lines (a YAML block scalar or a list)\n" + job + ": 1 problem\n");
    }

    @Test
    void aLineJustWithinTheLimitIsRead() throws Exception {
        Path job = tmp.resolve("within.yaml");
        String prefix = "env: {BIG: ";
        Files.writeString(job, "name: within\nnodes: [{name: a, local: true, workers: 1}]\nentrypoint: {command: [echo]}\n"
                + prefix + "b".repeat(YamlReader.MAX_LINE_CHARS - prefix.length() - 1) + "}\n");
        Cli r = Cli.run("validate", job.toString());
        assertThat(r.err()).isEqualTo(job + ":4:12: /env/BIG: BIG=... is 262136 bytes; Linux passes at most 131071 bytes per variable"
                + " to a program (MAX_ARG_STRLEN): ship large values as a file\n" + job + ": 1 problem\n");
    }

    @Test
    void aFileOverTheSizeLimitSaysItsSizeInBytes() throws Exception {
        Path job = tmp.resolve("big.yaml");
        Files.write(job, new byte[(int) YamlReader.MAX_FILE_BYTES + 1]);
        Cli r = Cli.run("validate", job.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo(job + ":1:1: is 8388609 bytes; a job file may have at most 8388608 bytes (8 MiB)\n"
                + job + ": 1 problem\n");
    }
}
