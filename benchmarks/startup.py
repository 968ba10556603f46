"""Start-up cost of the command line: wall time and import time of `clinbench <args>`.

Runs ``python -X importtime -m clinbench <args>`` ``--runs`` times and prints, per command,
the fastest wall time and the import time of that run (sum of the top-level imports). The
goal (issue 17) is at most 0.15 s of imports before a command starts working.

    .venv/bin/python benchmarks/startup.py [--runs 5] ["--help" "tasks list" ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

DEFAULT = ["--help", "version", "tasks list", "run --help", "data --help", "workspace --help"]


def measure(args: list[str], runs: int) -> tuple[float, float]:
    """(fastest wall seconds, import seconds of that run) of ``clinbench args``."""
    best = (float("inf"), 0.0)
    env = {**os.environ, "COLUMNS": "100"}
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-X", "importtime", "-m", "clinbench", *args],
                             capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        imports = sum(int(line.split("|")[1]) for line in out.stderr.splitlines()
                      if line.startswith("import time:") and line.split("|")[1].strip().isdigit()
                      and not line.split("|")[2].startswith("  ")) / 1e6
        best = min(best, (wall, imports))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commands", nargs="*", default=DEFAULT, help="command lines to time (quoted)")
    ap.add_argument("--runs", type=int, default=5, help="runs per command (the fastest is kept)")
    a = ap.parse_args()
    print(f"{'command':<22} {'wall s':>7} {'imports s':>10}  goal: imports <= 0.15 s")
    for command in a.commands:
        wall, imports = measure(command.split(), a.runs)
        print(f"{'clinbench ' + command:<22} {wall:7.3f} {imports:10.3f}")


if __name__ == "__main__":
    main()
