"""Start-up cost of the command line: import time and wall time of every `clinbench <command> --help`.

For every top-level command and subcommand (read from the CLI itself), plus a few commands that
do work (``version``, ``tasks list``), runs ``python -m clinbench <args>`` ``--runs`` times
with ``-X importtime`` (imports: the sum of the top-level imports of that run) and ``--runs``
times without (wall time and CPU time of the process). A bare ``python -c pass`` is measured in
the same rounds, and the rounds interleave every command, so a loaded machine slows all of them
alike. Prints medians, each command's wall time as a ratio of the bare start, and its imports as
a ratio of the goal (issue 17): at most 0.15 s of imports before a command starts working.

    .venv/bin/python benchmarks/startup.py [--runs 5] [--only "run --help" --only "tasks list"]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

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


def _once(argv: list[str], importtime: bool) -> tuple[float, float, float]:
    """(wall s, CPU s, import s) of one process ``python [-X importtime] argv``."""
    env = {**os.environ, "COLUMNS": "100"}
    cmd = [sys.executable, *(["-X", "importtime"] if importtime else []), *argv]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    stderr = proc.stderr.read()
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return wall, usage.ru_utime + usage.ru_stime, _imports(stderr) if importtime else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per command and mode (medians are printed)")
    ap.add_argument("--only", action="append", default=[], metavar="ARGS",
                    help='time only this command line (quoted, e.g. "run --help"); repeatable')
    a = ap.parse_args()
    lines = [c.split() for c in a.only] or command_lines()
    bare = ["-c", "pass"]
    todo = [bare] + [["-m", "clinbench", *line] for line in lines]
    samples: dict[int, list[tuple[float, float, float]]] = {i: [] for i in range(len(todo))}
    for _ in range(a.runs):  # rounds interleave every command: load changes hit all of them
        for i, argv in enumerate(todo):
            wall, cpu, _ = _once(argv, importtime=False)
            _, _, imports = _once(argv, importtime=True)
            samples[i].append((wall, cpu, imports))

    def med(i: int, k: int) -> float:
        return statistics.median(s[k] for s in samples[i])

    base_wall, base_imports = med(0, 0), med(0, 2)
    print(f"{a.runs} runs each, medians; bare `python -c pass`: wall {base_wall:.3f} s, "
          f"imports {base_imports:.3f} s; goal: imports <= {GOAL:.2f} s")
    print(f"{'command':<40} {'wall s':>7} {'x bare':>6} {'cpu s':>6} {'imports s':>9} {'x goal':>6}")
    worst = 0.0
    for i, line in enumerate(lines, start=1):
        imports = med(i, 2)
        worst = max(worst, imports)
        print(f"{'clinbench ' + ' '.join(line):<40} {med(i, 0):7.3f} {med(i, 0) / base_wall:6.1f} "
              f"{med(i, 1):6.3f} {imports:9.3f} {imports / GOAL:6.2f}")
    print(f"slowest imports: {worst:.3f} s = {worst / GOAL:.2f} x the {GOAL:.2f} s goal")


if __name__ == "__main__":
    main()
