package org.runjob.testbackend;

import org.runjob.spec.BackendSettings;

/** The {@code procs:} block: a label the backend shows in its notes. */
public record ProcsSettings(String label) implements BackendSettings {
}
