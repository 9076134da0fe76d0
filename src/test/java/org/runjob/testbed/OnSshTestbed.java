package org.runjob.testbed;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A class of tests on the SSH testbed's hosts (and the Slurm cluster on them): tagged
 * {@code testbed}, and run one such class at a time, beside the classes that use this machine
 * alone, which run one at a time in the main thread (src/test/resources/junit-platform.properties).
 * The two streams share no namespace, port, GPU bus id or run index. Each test starts with no
 * node quarantined ({@link FreshQuarantine}).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("testbed")
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(OnSshTestbed.LOCK)
@ExtendWith(FreshQuarantine.class)
public @interface OnSshTestbed {

    /** The lock every class on the testbed holds, and any other class that may not run beside them. */
    String LOCK = "ssh-testbed";
}
