package org.runjob.cli;

import org.runjob.report.BuildInfo;

import picocli.CommandLine.IVersionProvider;

/** The version, commit and build time Maven wrote into the jar, and the Java that runs it. */
final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        return new String[] {BuildInfo.current().line(), "Java " + System.getProperty("java.version")};
    }
}
