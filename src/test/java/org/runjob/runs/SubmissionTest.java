package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.distribute.FileList;
import org.runjob.run.QuarantineFile;

/** What submit sends the master node: written into the run folder as it arrives, never outside it. */
class SubmissionTest {

    @TempDir
    Path tmp;

    private static final QuarantineFile.Entry ENTRY = new QuarantineFile.Entry("192.0.2.2:22", "b", "lost: its link failed",
            Instant.parse("2026-12-07T07:00:00Z"), Instant.parse("2026-12-07T08:00:00Z"), "20261207-070000-ab12", "train");

    @Test
    void theJobItsFilesAndArgumentsArriveWithTheirModes() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("src"));
        Files.writeString(src.resolve("train.py"), "print(1)\n");
        Files.writeString(src.resolve("run.sh"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(src.resolve("run.sh"), PosixFilePermissions.fromString("rwxr-xr-x"));
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        Submission.send(wire, "LINE", "{\"name\": \"j\"}".getBytes(StandardCharsets.UTF_8),
                List.of(new FileList.Entry(src.resolve("train.py"), "train.py"), new FileList.Entry(src.resolve("run.sh"), "bin/run.sh")),
                List.of("--lr", "0.1"), "192.0.2.1:22", List.of(ENTRY));
        Path folder = Files.createDirectories(tmp.resolve("folder"));
        Submission s = Submission.receive(new ByteArrayInputStream(wire.toByteArray()), folder);
        assertThat(s.hosted()).isEqualTo("LINE");
        assertThat(s.args()).containsExactly("--lr", "0.1");
        assertThat(s.coordinatorMachine()).isEqualTo("192.0.2.1:22");
        assertThat(s.quarantine()).containsExactly(ENTRY);
        assertThat(folder.resolve(Submission.JOB_FILE)).hasContent("{\"name\": \"j\"}");
        assertThat(folder.resolve("files/train.py")).hasContent("print(1)");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(folder.resolve("files/bin/run.sh")))).isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(folder.resolve("files/train.py")))).isEqualTo("rw-------");
    }

    @Test
    void aFileNamedToLeaveTheFolderIsRefused() throws Exception {
        for (String name : List.of("../escape", "/etc/x", "a/../../b", "")) {
            Path folder = Files.createTempDirectory(tmp, "f");
            assertThatThrownBy(() -> Submission.receive(new ByteArrayInputStream(oneFile(name)), folder))
                    .isInstanceOf(IOException.class).hasMessageContaining("refused a file named");
            assertThat(tmp.resolve("escape")).doesNotExist();
        }
    }

    private static byte[] oneFile(String name) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(b);
        out.writeUTF("LINE");
        out.writeInt(2);
        out.write("{}".getBytes(StandardCharsets.UTF_8));
        out.writeInt(1);
        out.writeUTF(name);
        out.writeBoolean(false);
        out.writeLong(1);
        out.write('x');
        out.writeInt(0);
        out.writeUTF("");
        out.writeInt(0);
        return b.toByteArray();
    }
}
