package org.runjob.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.distribute.AgentBundle;
import org.runjob.distribute.Sha256;
import org.runjob.protocol.NodeJvm;

/** A jar pinned by content: a copy named by its SHA-256, never the file a rebuild replaces. */
class PinnedJarTest {

    @TempDir
    Path tmp;

    @Test
    void aCopyNamedByItsSha256OutlivesAChangeToTheOriginal() throws Exception {
        Path jar = Files.writeString(tmp.resolve("runjob.jar"), "version one");
        Path cache = tmp.resolve("cache/runjob/agents");
        PinnedJar pinned = PinnedJar.pin(jar, cache, "Main");
        String sha = Sha256.of(jar);
        assertThat(pinned.path()).isEqualTo(cache.resolve(sha + ".jar"));
        assertThat(pinned.sha256()).isEqualTo(sha);
        assertThat(pinned.size()).isEqualTo(11);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pinned.path()))).isEqualTo("rw-------");
        Files.writeString(jar, "version two, rebuilt");
        assertThat(Files.readString(pinned.path())).isEqualTo("version one");
        assertThat(Sha256.of(pinned.path())).isEqualTo(pinned.sha256());
        // the rebuilt jar gets a copy of its own; pinning version one again finds the first copy
        PinnedJar two = PinnedJar.pin(jar, cache, "Main");
        assertThat(two.path()).isEqualTo(cache.resolve(Sha256.of(jar) + ".jar"));
        assertThat(Files.readString(two.path())).isEqualTo("version two, rebuilt");
        Path again = Files.writeString(tmp.resolve("again.jar"), "version one");
        assertThat(PinnedJar.pin(again, cache, "Main")).isEqualTo(pinned);
    }

    /** A jar merged from class directories is merged once per state of the class path, and again after a class changes. */
    @Test
    void aMergedJarIsMadeOncePerStateOfTheClassPath() throws Exception {
        Path classes = Files.createDirectories(tmp.resolve("classes/org"));
        Path one = Files.writeString(classes.resolve("A.class"), "a");
        String classPath = tmp.resolve("classes") + File.pathSeparator + tmp.resolve("absent.jar");
        Path cache = tmp.resolve("cache/runjob/agents");
        int[] merges = {0};
        PinnedJar.JarMaker maker = () -> {
            merges[0]++;
            return Files.writeString(tmp.resolve("made-" + merges[0] + ".jar"), "merged " + Files.readString(one));
        };
        PinnedJar first = PinnedJar.pinMerged("runjob", maker, "Main", cache, classPath);
        PinnedJar second = PinnedJar.pinMerged("runjob", maker, "Main", cache, classPath);
        assertThat(merges[0]).isEqualTo(1);
        assertThat(second).isEqualTo(first);
        assertThat(Files.readString(second.path())).isEqualTo("merged a");
        assertThat(PinnedJar.pinMerged("agent", maker, "Main", cache, classPath)).isEqualTo(first); // another kind: merged again, same bytes
        assertThat(merges[0]).isEqualTo(2);
        Files.writeString(one, "b");
        Files.setLastModifiedTime(one, FileTime.fromMillis(Files.getLastModifiedTime(one).toMillis() + 5000));
        PinnedJar rebuilt = PinnedJar.pinMerged("runjob", maker, "Main", cache, classPath);
        assertThat(merges[0]).isEqualTo(3);
        assertThat(Files.readString(rebuilt.path())).isEqualTo("merged b");
        try (var notes = Files.list(cache)) {
            assertThat(notes.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("classpath-"))).hasSize(3);
        }
    }

    @Test
    void aCacheOthersCanWriteIsNotUsed() throws Exception {
        Path jar = Files.writeString(tmp.resolve("runjob.jar"), "bytes");
        Path open = Files.createDirectories(tmp.resolve("open/runjob/agents"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        PinnedJar pinned = PinnedJar.pin(jar, open, "Main");
        assertThat(pinned.path().getParent()).isNotEqualTo(open);
        assertThat(Files.readString(pinned.path())).isEqualTo("bytes");
        try (var left = Files.list(open)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void jarsNothingPinnedForTwoWeeksGoAndTheCurrentOneStays() throws Exception {
        Path cache = Files.createDirectories(tmp.resolve("cache/runjob/agents"));
        Path old = Files.writeString(cache.resolve("a".repeat(64) + ".jar"), "old");
        Path oldArchive = Files.writeString(cache.resolve("a".repeat(64) + ".jsa"), "old");
        Path recent = Files.writeString(cache.resolve("b".repeat(64) + ".jar"), "recent");
        FileTime longAgo = FileTime.fromMillis(System.currentTimeMillis() - TimeUnit.DAYS.toMillis(PinnedJar.KEEP_DAYS + 1));
        Files.setLastModifiedTime(old, longAgo);
        Files.setLastModifiedTime(oldArchive, longAgo);
        PinnedJar pinned = PinnedJar.pin(Files.writeString(tmp.resolve("runjob.jar"), "now"), cache, "Main");
        assertThat(old).doesNotExist();
        assertThat(oldArchive).doesNotExist();
        assertThat(recent).exists();
        assertThat(pinned.path()).exists();
    }

    @Test
    void aJarMadeForThePinIsDeletedOnceCopiedSoAKilledRunjobLeavesNoneBehind() throws Exception {
        Path made = AgentBundle.agentJar();
        assertThat(made).exists();
        PinnedJar pinned = PinnedJar.pinMade(made, PinnedJar.cacheDir(System.getenv()), NodeJvm.AGENT_MAIN);
        assertThat(made).doesNotExist();
        assertThat(pinned.path()).exists();
        assertThat(Sha256.of(pinned.path())).isEqualTo(pinned.sha256());
        assertThat(pinned.main()).isEqualTo("org.runjob.agent.AgentMain");
    }
}
