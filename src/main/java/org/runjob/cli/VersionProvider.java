package org.runjob.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

import picocli.CommandLine.IVersionProvider;

/** The version Maven wrote into the jar. */
final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() throws IOException {
        Properties p = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream("/runjob-version.properties")) {
            if (in != null) {
                p.load(in);
            }
        }
        return new String[] {"runjob " + p.getProperty("version", "unknown"), "Java " + System.getProperty("java.version")};
    }
}
