package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;

/** A START far larger than one pipe buffer: 200 workers on one node, each with a 100 kB variable. */
class LargeStartTest {

    @TempDir
    Path tmp;

    @Test
    void twoHundredWorkersWithALargeVariableAllStartOnOneNode() throws Exception {
        Path job = tmp.resolve("wide.yaml");
        Files.writeString(job, "name: wide\nnodes: [{name: n1, local: true, workers: 200}]\n"
                + "entrypoint: {command: [sh, -c, 'echo \"rank $RANK of $WORLD_SIZE: ${#BIG}\"']}\n"
                + "workdir: " + tmp.resolve("work") + "\nlogs: {dir: " + tmp.resolve("runs") + "}\n"
                + "env: {BIG: " + "b".repeat(100_000) + "}\n");
        Cli r = Cli.job(job);
        assertThat(r.code()).as(r.err()).isEqualTo(0);
        Set<Integer> ranks = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\[n1/(\\d+)] rank (\\d+) of 200: 100000$").matcher(r.out());
        while (m.find()) {
            assertThat(m.group(1)).isEqualTo(m.group(2));
            ranks.add(Integer.parseInt(m.group(2)));
        }
        assertThat(ranks).hasSize(200).first().isEqualTo(0);
        assertThat(r.out().lines().count()).isEqualTo(200);
    }
}
