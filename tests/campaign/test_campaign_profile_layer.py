"""A database's concept layer is one reference profile's: commands keep it, and never mix another in.

(Outside tests/concepts, whose conftest makes mimic-code the default: here the default is m4bench, as for users.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
from typer.testing import CliRunner

from clinbench.cli import app


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _tables(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {n for (n,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchall()}


def _layer(db: Path) -> tuple[set[str], set[str]]:
    """The derived tables and the profiles their bookkeeping rows record."""
    with duckdb.connect(str(db), read_only=True) as con:
        recorded = {p for (p,) in con.execute("SELECT DISTINCT profile FROM clinbench_meta.concept_builds").fetchall()}
    return _tables(db), recorded


def test_commands_without_profile_keep_the_layers_own_and_refuse_to_mix_in_another(tmp_path):
    """Before: `run` without --profile on a mimic-code layer built its reference with m4bench, rebuilt the
    closure's tables with m4bench's SQL and dropped arb and code_status, so the agent saw a layer of two profiles."""
    from clinbench.ehr.synth import synth_mimic_iv

    db = tmp_path / "synth.duckdb"
    synth_mimic_iv(db, patients=20, seed=0)
    assert "reference profile mimic-code@8bcbd190" in _invoke("concepts", "build", str(db), "--profile", "mimic-code")
    layer, recorded = _layer(db)
    assert {"arb", "code_status"} <= layer and recorded == {"mimic-code@8bcbd190"}

    text = _invoke("run", "--db", str(db), "--out", str(tmp_path / "c"), "--task", "mimic-kdigo-48h", "--agent", "reference")
    assert "reference profile mimic-code@8bcbd190: the one the concept layer" in text
    assert "built on demand" in text and "target_kdigo_48h" in text and "concept(s)" not in text  # nothing rebuilt
    assert _layer(db) == (layer | {"target_kdigo_48h"}, {"mimic-code@8bcbd190"})
    with duckdb.connect(str(tmp_path / "c" / "results.duckdb"), read_only=True) as con:
        assert con.execute("SELECT DISTINCT profile FROM runs").fetchall() == [("mimic-code@8bcbd190",)]

    refused = subprocess.run([sys.executable, "-m", "clinbench", "tasks", "reference", "mimic-meld-24h", "--db", str(db),
                              "--out", str(tmp_path / "r.csv"), "--profile", "m4bench"], capture_output=True, text=True)
    assert refused.returncode == 2 and refused.stderr.strip() == (
        f"error: the concept layer in {db} was built with reference profile mimic-code@8bcbd190; building "
        f"m4bench@0.5.3-6ed55907 tables into it would mix profiles: pass --profile mimic-code, or rebuild the "
        f"layer with `clinbench concepts build {db} --profile m4bench`")
    assert _layer(db)[1] == {"mimic-code@8bcbd190"} and not (tmp_path / "r.csv").exists()

    assert "reference profile mimic-code@8bcbd190" in _invoke("concepts", "build", str(db))  # a rebuild keeps it
    switched = _invoke("concepts", "build", str(db), "--profile", "m4bench")  # the whole layer switches
    assert "reference profile m4bench@0.5.3-6ed55907" in switched
    tables, recorded = _layer(db)
    assert not {"arb", "code_status"} & tables and "target_kdigo_48h" in tables and recorded == {"m4bench@0.5.3-6ed55907"}
