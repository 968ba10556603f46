#!/usr/bin/env python3
"""A command agent for benchmarks: the task's reference with a few cells changed, different per trial.

    perturbing_agent.py REFERENCES TASK TRIAL    (its template: '... REFERENCES {task} {trial}')

REFERENCES is a folder holding TASK.csv (the reference, exported by the benchmark) and columns.json
(task -> the value columns it may change). It writes output.csv in its working folder (the workspace):
the reference with CELLS value cells changed, chosen by a generator seeded with (TASK, TRIAL), so every
run's output is its own and a rerun writes the same bytes. Standard library only: it runs under the
sandbox's system python3.
"""

import csv
import json
import random
import sys
from pathlib import Path

CELLS = 3


def changed(cell: str) -> str:
    """A number moved by one, a blank made 0, anything else blanked."""
    if cell == "":
        return "0"
    try:
        return str(int(cell) + 1)
    except ValueError:
        pass
    try:
        return repr(float(cell) + 1.0)
    except ValueError:
        return ""


def main() -> None:
    references, task, trial = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    with (references / f"{task}.csv").open(newline="") as fh:
        header, *rows = list(csv.reader(fh))
    columns = [header.index(c) for c in json.loads((references / "columns.json").read_text())[task]]
    rng = random.Random(f"{task}:{trial}")
    for _ in range(CELLS):
        row, column = rng.randrange(len(rows)), rng.choice(columns)
        rows[row][column] = changed(rows[row][column])
    with open("output.csv", "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, *rows])
    print(json.dumps({"type": "end", "task": task, "trial": trial, "cells_changed": CELLS}))


if __name__ == "__main__":
    main()
