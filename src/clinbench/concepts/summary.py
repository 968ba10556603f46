"""Cohort shares a user checks after a build: how many ICU stays meet each headline definition."""

from __future__ import annotations

import os

from clinbench.duck import connect_when_free
from clinbench.errors import ConceptError

# label -> (table, condition counted over its distinct stay_id)
SHARES = {
    "ICU stays with first-day SOFA >= 2": ("mimiciv_derived.target_sofa_24h", "sofa >= 2"),
    "ICU stays with KDIGO stage >= 1 in the first 48 h": ("mimiciv_derived.target_kdigo_48h", "aki_stage >= 1"),
    "ICU stays with Sepsis-3": ("mimiciv_derived.target_sepsis3", "sepsis3"),
}


def summary_tables() -> list[str]:
    """The task references the cohort shares read (built on demand by `concepts build --summary`)."""
    return [table for table, _ in SHARES.values()]


def cohort_shares(db_path: str | os.PathLike[str]) -> dict[str, float]:
    """Share (0-1) of ICU stays meeting each definition, from the built targets."""
    if not os.path.exists(db_path):
        raise ConceptError(f"database {db_path} does not exist: build it with `clinbench data synth` or `clinbench data load`")
    con = connect_when_free(db_path, read_only=True)
    try:
        built = {f"{s}.{t}" for s, t in con.execute("SELECT table_schema, table_name FROM information_schema.tables").fetchall()}
        missing = [t for t, _ in SHARES.values() if t not in built]
        if "mimiciv_icu.icustays" not in built or missing:
            raise ConceptError(f"{', '.join(missing) or 'mimiciv_icu.icustays'} missing in {db_path}: run `clinbench concepts build {db_path} --summary` on a MIMIC-IV database")
        stays = con.execute("SELECT count(DISTINCT stay_id) FROM mimiciv_icu.icustays").fetchone()[0]
        if stays == 0:
            raise ConceptError(f"{db_path} has no ICU stays: load or synthesise data first")
        return {
            label: con.execute(f"SELECT count(DISTINCT stay_id) FILTER (WHERE {cond}) FROM {table}").fetchone()[0] / stays
            for label, (table, cond) in SHARES.items()
        }
    finally:
        con.close()
