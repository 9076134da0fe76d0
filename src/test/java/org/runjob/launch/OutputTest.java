package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;

/** Worker output through real agents: nothing lost, reordered, torn or altered. */
class OutputTest {

    @TempDir
    Path tmp;

    @Test
    void fourWorkersOfAQuarterMillionLinesEachArriveWholeAndInOrder() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        int lines = 250_000;
        Path job = jobs.job("lines", "lines.py", 2, 2, Map.of("LINES", Integer.toString(lines)), 2, 0);
        Cli r = jobs.runInProcess(job, "--ranks", "0");
        assertThat(r.code()).isZero();
        Path folder = jobs.runFolder("lines");
        for (int rank = 0; rank < 4; rank++) {
            StringBuilder expected = new StringBuilder();
            for (int i = 0; i < lines; i++) {
                expected.append("rank ").append(rank).append(" line ").append(i).append('\n');
            }
            String file = Files.readString(folder.resolve("rank-" + rank + ".log"));
            // stdout and stderr interleave in the rank file: its stdout lines alone must be exactly the expected ones
            String stdoutOnly = String.join("", file.lines().filter(l -> l.contains(" line ")).map(l -> l + "\n").toList());
            assertThat(stdoutOnly).as("rank %d stdout", rank).isEqualTo(expected.toString());
            assertThat(file.lines().filter(l -> l.contains(" err ")).count()).isEqualTo(lines / 1000);
        }
        Pattern line = Pattern.compile("\\[(n[12])/(\\d)(:err)?] rank (\\d) (line|err) (\\d+)");
        int[] next = new int[4];
        int[] nextErr = new int[4];
        long count = 0;
        for (String l : Files.readAllLines(folder.resolve("all.log"))) {
            Matcher m = line.matcher(l);
            assertThat(m.matches()).as("all.log line is whole: %s", l).isTrue();
            int rank = Integer.parseInt(m.group(2));
            assertThat(m.group(4)).isEqualTo(m.group(2));
            assertThat(m.group(1)).isEqualTo(rank < 2 ? "n1" : "n2");
            int i = Integer.parseInt(m.group(6));
            if (m.group(5).equals("line")) {
                assertThat(m.group(3)).isNull();
                assertThat(i).isEqualTo(next[rank]++);
            } else {
                assertThat(m.group(3)).isEqualTo(":err");
                assertThat(i).isEqualTo(nextErr[rank]);
                nextErr[rank] += 1000;
            }
            count++;
        }
        assertThat(next).containsExactly(lines, lines, lines, lines);
        assertThat(count).isEqualTo(4L * (lines + lines / 1000));
        // --ranks 0: the console shows rank 0 only
        assertThat(r.out().lines().filter(l -> !l.startsWith("[n1/0")).count()).isZero();
        assertThat(r.out().lines().count()).isEqualTo(lines + lines / 1000);
    }

    @Test
    void longLinesInvalidUtf8FrameLookalikesAndMissingNewlinesArriveIntact() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("bytes", "bytes.py", 1, 1, Map.of(), 2, 0);
        Cli r = jobs.runInProcess(job);
        assertThat(r.code()).isZero();
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.write("x".repeat(1024 * 1024).getBytes(StandardCharsets.US_ASCII));
        expected.write('\n');
        expected.write(new byte[] {'b', 'a', 'd', ' ', 'u', 't', 'f', '8', ':', ' ', (byte) 0xff, (byte) 0xfe, (byte) 0xc3, 0x28});
        expected.write(" end\n".getBytes(StandardCharsets.US_ASCII));
        expected.write(new byte[] {12, 0, 0, 0, 0, 0, 0, 0, 4});
        expected.write(new byte[] {'p', 'i', 'n', 'g', 0x0e, 0, 0, 0, 1, '\n'});
        expected.write("rank 0 no newline at the end".getBytes(StandardCharsets.US_ASCII));
        byte[] stdout = expected.toByteArray();
        byte[] stderr = "stderr without newline \u00ff".getBytes(StandardCharsets.ISO_8859_1);
        byte[] file = Files.readAllBytes(jobs.runFolder("bytes").resolve("rank-0.log"));
        // streams interleave at line boundaries; both end without a newline, so both partial lines
        // are written when the worker ends, stdout's first: the file is exactly stdout then stderr
        ByteArrayOutputStream both = new ByteArrayOutputStream();
        both.write(stdout);
        both.write(stderr);
        assertThat(file).isEqualTo(both.toByteArray());
        byte[] all = Files.readAllBytes(jobs.runFolder("bytes").resolve("all.log"));
        // the 1 MiB line is split in all.log into pieces of 64 KiB, each prefixed
        List<String> allLines = new String(all, StandardCharsets.ISO_8859_1).lines().toList();
        assertThat(allLines.stream().filter(l -> l.startsWith("[n1/0] xxx")).count()).isEqualTo(16);
        assertThat(allLines).contains("[n1/0] rank 0 no newline at the end", "[n1/0:err] stderr without newline \u00ff");
        assertThat(indexOf(all, new byte[] {'[', 'n', '1', '/', '0', ']', ' ', 'b', 'a', 'd', ' ', 'u', 't', 'f', '8', ':', ' ',
            (byte) 0xff, (byte) 0xfe, (byte) 0xc3, 0x28})).isGreaterThanOrEqualTo(0);
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
