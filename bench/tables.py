#!/usr/bin/env python3
"""Markdown tables for docs/benchmarks.md from the benches' --json output, headed by the machine,
commit and date each file records, so a table in the docs is never typed by hand.

  bench/tables.py start.json [more.json ...]   one column per file (bench/start.py --json): median
                                              (min-max) wall s, median CPU-s, and the ratio to
                                              `java -version` of the same run
  bench/tables.py launch.json [more.json ...]  the rows of bench/launch.py --json, one table per file
  bench/tables.py OTHER.json [more.json ...]   any other bench's rows, one table per file, a column per key
Usage: bench/tables.py FILE.json [FILE.json ...]
"""
import json
import sys


def header(runs):
    return "; ".join(f"{r.get('commit', '?')[:7]}, {r.get('date', '?')}, {r.get('machine') or str(r.get('cpus', '?')) + ' cores'}, "
                     f"{r.get('runs', '?')} rounds" for r in runs)


def start(runs):
    commands = [row["command"] for row in runs[0]["rows"]]
    out = ["| command | " + " | ".join(f"{r.get('commit', '?')[:7]}" for r in runs) + " |",
           "|---|" + "---|" * len(runs)]
    for c in commands:
        cells = []
        for r in runs:
            row = next((x for x in r["rows"] if x["command"] == c), None)
            cells.append("" if row is None else f"{row['wall_median']:.3f} s ({row['wall_min']:.3f}-{row['wall_max']:.3f}), "
                                                f"{row['cpu_median']:.3f} CPU-s, {row['ratio_to_java_version']:.1f}x")
        out.append(f"| {c} | " + " | ".join(cells) + " |")
    return out


def launch(run):
    cols = run.get("columns") or {k: k.replace("_", " ") for row in run["rows"] for k in row}
    out = ["| " + " | ".join(cols.values()) + " |", "|" + "---|" * len(cols)]
    for row in run["rows"]:
        out.append("| " + " | ".join(str(row.get(k, "")) for k in cols) + " |")
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = []
    for path in sys.argv[1:]:
        with open(path) as f:
            runs.append(json.load(f))
    kinds = {r["bench"] for r in runs}
    if len(kinds) != 1:
        sys.exit(f"files of several benches: {sorted(kinds)}")
    kind = kinds.pop()
    if kind == "start":
        print(f"<!-- bench/tables.py: {header(runs)} -->")
        print("\n".join(start(runs)))
    else:
        for i, run in enumerate(runs):
            print(("\n" if i else "") + f"<!-- bench/tables.py: {header([run])} -->")
            print("\n".join(launch(run)))


if __name__ == "__main__":
    main()
