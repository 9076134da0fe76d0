package org.runjob.preflight;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.jcraft.jsch.Session;

import org.runjob.agent.NodeJvm;
import org.runjob.agent.gpu.GpuInventory;
import org.runjob.distribute.RemotePaths;
import org.runjob.transport.RemoteExec;
import org.runjob.transport.SshException;

/**
 * Asks a node for its GPUs by running {@code runjob probe gpus} there (over SSH, or as a child
 * process for a local node), so that JCuda's native code never runs inside runjob itself.
 */
public final class GpuInventories {

    private GpuInventories() {
    }

    public static GpuInventory remote(Session session, String workdir) {
        try {
            RemoteExec.Result r = RemoteExec.run(session, NodeJvm.argv("java", RemotePaths.agentJar(workdir), "probe", "gpus"), 60_000);
            return parse(r.stdout(), r.stderr());
        } catch (SshException e) {
            return GpuInventory.none("cannot probe: " + e.getMessage());
        }
    }

    public static GpuInventory local() {
        List<String> cmd = NodeJvm.local("probe", "gpus");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return GpuInventory.none("the GPU probe did not answer within 60 s");
            }
            return parse(out, "");
        } catch (IOException e) {
            return GpuInventory.none("cannot probe: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return GpuInventory.none("interrupted");
        }
    }

    private static GpuInventory parse(String stdout, String stderr) {
        String line = stdout.strip();
        if (!line.startsWith("{")) {
            return GpuInventory.none("the GPU probe failed: " + (stderr.isBlank() ? line : stderr.strip()));
        }
        try {
            return GpuInventory.fromJson(line);
        } catch (RuntimeException e) {
            return GpuInventory.none("the GPU probe answered nonsense: " + e.getMessage());
        }
    }
}
