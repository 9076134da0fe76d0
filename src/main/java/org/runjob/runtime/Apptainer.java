package org.runjob.runtime;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * apptainer: {@code apptainer exec --nv --cleanenv --bind DIR --pwd DIR [--bind MOUNT]...
 * OPTIONS... IMAGE ARGV...}. The worker is the client's own process tree (no daemon), so the agent
 * stops it as any worker; its variables go in as {@code APPTAINERENV_NAME}, as
 * {@code --cleanenv} passes nothing else. The image is a file on the node, or a URL apptainer
 * fetches itself.
 */
public final class Apptainer implements WorkerRuntime {

    @Override
    public String name() {
        return "apptainer";
    }

    @Override
    public List<String> argv(Container c, WorkerStartArgs s) {
        List<String> out = new ArrayList<>(List.of(program(), "exec", "--nv", "--cleanenv", "--bind", s.dir(), "--pwd", s.dir()));
        s.more().forEach(m -> out.addAll(List.of("--bind", m)));
        c.mounts().forEach(m -> out.addAll(List.of("--bind", m)));
        out.addAll(c.options());
        out.add(c.image());
        out.addAll(s.argv());
        return out;
    }

    @Override
    public Map<String, String> clientEnvironment(Collection<String> names, Map<String, String> env) {
        Map<String, String> out = new LinkedHashMap<>();
        names.stream().filter(env::containsKey).forEach(n -> out.put("APPTAINERENV_" + n, env.get(n)));
        return out;
    }

    @Override
    public ImageCheck imageCheck(String image) {
        return image.contains("://") ? new ImageCheck.Unchecked() : new ImageCheck.File(image);
    }
}
