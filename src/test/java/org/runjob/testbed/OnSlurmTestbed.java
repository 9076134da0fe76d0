package org.runjob.testbed;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A class of tests on the Slurm cluster ({@link SlurmTestbed}, on the hosts of
 * {@link SshTestbed#forSlurm()}): tagged {@code testbed}, and run one such class at a time, in a
 * third stream beside the classes {@link OnSshTestbed} and those that use this machine alone
 * (src/test/resources/junit-platform.properties). Its tests give runjob a run index of their own.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("testbed")
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(OnSlurmTestbed.LOCK)
public @interface OnSlurmTestbed {

    /** The lock every class on the Slurm cluster holds. */
    String LOCK = "slurm-testbed";
}
