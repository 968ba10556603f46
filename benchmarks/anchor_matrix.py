"""benchmarks/anchors.py over a matrix of synthetic databases (seeds x knob sets) and perturbed demos.

One line per database: the m4bench profile against M4's own pipeline (tables equal, of them empty
in M4's build; references at 1.0 with every cell equal; the tie-aligned every-column figures) and
the mimic-code profile against mimic-code, with the seconds the run took. Each run's full output is
kept beside the summary (``--out``); the databases are deleted after each run.

    .venv/bin/python benchmarks/anchor_matrix.py --mimic-code ~/src/mimic-code --m4 ~/src/m4 --out DIR \
        [--demo-db RAW.duckdb] default:300:0 all1:300:1 stress:500:4 demo:1 ...

A configuration is ``KNOBS:PATIENTS:SEED`` (KNOBS one of the sets below) or ``demo:PERTURB_SEED``
(the raw demo database of ``--demo-db``, damaged by ``anchors.py --perturb``); ``:ties`` after either
adds ``--perturb-ties`` with that seed (same-time rows with other values: every tie is put to the test).
``verdict`` is anchors.py's m4bench verdict: clinbench equals a build M4's SQL can give.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

KNOB_SETS = {
    "default": {},
    "all1": dict(septic=1, ventilated=1, pressors=1, aki=1, crrt=1, liver=1),
    "all0": dict(septic=0, ventilated=0, pressors=0, aki=0, crrt=0, liver=0, quirks=0),
    "quirks1": dict(quirks=1.0),
    "stress": dict(septic=0.9, ventilated=0.9, pressors=0.8, aki=0.9, crrt=0.5, liver=0.6, quirks=0.4),
}
FIGURES = {  # label -> the line of anchors.py's output it is read from: (compared, equal)
    "m4 tables": r"M4 pipeline tables clinbench builds: (\d+); equal row for row: (\d+)",
    "m4 refs": r"over M4's own tables \(profile m4bench\): (\d+); [^:]*: (\d+)",
    "aligned tables": r"M4 pipeline tables \(tie-aligned\) clinbench builds: (\d+); equal row for row on every column: (\d+)",
    "aligned refs": r"over M4's tie-aligned tables, every column \(profile m4bench\): (\d+); [^:]*: (\d+)",
    "mimic-code tables": r"mimic-code tables clinbench builds: (\d+); equal row for row: (\d+)",
    "mimic-code refs": r"over mimic-code's tables \(profile mimic-code\): (\d+); [^:]*: (\d+)",
}


def configuration(item: str, demo_db: Path | None) -> tuple[str, list[str]]:
    if item.endswith(":ties"):  # then --perturb-ties with the configuration's seed
        label, args = configuration(item.removesuffix(":ties"), demo_db)
        return f"{label}-ties", [*args, "--perturb-ties", item.removesuffix(":ties").rsplit(":", 1)[1]]
    kind, *rest = item.split(":")
    if kind == "demo":
        if demo_db is None or len(rest) != 1:
            raise SystemExit(f"error: {item}: demo:PERTURB_SEED needs --demo-db RAW.duckdb")
        return f"demo-p{rest[0]}", ["--db", str(demo_db), "--perturb", rest[0]]
    if kind not in KNOB_SETS or len(rest) != 2:
        raise SystemExit(f"error: {item}: write KNOBS:PATIENTS:SEED with KNOBS one of {', '.join(KNOB_SETS)}, or demo:SEED")
    args = ["--patients", rest[0], "--seed", rest[1]]
    for name, share in KNOB_SETS[kind].items():
        args += ["--knob", f"{name}={share}"]
    return f"{kind}-n{rest[0]}-s{rest[1]}", args


def summary(label: str, text: str, rc: int, seconds: float) -> str:
    parts = []
    for name, pattern in FIGURES.items():
        m = re.search(pattern, text)
        parts.append(f"{name} {m.group(2)}/{m.group(1)}" if m else f"{name} ?")
    verdict = re.search(r"m4bench verdict: (\w+)", text)
    parts.insert(0, f"verdict {verdict.group(1) if verdict else '?'}")
    empty = re.search(r"of which empty in M4's build \(compared trivially\): (\d+)", text)
    ties = re.findall(r"(\w+) +\(.*?\): (\d+) keys tied", text)
    return (f"{label}: exit {rc}; {'; '.join(parts)}; empty in M4's {empty.group(1) if empty else '?'}; "
            f"tied keys {', '.join(f'{t} {n}' for t, n in ties) or '?'}; {seconds:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mimic-code", type=Path, required=True)
    parser.add_argument("--m4", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True, help="folder for each run's output and summary.txt")
    parser.add_argument("--demo-db", type=Path, help="the raw MIMIC-IV demo database (clinbench data load) for demo:SEED")
    parser.add_argument("configurations", nargs="+")
    args = parser.parse_args()
    runs = [configuration(item, args.demo_db) for item in args.configurations]
    args.out.mkdir(parents=True, exist_ok=True)
    script = Path(__file__).resolve().parent / "anchors.py"
    failed = 0
    for label, extra in runs:
        work = args.out / label
        started = time.perf_counter()
        done = subprocess.run([sys.executable, str(script), "--mimic-code", str(args.mimic_code), "--m4", str(args.m4),
                               "--eicu-patients", "0", "--work", str(work), *extra], capture_output=True, text=True)
        seconds = time.perf_counter() - started
        text = done.stdout + done.stderr
        (args.out / f"{label}.log").write_text(text, encoding="utf-8")
        line = summary(label, text, done.returncode, seconds)
        print(line, flush=True)
        with open(args.out / "summary.txt", "a", encoding="utf-8") as f:
            f.write(line + "\n")
        for db in work.glob("*.duckdb"):
            db.unlink()
        failed += done.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
