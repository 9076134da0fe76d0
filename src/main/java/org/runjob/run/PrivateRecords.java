package org.runjob.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;

/**
 * One user's small JSON records, one file each, in a directory of its own ({@link RunIndex},
 * {@link QuarantineFile}): the directory is made mode 700 and used only while it is this user's
 * and private ({@link Owned#privateDir}); a record is replaced whole (written aside, then renamed),
 * so readers never see half of one; a record that is a link, hidden, or not JSON is not read.
 */
final class PrivateRecords {

    private PrivateRecords() {
    }

    /** Writes {@code record} as {@code dir/name}, making {@code dir} (mode 700) when it is not there. */
    static void replace(Path dir, String name, JsonNode record) throws IOException {
        Files.createDirectories(dir.getParent());
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (FileAlreadyExistsException ex) {
            // made before: judged below
        }
        Optional<String> problem = Owned.privateDir(dir);
        if (problem.isPresent()) {
            throw new IOException(problem.get());
        }
        Path tmp = Files.createTempFile(dir, ".new-", ".json");
        try {
            Files.writeString(tmp, Json.MAPPER.writeValueAsString(record), StandardCharsets.UTF_8);
            Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** Every record in {@code dir}, in no order; none when {@code dir} is missing, a link, or not private. */
    static List<JsonNode> read(Path dir) {
        List<JsonNode> out = new ArrayList<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) || Owned.privateDir(dir).isPresent()) {
            return out;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (!name.endsWith(".json") || name.startsWith(".") || Files.isSymbolicLink(f)) {
                    continue;
                }
                try {
                    out.add(Json.read(f));
                } catch (IOException | RuntimeException ex) {
                    // a damaged record: not read
                }
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }
}
