package org.runjob.runtime.testonly;

import java.util.ArrayList;
import java.util.List;

import org.runjob.runtime.Container;
import org.runjob.runtime.ImageCheck;
import org.runjob.runtime.WorkerRuntime;
import org.runjob.runtime.WorkerStartArgs;

/**
 * A worker runtime that lives only in the test sources, registered by one line in the tests'
 * {@code META-INF/services}: {@code env RUNJOB_TEST_IMAGE=IMAGE OPTIONS... ARGV...}, its "image" a
 * file that must exist on the node. It is in the agent's package range, so the agent a test
 * starts (merged from the class path) has it too.
 */
public final class EnvRuntime implements WorkerRuntime {

    @Override
    public String name() {
        return "env";
    }

    @Override
    public List<String> argv(Container c, WorkerStartArgs s) {
        List<String> out = new ArrayList<>(List.of(program(), "RUNJOB_TEST_IMAGE=" + c.image(), "RUNJOB_TEST_TOKEN=" + s.token()));
        out.addAll(c.options());
        out.addAll(s.argv());
        return out;
    }

    @Override
    public ImageCheck imageCheck(String image) {
        return new ImageCheck.File(image);
    }
}
