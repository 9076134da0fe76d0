package org.runjob.spec;

/**
 * A backend's own settings, bound from its block of the job file ({@link BackendSpec#settings}).
 * The spec carries them without reading them; only the backend does ({@link JobSpec#settings}).
 */
public interface BackendSettings {

    /** The settings of a backend without a block. */
    BackendSettings NONE = new BackendSettings() {
        @Override
        public String toString() {
            return "none";
        }
    };
}
