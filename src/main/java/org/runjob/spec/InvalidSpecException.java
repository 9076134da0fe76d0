package org.runjob.spec;

import java.util.List;

/** A job file, or the job it composes to, has one or more problems; all of them are listed. */
public final class InvalidSpecException extends Exception {

    private final transient List<Problem> problems;

    public InvalidSpecException(List<Problem> problems) {
        super(problems.size() + (problems.size() == 1 ? " problem" : " problems"));
        if (problems.isEmpty()) {
            throw new IllegalArgumentException("an invalid spec has at least one problem");
        }
        this.problems = problems.stream().sorted(Problem.IN_FILE_ORDER).toList();
    }

    /** Every problem found, in file order. */
    public List<Problem> problems() {
        return problems;
    }
}
