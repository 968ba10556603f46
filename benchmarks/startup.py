"""Start-up cost of the command line: import time and wall time of every `clinbench <command> --help`.

For every top-level command and subcommand (read from the CLI itself), plus a few commands that
do work (``version``, ``tasks list``), runs ``python -m clinbench <args>`` ``--runs`` times in
each of three ways: plain (wall time and CPU time of the process), with ``-X importtime``
(imports: the sum of the top-level imports of that run, wall clock), and under a hook that sums
the CPU time spent in top-level imports (import CPU: what ``-X importtime`` measures, minus the
time the process waits for a core, which on a loaded machine can double the clock figure). A bare
``python -c pass`` is measured in the same rounds, and the rounds interleave every command, so
load changes hit all of them alike. Prints medians, each command's wall and CPU time as a ratio
of the bare start, and its imports as a ratio of the goal (issue 17): at most 0.15 s of imports
before a command starts working.

    .venv/bin/python benchmarks/startup.py [--runs 5] [--only "run --help" --only "tasks list"] [--record]

``--record`` writes the row it measured (every ``--help``'s import CPU against the Typer app's, the
goal) into docs/performance.json (``benchmarks/figures.py``); then render the table with
``benchmarks/performance_table.py``. It measures every command, so it does not go with ``--only``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import figures  # noqa: E402  (benchmarks/figures.py: the figures store)

GOAL = 0.15  # seconds of imports before a command starts working
WORKING = [["version"], ["tasks", "list"]]  # commands that do (cheap) work, timed as they are


def command_lines() -> list[list[str]]:
    """``--help`` of the root, of every top-level command and of every subcommand, then WORKING."""
    import typer

    import clinbench.cli as cli

    root = typer.main.get_command(cli.app)

    def walk(cmd, path):
        yield [*path, "--help"]
        for name in sorted(getattr(cmd, "commands", {}) or {}):
            yield from walk(cmd.commands[name], [*path, name])

    lines = [["--help"]]
    for name in ["version", *cli.AREAS]:
        lines.extend(walk(root.commands.get(name) or cli._load(name), [name]))
    return lines + WORKING


def _imports(stderr: str) -> float:
    """Seconds of imports in ``-X importtime`` output: the sum of the top-level (cumulative) times."""
    total = 0
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        _, cumulative, name = line.split("|", 2)
        if cumulative.strip().isdigit() and not name.startswith("  "):
            total += int(cumulative)
    return total / 1e6


# Runs ``python -m module ...`` or ``python -c code ...`` with importlib's _find_and_load wrapped: CPU seconds of the
# outermost imports (nested ones are inside them), printed to stderr when the process exits.
_IMPORT_CPU = """
import atexit, runpy, sys, time
import importlib._bootstrap as bootstrap
find_and_load, state = bootstrap._find_and_load, {"depth": 0, "cpu": 0.0}
def timed(name, import_):
    if state["depth"]:
        return find_and_load(name, import_)
    state["depth"], start = 1, time.process_time()
    try:
        return find_and_load(name, import_)
    finally:
        state["depth"] = 0
        state["cpu"] += time.process_time() - start
bootstrap._find_and_load = timed
atexit.register(lambda: print(f"import-cpu {state['cpu']:.6f}", file=sys.__stderr__))
flag, target, sys.argv = sys.argv[1], sys.argv[2], [sys.argv[2], *sys.argv[3:]]
if flag == "-m":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    sys.argv[0] = "-c"
    exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})
"""
# The floor Typer itself sets: --help of a one-option Typer app (Typer's rich help imports
# rich's console, markdown and traceback modules, whatever the app).
TYPER_FLOOR = "import typer\ndef main(n: int = 1):\n    pass\ntyper.run(main)"


def _once(argv: list[str], mode: str) -> float | tuple[float, float]:
    """One process ``python argv``: mode "plain" -> (wall s, CPU s); "importtime" -> import s
    (clock); "import-cpu" -> CPU s in imports (argv is ``-m module ...`` or ``-c code ...``)."""
    # bytecode caches as an install has them (written by the warm-up round in main)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"COLUMNS": "100"}
    if mode == "import-cpu":
        cmd = [sys.executable, "-c", _IMPORT_CPU, *argv]
    else:
        cmd = [sys.executable, *(["-X", "importtime"] if mode == "importtime" else []), *argv]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    stderr = proc.stderr.read()
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if mode == "plain":
        return wall, usage.ru_utime + usage.ru_stime
    if mode == "importtime":
        return _imports(stderr)
    return float(next(line.split()[1] for line in stderr.splitlines() if line.startswith("import-cpu ")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per command and mode (medians are printed)")
    ap.add_argument("--only", action="append", default=[], metavar="ARGS",
                    help='time only this command line (quoted, e.g. "run --help"); repeatable')
    ap.add_argument("--record", action="store_true", help="write the measured row into docs/performance.json")
    a = ap.parse_args()
    if a.record and a.only:
        ap.error("--record measures every command: leave out --only")
    load_at_start = figures.load_average()
    lines = [c.split() for c in a.only] or command_lines()
    todo = [["-c", "pass"], ["-c", TYPER_FLOOR, "--help"]] + [["-m", "clinbench", *line] for line in lines]
    samples: dict[int, list[tuple[float, float, float, float]]] = {i: [] for i in range(len(todo))}
    for argv in todo:  # warm-up: writes the bytecode caches a first start compiles
        _once(argv, "plain")
    for _ in range(a.runs):  # rounds interleave every command: load changes hit all of them
        for i, argv in enumerate(todo):
            wall, cpu = _once(argv, "plain")
            samples[i].append((wall, cpu, _once(argv, "importtime"), _once(argv, "import-cpu")))

    def med(i: int, k: int) -> float:
        return statistics.median(s[k] for s in samples[i])

    bare_wall, bare_cpu = med(0, 0), med(0, 1)
    print(f"{a.runs} runs each, medians; x bare: against `python -c pass`; x goal: against {GOAL:.2f} s of imports")
    print(f"{'command':<38} {'wall s':>6} {'x bare':>6} {'cpu s':>6} {'x bare':>6} "
          f"{'imports s':>9} {'x goal':>6} {'import cpu s':>12} {'x goal':>6}")
    worst = [0.0, 0.0]
    names = ["python -c pass", "a one-option Typer app --help"] + ["clinbench " + " ".join(line) for line in lines]
    for i, name in enumerate(names):
        clock, cpu = med(i, 2), med(i, 3)
        if i >= 2:
            worst = [max(worst[0], clock), max(worst[1], cpu)]
        print(f"{name:<38} {med(i, 0):6.3f} {med(i, 0) / bare_wall:6.1f} "
              f"{med(i, 1):6.3f} {med(i, 1) / bare_cpu:6.1f} {clock:9.3f} {clock / GOAL:6.2f} "
              f"{cpu:12.3f} {cpu / GOAL:6.2f}")
    print(f"slowest imports: {worst[0]:.3f} s by the clock = {worst[0] / GOAL:.2f} x the {GOAL:.2f} s goal; "
          f"{worst[1]:.3f} s of CPU = {worst[1] / GOAL:.2f} x")
    if a.record:
        helps = [i + 2 for i, line in enumerate(lines) if line[-1] == "--help"]
        figures.record([help_row([med(i, 3) for i in helps], [med(i, 2) for i in helps], med(1, 3))],
                       figures.this_run(load_at_start))
        print(f"recorded in {figures.FIGURES}")


def help_row(import_cpu: list[float], importtime: list[float], floor: float) -> dict:
    """The table row of every ``--help``: import CPU (range, median) against the Typer app's, and the goal."""
    median = statistics.median(import_cpu)
    return {"id": "startup:help", "what": f"each of the {len(import_cpu)} `clinbench … --help`: CPU seconds in imports "
            "before work starts (medians of the runs)",
            "clinbench": f"{min(import_cpu):.2f}–{max(import_cpu):.2f} s CPU in imports, median {median:.2f} s; "
                         f"`-X importtime` median {statistics.median(importtime):.2f} s",
            "anchor": f"a one-option Typer app's `--help`: {floor:.2f} s",
            "ratio": f"{median / floor:.2f}x Typer's floor, {median / GOAL:.2f}x the goal (medians)",
            "goal": f"≤ {GOAL:.2f} s import CPU, each command (slowest {max(import_cpu):.2f} s)",
            "met": max(import_cpu) <= GOAL}


if __name__ == "__main__":
    main()
