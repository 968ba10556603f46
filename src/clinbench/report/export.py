"""A campaign's results as plain tables to take away: Parquet or CSV, one file per table.

* ``runs``: the store's ``runs`` table as it is (every run, derive and dx, publishable or not);
* ``column_scores``: per scored column of a derive run: match rate and normalised MAE;
* ``usage``: model tokens and requests per run;
* ``dx_encounters``: one row per diagnosis run, from its evidence ``score.json`` (case,
  reference and final diagnosis, judge score and reason, turns, cost, error).

The README's "Results store and export" section documents every column. Each file is written
beside its final name and renamed, so an interrupted export leaves no half-written table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from clinbench.atomic import atomic_path
from clinbench.errors import ClinbenchError
from clinbench.records import STORE_FILE

FORMATS = ("parquet", "csv")
TABLES = ("runs", "column_scores", "usage", "dx_encounters")
DX_COLUMNS = {
    "run_id": "VARCHAR", "case_id": "VARCHAR", "agent": "VARCHAR", "model": "VARCHAR", "gatekeeper": "VARCHAR",
    "judge": "VARCHAR", "trial": "INTEGER", "status": "VARCHAR", "reference_diagnosis": "VARCHAR",
    "diagnosis": "VARCHAR", "judge_score": "INTEGER", "judge_reason": "VARCHAR", "correct": "BOOLEAN",
    "turns": "INTEGER", "forced": "BOOLEAN", "cost": "DOUBLE", "error": "VARCHAR",
}


@dataclass
class Exported:
    table: str
    path: Path
    rows: int


def _dx_rows(campaign: Path, con) -> list[dict]:
    rows = []
    for run_id, agent, model, trial, status, ev in con.execute(
            "SELECT run_id, agent, model, trial, status, evidence_dir FROM runs WHERE benchmark = 'dx' ORDER BY run_id").fetchall():
        score: dict = {}
        manifest: dict = {}
        if ev:
            for name, target in (("score.json", score), ("manifest.json", manifest)):
                try:
                    target.update(json.loads((campaign / ev / name).read_text(encoding="utf-8")))
                except (OSError, ValueError):
                    pass
        rows.append({
            "run_id": run_id, "case_id": score.get("case_id"), "agent": agent, "model": model,
            "gatekeeper": manifest.get("gatekeeper"), "judge": manifest.get("judge"), "trial": trial, "status": status,
            "reference_diagnosis": score.get("reference"), "diagnosis": score.get("diagnosis"),
            "judge_score": score.get("judge_score"), "judge_reason": score.get("judge_reason"),
            "correct": score.get("correct"), "turns": score.get("turns"), "forced": score.get("forced"),
            "cost": score.get("cost"), "error": score.get("error"),
        })
    return rows


def export_store(campaign_dir: str | Path, out_dir: str | Path, *, fmt: str = "parquet", force: bool = False) -> list[Exported]:
    """Write the four tables of ``campaign_dir``'s store into ``out_dir`` as ``fmt``."""
    from clinbench.duck import duckdb

    campaign = Path(campaign_dir)
    store = campaign / STORE_FILE
    if fmt not in FORMATS:
        raise ClinbenchError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if not store.is_file():
        raise ClinbenchError(f"{campaign} holds no {STORE_FILE}: pass a campaign's --out folder")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ClinbenchError(f"{out} is a file: pass a folder to export into")
    targets = {t: out / f"{t}.{fmt}" for t in TABLES}
    present = [p.name for p in targets.values() if p.exists()]
    if present and not force:
        raise ClinbenchError(f"{out} already holds {', '.join(present)}: pass --force to replace them, or another folder")
    out.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(store), read_only=True)
    except duckdb.Error as exc:
        raise ClinbenchError(f"cannot open {store} ({str(exc).splitlines()[0]}); is a campaign still writing it?") from exc
    options = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
    done = []
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        missing = [t for t in ("runs", "column_scores", "usage") if t not in tables]
        if missing:
            raise ClinbenchError(f"{store} lacks table(s) {', '.join(missing)}: it is not a clinbench results store")
        dx = _dx_rows(campaign, con)
        cols = ", ".join(f"{c} {t}" for c, t in DX_COLUMNS.items())
        con.execute(f"CREATE TEMP TABLE dx_encounters ({cols})")
        if dx:
            con.executemany(f"INSERT INTO dx_encounters VALUES ({', '.join('?' for _ in DX_COLUMNS)})",
                            [[r[c] for c in DX_COLUMNS] for r in dx])
        for table in TABLES:
            order = "ORDER BY run_id" + (", column_name" if table == "column_scores" else "")
            with atomic_path(targets[table]) as tmp:
                con.execute(f"COPY (SELECT * FROM {table} {order}) TO '{str(tmp).replace(chr(39), chr(39) * 2)}' {options}")
            rows = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            done.append(Exported(table, targets[table], int(rows)))
    finally:
        con.close()
    return done
