package org.runjob.testbed;

import java.util.Map;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.runjob.run.QuarantineFile;

/**
 * Clears this user's quarantine before each test on the testbed: the tests share one state
 * directory, and a node one test lost (quarantined for the default hour) would otherwise fail
 * the next test's preflight. Both the tests' own (XDG_STATE_HOME as the build sets it) and the
 * one a submitted run's coordinator uses on a node (an SSH login as this user: HOME, no
 * XDG_STATE_HOME) are cleared. A test that wants a quarantined node makes one itself.
 */
public final class FreshQuarantine implements BeforeEachCallback {

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        QuarantineFile.clear(System.getenv(), null);
        QuarantineFile.clear(Map.of("HOME", System.getProperty("user.home")), null);
    }
}
