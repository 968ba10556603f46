"""Whether a change to the concept SQL leaves every table it builds identical: the check behind a rewrite for speed.

The anchor tests compare numbers to 1e-6, which a rewrite that reorders a floating-point sum passes while a
threshold on that sum (``uo_tm_6hr >= 6``) flips for some stay of real data. This check is stricter: it builds
every table (``concepts build --all``: concepts, task references and variants; helpers, tables of a base
built before they were part of their readers' statements, are not compared themselves) of each reference
profile with this checkout and with git revision ``--base``, on one synthetic MIMIC-IV database, and compares
each table's column names and types, row count and an order-free digest of its rows (``manifest.table_hash``:
the sum of every row's hash, so each bit of each value counts, and row order does not). It prints one line per table that differs
and exits 1 when any does.

Both builds run in fresh processes with their own source tree on ``PYTHONPATH`` and the same DuckDB; the
base tree is a detached ``git worktree`` in a temporary folder, removed at the end. Each build also runs with
``--workers`` builders (default 2; pass several, e.g. ``--workers 1 2``, to check that the number of builders
changes nothing either).

Usage: .venv/bin/python benchmarks/layer_identity.py --base REV [--patients 2000] [--seed 0]
           [--profile NAME ...] [--workers N ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# run in the child, with the tree under test: build everything, print the tables built as JSON
_CHILD = """
import json, sys
from clinbench.concepts.build import build_concepts
results = build_concepts(sys.argv[1], targets=True, profile=sys.argv[2], workers=int(sys.argv[3]))
print(json.dumps([r.name for r in results if r.status != "skipped"]))
"""


def _build(tree: Path, raw: Path, work: Path, profile: str, workers: int) -> dict:
    db = work / f"{tree.name}-{profile}-{workers}.duckdb"
    shutil.copyfile(raw, db)
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), CLINBENCH_CACHE=str(work / f"cache-{tree.name}"))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, str(db), profile, str(workers)], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the build with {tree} ({profile}, {workers} builders) failed: {done.stderr.strip()[-600:]}")
    print(f"  built {profile} with {tree.name} ({workers} builders) in {time.perf_counter() - started:.1f} s", flush=True)
    built = json.loads(done.stdout.strip().splitlines()[-1])
    try:
        return _digests(db, built)
    finally:
        db.unlink()


def _digests(db: Path, tables: list[str]) -> dict:
    """Each table's columns and types, and its rows and content hash as the reference manifest takes them
    (``manifest.table_hash``), read by this checkout whichever tree built the file."""
    from clinbench.concepts.manifest import table_hash
    from clinbench.duck import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        digests = {}
        for name in tables:
            columns = con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name || '.' || "
                                  "table_name = ? ORDER BY column_index", [name]).fetchall()
            rows, digest = table_hash(con, name)
            digests[name] = {"columns": [list(c) for c in columns], "rows": rows, "digest": digest}
        return digests
    finally:
        con.close()


def _differences(base: dict, ours: dict, helpers: frozenset[str]) -> list[str]:
    """What differs; a helper table only the base built is not a difference (``helpers``: this checkout's
    helpers, part of the statements that read them here, whose tables are compared instead)."""
    lines = [f"{name}: only in the base build" for name in sorted(set(base) - set(ours) - helpers)]
    lines += [f"{name}: only in this build" for name in sorted(set(ours) - set(base))]
    for name in sorted(set(base) & set(ours)):
        a, b = base[name], ours[name]
        if a["columns"] != b["columns"]:
            lines.append(f"{name}: columns differ: {_column_change(a['columns'], b['columns'])}")
        elif a["rows"] != b["rows"]:
            lines.append(f"{name}: {b['rows']} rows, base {a['rows']}")
        elif a["digest"] != b["digest"]:
            lines.append(f"{name}: same {a['rows']} rows counted, different values")
    return lines


def _column_change(base: list, ours: list) -> str:
    """What changed between two ``[name, type]`` lists, column by column (``-`` absent)."""
    theirs, mine = dict(map(tuple, base)), dict(map(tuple, ours))
    names = list(theirs) + [n for n in mine if n not in theirs]
    changed = [f"{n} {theirs.get(n, '-')} -> {mine.get(n, '-')}" for n in names if theirs.get(n) != mine.get(n)]
    return ", ".join(changed) or "same columns in another order"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="git revision to compare with (e.g. HEAD, main~3)")
    parser.add_argument("--patients", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="append", help="reference profile (repeatable; default: every profile)")
    parser.add_argument("--workers", type=int, nargs="+", default=[2], help="builders of each build (default 2)")
    args = parser.parse_args()

    from clinbench.concepts.catalog import helper_tables
    from clinbench.concepts.profiles import PROFILES
    from clinbench.ehr.synth import synth_mimic_iv

    profiles = args.profile or list(PROFILES)
    unknown = sorted(set(profiles) - set(PROFILES))
    if unknown:
        parser.error(f"no profile named {', '.join(unknown)} (profiles: {', '.join(PROFILES)})")
    work = Path(tempfile.mkdtemp(prefix="cb-identity-"))
    base = work / "base"
    try:
        added = subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(base), args.base],
                               capture_output=True, text=True)
        if added.returncode != 0:
            parser.error(f"--base {args.base}: {added.stderr.strip().splitlines()[-1]}")
        raw = work / "raw.duckdb"
        synth_mimic_iv(raw, patients=args.patients, seed=args.seed)
        print(f"{args.patients:,} synthetic patients (seed {args.seed}); this checkout against {args.base}")
        differing = 0
        for profile in profiles:
            reference = _build(base, raw, work, profile, args.workers[0])
            for workers in args.workers:
                lines = _differences(reference, _build(REPO, raw, work, profile, workers), helper_tables(profile))
                differing += len(lines)
                verdict = "identical" if not lines else f"{len(lines)} differ"
                print(f"{profile}, {workers} builders: {len(reference)} tables, {verdict}")
                for line in lines:
                    print(f"  {line}")
        sys.exit(1 if differing else 0)
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
