package org.runjob.report;

import java.util.List;
import java.util.Optional;

import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;

/**
 * What torch's {@code @record} writes to TORCHELASTIC_ERROR_FILE when a worker raises:
 * {@code {"message": {"message": "ValueError: ...", "extraInfo": {"py_callstack": "Traceback ...",
 * "timestamp": "..."}}}} (torch.distributed.elastic.multiprocessing.errors). A plain string
 * {@code message} is accepted too.
 */
record ErrorFile(String message, List<String> traceback) {

    static Optional<ErrorFile> parse(String json) {
        try {
            JsonNode root = Json.read(json);
            JsonNode m = root.path("message");
            if (m.isString()) {
                return Optional.of(new ErrorFile(m.stringValue(), List.of()));
            }
            String message = m.path("message").asString("");
            if (message.isEmpty()) {
                return Optional.empty();
            }
            String stack = m.path("extraInfo").path("py_callstack").asString("");
            return Optional.of(new ErrorFile(message, stack.isBlank() ? List.of() : stack.strip().lines().toList()));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }
}
