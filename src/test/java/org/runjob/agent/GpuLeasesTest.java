package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.protocol.Lease;
import org.runjob.testbed.Testbed;

/** The lease directory and files: made safely, never followed through a link, refused when others could tamper with them. */
class GpuLeasesTest {

    @TempDir
    Path tmp;

    private static Lease.Slot slot(int index, String bus) {
        return new Lease.Slot(index, bus);
    }

    @Test
    void theDirectoryIsMadeStickyAndAPickLeasesTheFirstFreeOnes() throws Exception {
        Path dir = tmp.resolve("leases");
        GpuLeases leases = new GpuLeases(Map.of(GpuLeases.VARIABLE, dir.toString()));
        assertThat(leases.handle(Lease.Request.pick(2, "job", "run-1", List.of(slot(3, "0000:04:00"), slot(0, "0000:01:00"), slot(2, "0000:03:00")))))
                .isEqualTo(new Lease.Answer(List.of(3, 0), Map.of(), List.of(), Optional.empty()));
        assertThat((Integer) Files.getAttribute(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777).isEqualTo(01777);
        assertThat(Files.readString(dir.resolve("0000-04-00.lease"))).startsWith("run run-1 of job job (user ");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("0000-01-00.lease"))))
                .isEqualTo("rw-rw-rw-");
        // the same process asking again holds them already; a query from it sees them free (its own)
        assertThat(leases.handle(Lease.Request.hold("job", "run-1", List.of(slot(0, "0000:01:00")))).leased()).containsExactly(0);
    }

    @Test
    void aPickThatGetsTooFewReleasesWhatItTook() throws Exception {
        Path dir = tmp.resolve("leases");
        GpuLeases leases = new GpuLeases(Map.of(GpuLeases.VARIABLE, dir.toString()));
        Files.createDirectory(dir);
        Files.setAttribute(dir, "unix:mode", 01777);
        Files.createSymbolicLink(dir.resolve("0000-02-00.lease"), tmp.resolve("elsewhere"));
        assertThat(leases.handle(Lease.Request.pick(2, "job", "r", List.of(slot(0, "0000:01:00"), slot(1, "0000:02:00")))).error().orElseThrow())
                .startsWith("lease of GPU 1 (0000:02:00): ");
        assertThat(tmp.resolve("elsewhere")).doesNotExist();
        // GPU 0 was released: another instance (as another run would) gets it
        assertThat(new GpuLeases(Map.of(GpuLeases.VARIABLE, dir.toString())).handle(Lease.Request.query(List.of(slot(0, "0000:01:00"))))
                .free()).containsExactly(0);
    }

    @Test
    void aDirectoryAnotherUserOwnsIsRefused() throws Exception {
        Testbed.require("root".equals(System.getProperty("user.name")), "root (to give a directory to another user)");
        Path dir = Files.createDirectory(tmp.resolve("theirs"));
        Files.setAttribute(dir, "unix:mode", 0777);
        Files.setAttribute(dir, "unix:uid", 65534);
        assertThat(new GpuLeases(Map.of(GpuLeases.VARIABLE, dir.toString())).handle(Lease.Request.pick(1, "job", "r", List.of(slot(0, "0000:01:00"))))
                .error()).contains("the GPU lease directory " + dir + " is owned by uid 65534 with mode 777: it must be root's or yours,"
                        + " and mode 1777 (or private to you)");
    }
}
