package org.runjob.slurm;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One node as {@code sinfo -h -N -o '%N|%o|%G|%T'} shows it: its address (NodeAddr, what other
 * nodes reach it by; node names often do not resolve), its GPUs (from Gres) and its state.
 */
record SlurmNodeInfo(String name, String address, int gpus, String state) {

    static final String FORMAT = "%N|%o|%G|%T";

    private static final Pattern GPU = Pattern.compile("(?:^|,)gpu(?::[^:,()]+)?:(\\d+)");

    /** Parses sinfo's lines; a node listed once per partition is kept once. */
    static Map<String, SlurmNodeInfo> parse(String sinfo) {
        Map<String, SlurmNodeInfo> nodes = new LinkedHashMap<>();
        for (String line : sinfo.split("\n")) {
            String[] f = line.trim().split("\\|");
            if (f.length < 4) {
                continue;
            }
            nodes.putIfAbsent(f[0], new SlurmNodeInfo(f[0], f[1], gpus(f[2]), f[3]));
        }
        return nodes;
    }

    /** GPUs in a Gres field: "gpu:2", "gpu:a100:4(S:0-1)", "gpu:a100:2,gpu:v100:1" (3); "(null)" is none. */
    static int gpus(String gres) {
        Matcher m = GPU.matcher(gres);
        int n = 0;
        while (m.find()) {
            n += Integer.parseInt(m.group(1));
        }
        return n;
    }

    /** Down, drained or failing: Slurm would not give it to a job. */
    boolean unusable() {
        String s = state.toLowerCase(Locale.ROOT);
        return s.startsWith("down") || s.startsWith("drain") || s.startsWith("fail") || s.startsWith("inval") || s.startsWith("unk");
    }
}
