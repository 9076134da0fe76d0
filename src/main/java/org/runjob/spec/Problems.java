package org.runjob.spec;

import java.util.ArrayList;
import java.util.List;

/** Problems found in one document, each placed where its value (or its key) was written. */
public final class Problems {

    private final LocatedJson doc;
    private final List<Problem> found = new ArrayList<>();

    Problems(LocatedJson doc) {
        this.doc = doc;
    }

    /** A problem with the value at {@code pointer}. */
    public void at(String pointer, String message) {
        found.add(new Problem(doc.valueAt(pointer), pointer, message));
    }

    /** A problem with the key at {@code pointer} (a key that should not be there). */
    public void atKey(String pointer, String message) {
        found.add(new Problem(doc.keyAt(pointer), pointer, message));
    }

    List<Problem> list() {
        return found;
    }
}
