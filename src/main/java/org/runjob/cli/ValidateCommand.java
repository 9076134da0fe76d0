package org.runjob.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import org.runjob.json.Json;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.spec.InvalidSpecException;
import org.runjob.spec.Problem;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** {@code runjob validate FILE...}: ok or every problem, per file; exit 2 if any file is invalid. */
@Command(name = "validate", mixinStandardHelpOptions = true,
        description = "Check job files (YAML, schema and semantic rules) without planning or contacting anything.")
final class ValidateCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Job files.")
    List<String> files;

    @Mixin
    JobOptions options;

    ValidateCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        SpecLoader loader = Jobs.loader(io);
        ArrayNode json = Json.array();
        boolean allValid = true;
        for (String file : files) {
            List<Problem> problems = List.of();
            try {
                loader.load(Path.of(file), file, options.sets);
            } catch (InvalidSpecException e) {
                problems = e.problems();
                allValid = false;
            }
            if (options.output == JobOptions.Output.json) {
                ObjectNode entry = json.addObject().put("file", file).put("valid", problems.isEmpty());
                ArrayNode list = entry.putArray("problems");
                for (Problem p : problems) {
                    list.addObject().put("file", p.at().display()).put("line", p.at().line())
                            .put("column", p.at().column()).put("pointer", p.pointer()).put("message", p.message());
                }
            } else if (problems.isEmpty()) {
                io.out().println(file + ": ok");
            } else {
                Jobs.printProblems(io, file, problems);
            }
        }
        if (options.output == JobOptions.Output.json) {
            io.out().println(Json.pretty(json));
        }
        io.out().flush();
        return allValid ? ExitCode.OK : ExitCode.INVALID;
    }
}
