"""`concepts build DB` builds the concept layer only; references and variants are built when a command needs them.

A user who wants one task no longer waits for 15 references and 25 variants; `--all` builds everything.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from clinbench.cli import app

# the 15 MIMIC-IV task references (targets/*.sql, eicu-* excepted), as `concepts build --all` makes them
REFERENCES = ["target_apsiii_24h", "target_charlson", "target_creatinine_baseline", "target_gcs_24h", "target_kdigo_48h",
              "target_meld_24h", "target_oasis_24h", "target_sapsii_24h", "target_sepsis3", "target_sirs_24h",
              "target_sofa_24h", "target_suspicion_infection", "target_urine_output_rate",
              "target_vasopressor_equivalents", "target_ventilation"]


def _tables(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {n for (n,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchall()}


def _invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


@pytest.fixture(scope="module")
def small_synth(tmp_path_factory) -> Path:
    """20 synthetic patients, nothing derived built: what `data synth` leaves."""
    from clinbench.ehr.synth import synth_mimic_iv

    path = tmp_path_factory.mktemp("on-demand") / "synth.duckdb"
    synth_mimic_iv(path, patients=20, seed=0)
    return path


def test_the_default_build_is_the_concept_layer_and_all_adds_the_15_references_and_25_variants(tmp_path):
    from clinbench.concepts.catalog import load_concepts
    from clinbench.ehr.schema import create_empty

    db = tmp_path / "empty.duckdb"
    with duckdb.connect(str(db)) as con:
        create_empty(con, "mimic-iv")
    concepts = [c for c in load_concepts(profile="m4bench").values() if c.kind == "concept" and c.schema == "mimiciv_derived"]
    assert len(concepts) == 68 and "arb" not in {c.table for c in concepts}  # the profile omits arb and code_status
    # the five helpers are no tables: each is part of the statements that read it
    layer = sorted(c.table for c in concepts if not c.helper)
    assert len(layer) == 63

    default = _invoke("concepts", "build", str(db), "--profile", "m4bench")
    assert sorted(_tables(db)) == layer  # not one reference, variant or helper
    assert "63 built, 0 unchanged," in default

    everything = _invoke("concepts", "build", str(db), "--profile", "m4bench", "--all")
    added = _tables(db) - set(layer)
    assert sorted(t for t in added if t.startswith("target_")) == REFERENCES
    assert len([t for t in added if t.startswith("variant_")]) == 25
    assert len(added) == 40  # and no helper
    assert "40 built, 63 unchanged," in everything

    again = _invoke("concepts", "build", str(db), "--profile", "m4bench")  # the references held are kept fresh
    assert "0 built, 103 unchanged," in again


def test_a_helper_is_part_of_the_reference_that_reads_it_and_gives_the_rows_its_table_gave(small_synth, tmp_path):
    """antibiotic_culture_pairs is no table: the suspicion-of-infection reference's statement holds it, and its
    rows are those the reference had when the helper was a table of its own (the file run as written)."""
    import shutil

    from clinbench.concepts.build import build_concepts
    from clinbench.concepts.catalog import find_concept, load_concepts
    from clinbench.concepts.manifest import table_hash
    from clinbench.errors import ConceptError

    small_synth = Path(shutil.copy(small_synth, tmp_path / "synth.duckdb"))  # the module's copy stays reference-free
    build_concepts(small_synth, targets=False, profile="m4bench")
    built = build_concepts(small_synth, only=["suspicion-infection"], profile="m4bench")
    assert [r.name for r in built if r.status == "built"] == ["mimiciv_derived.target_suspicion_infection"]
    assert "antibiotic_culture_pairs" not in _tables(small_synth)

    concepts = load_concepts(profile="m4bench")
    with duckdb.connect(str(small_synth)) as con:
        rows, inlined = table_hash(con, "mimiciv_derived.target_suspicion_infection")
        # the two files as written, the helper a table as an earlier clinbench built it
        con.execute(f"CREATE TABLE mimiciv_derived.antibiotic_culture_pairs AS {find_concept('antibiotic_culture_pairs', concepts).sql}")
        con.execute(f"CREATE TABLE mimiciv_derived.by_table AS {find_concept('suspicion-infection', concepts).sql}")
        assert table_hash(con, "mimiciv_derived.by_table") == (rows, inlined) and rows > 0

    with pytest.raises(ConceptError, match=r"^antibiotic_culture_pairs is a helper, not a table \(clinbench's own "
                       r"intermediate, read by target suspicion-infection .*build one of those$"):
        build_concepts(small_synth, only=["antibiotic_culture_pairs"], profile="m4bench")


def test_run_builds_the_reference_it_was_not_given_and_the_layer_its_agents_see(small_synth, tmp_path):
    """A standard task's agent sees the whole concept layer, as an M4Bench agent did: `run` on a database
    holding none builds the layer and the reference, and no other reference or variant."""
    import shutil

    from clinbench.concepts.build import build_concepts

    before = _tables(small_synth)  # nothing derived yet, or the other tests' tables
    default = Path(shutil.copy(small_synth, tmp_path / "default.duckdb"))
    build_concepts(default, targets=False, profile="m4bench")  # what `concepts build DB` makes
    assert not any(t.startswith("target_") for t in before)
    text = _invoke("run", "--db", str(small_synth), "--out", str(tmp_path / "c"), "--task", "mimic-meld-24h",
                   "--agent", "reference", "--profile", "m4bench")
    assert f"built on demand in {small_synth}" in text and "target_meld_24h" in text
    assert "1 run(s) done (1 ok)" in text
    built = _tables(small_synth) - before
    assert built == (_tables(default) - before) | {"target_meld_24h"}
    assert len(_tables(default)) == 63 and not {"antibiotic_culture_pairs", "apsiii_gases_24h"} & built

    # the reference's closure is within what was built, and a build of it finds nothing to do
    again = build_concepts(small_synth, only=["mimiciv_derived.target_meld_24h"], profile="m4bench")
    assert {r.name.split(".")[1] for r in again} <= built | before and {r.status for r in again} == {"unchanged"}
    rerun = _invoke("run", "--db", str(small_synth), "--out", str(tmp_path / "c"), "--task", "mimic-meld-24h",
                    "--agent", "reference", "--profile", "m4bench")
    assert "built on demand" not in rerun and "1 already recorded" in rerun


def test_a_raw_task_gets_no_concept_layer(small_synth, tmp_path):
    import shutil

    db = Path(shutil.copy(small_synth, tmp_path / "raw-only.duckdb"))
    with duckdb.connect(str(db)) as con:  # the raw tables only
        for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchall():
            con.execute(f"DROP TABLE mimiciv_derived.{t}")
    _invoke("run", "--db", str(db), "--out", str(tmp_path / "c"), "--task", "mimic-meld-24h-raw",
            "--agent", "reference", "--profile", "m4bench")
    assert "vitalsign" not in _tables(db) and "target_meld_24h" in _tables(db)  # the reference's closure only


def test_tasks_reference_and_concepts_variants_build_what_they_show(small_synth, tmp_path):
    text = _invoke("tasks", "reference", "mimic-kdigo-48h", "--db", str(small_synth), "--out", str(tmp_path / "r.csv"),
                   "--variant", "creatinine_rounding", "--profile", "m4bench")
    assert "variant_kdigo_48h__creatinine_rounding" in text and (tmp_path / "r.csv").is_file()
    shown = _invoke("concepts", "variants", str(small_synth), "gcs-24h__latest_charting")
    assert "target_gcs_24h, variant_gcs_24h__latest_charting" in shown
    assert {"target_gcs_24h", "variant_gcs_24h__latest_charting"} <= _tables(small_synth)
    assert "variant_sofa_24h__missing_as_null" not in _tables(small_synth)


def test_a_missing_database_gets_its_one_line_error_without_a_progress_bar(tmp_path):
    """What a user sees (the real command line, its error handler): the error alone, not under an empty bar."""
    missing = tmp_path / "missing.duckdb"
    done = subprocess.run([sys.executable, "-m", "clinbench", "concepts", "build", str(missing)], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr == (f"error: database {missing} does not exist: create it with `clinbench data synth` or "
                           "`clinbench data load`\n")
    assert not missing.exists()


def test_the_build_on_demand_never_calls_the_tables_it_only_checks_lacking(tmp_path):
    """`tasks verify` on a database holding the concept layer said 'building 27 table(s) DB lacks' of a
    database that lacked one reference: the number is the reference's closure, tables there included."""
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_mimic_iv

    db = tmp_path / "layer.duckdb"
    synth_mimic_iv(db, patients=20, seed=0)
    build_concepts(db, targets=False, profile="m4bench")
    text = _invoke("tasks", "verify", "--db", str(db), "--task", "mimic-meld-24h")
    assert f"{db} lacks: " in text and "table(s) to check, unchanged ones skipped" in text
    assert f"built on demand in {db}" in text and "target_meld_24h" in text and "concept(s)" not in text
