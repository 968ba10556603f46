"""Per-run tables of the stats and report tests, written by code (the hand-worked example)."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb

from clinbench.records import COLUMN_SCORE_COLUMNS, RUN_COLUMNS, USAGE_COLUMNS

from clinbench.report.published import M4BENCH_RUNS  # noqa: E402  (shipped with clinbench)

# The 3-task, 2-family example worked by hand in test_compare.py.
# (task, condition, model, reward, strict, key_f1, ordered_value_nmae)
HAND_RUNS = [
    ("mimic-sofa-24h", "no-skill", "m1", 0.5, False, 1.0, 0.2),
    ("mimic-sofa-24h", "no-skill", "m2", 0.7, False, 1.0, None),
    ("mimic-sofa-24h", "with-skill", "m1", 0.8, True, 1.0, 0.0),
    ("mimic-sofa-24h", "with-skill", "m2", 1.0, True, 1.0, 0.0),
    ("mimic-sofa-24h-raw", "no-skill", "m1", 0.4, False, 1.0, 0.1),
    ("mimic-sofa-24h-raw", "no-skill", "m2", 0.6, False, 1.0, 0.1),
    ("mimic-sofa-24h-raw", "with-skill", "m1", 0.6, True, 1.0, 0.2),
    ("mimic-sofa-24h-raw", "with-skill", "m2", 0.6, False, 1.0, 0.2),
    ("mimic-meld-24h", "no-skill", "m1", 0.9, True, 1.0, None),
    ("mimic-meld-24h", "no-skill", "m2", 0.7, False, 1.0, None),
    ("mimic-meld-24h", "with-skill", "m1", 0.6, False, 0.5, 0.5),
    ("mimic-meld-24h", "with-skill", "m2", 0.8, False, 0.7, 0.5),
]


def write_hand_csv(path: Path, extra: list[dict] | None = None) -> Path:
    fields = ["task", "condition", "model", "trial", "reward", "strict", "key_f1", "ordered_value_nmae", "publishable", "schema"]
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for task, cond, model, reward, strict, f1, nmae in HAND_RUNS:
            w.writerow(dict(task=task, condition=cond, model=model, trial=1, reward=reward, strict=strict,
                            key_f1=f1, ordered_value_nmae="" if nmae is None else nmae, publishable=True, schema="native"))
        for row in extra or []:
            w.writerow(row)
    return path


def _ddl(table: str, columns: dict[str, str]) -> str:
    return f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in columns.items())})"



def write_hand_store(directory: Path, *, flagged: bool = True, evidence: bool = False) -> Path:
    """A campaign folder holding the hand example in results.duckdb (the planned store schema),
    plus one unpublishable run and one dx run that derive statistics must ignore."""
    directory.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(directory / "results.duckdb"))
    # the store's own schema, so the fixture follows it as it grows
    for table, columns in (("runs", RUN_COLUMNS), ("column_scores", COLUMN_SCORE_COLUMNS), ("usage", USAGE_COLUMNS)):
        con.execute(_ddl(table, columns))
    for i, (task, cond, model, reward, strict, f1, nmae) in enumerate(HAND_RUNS):
        run_id = f"r{i:02d}"
        ev = f"runs/{run_id}" if evidence else None
        con.execute(
            "INSERT INTO runs (run_id, benchmark, task, condition, schema, agent, model, trial, status, reward, strict,"
            " key_f1, ordered_value_nmae, publishable, evidence_dir) VALUES (?, 'derive', ?, ?, 'native', 'codex', ?, 1, 'ok', ?, ?, ?, ?, TRUE, ?)",
            [run_id, task, cond, model, reward, strict, f1, nmae, ev],
        )
        con.execute("INSERT INTO column_scores VALUES (?, 'score', ?, ?)", [run_id, reward, nmae])
        if evidence:
            run_dir = directory / "runs" / run_id
            run_dir.mkdir(parents=True, exist_ok=True)
            (run_dir / "transcript.jsonl").write_text(
                '{"role": "user", "content": "Compute <SOFA> for each stay"}\n'
                '{"role": "assistant", "content": "SELECT 1; -- done & dusted"}\n'
            )
            (run_dir / "output.csv").write_text("stay_id,sofa\n1,2\n")
    if flagged:
        con.execute(
            "INSERT INTO runs (run_id, benchmark, task, condition, schema, agent, model, trial, status, reward, strict, publishable, flag_reason)"
            " VALUES ('x-flagged', 'derive', 'mimic-sofa-24h', 'no-skill', 'native', 'codex', 'm1', 2, 'ok', 0.0, FALSE, FALSE, 'read the reference')"
        )
    con.execute(
        "INSERT INTO runs (run_id, benchmark, task, condition, schema, agent, model, trial, status, reward, judge_score,"
        " cost, publishable) VALUES ('x-dx', 'dx', 'case-001', 'offline', 'offline', 'oracle', '', 1, 'ok', 1.0, 5, 300.0, TRUE)"
    )
    con.close()
    return directory
