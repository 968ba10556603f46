"""An agent's database holds the derived tables the anchor's agents had, and never a helper of clinbench.

clinbench splits some anchor concepts into intermediates of its own (``-- Helper:`` in the
header): sofa_hourly_worst, the candidate antibiotic/culture pairs of suspicion of infection, the
first-day gases of APS III. No anchor builds them, and some hold most of an answer (a
suspicion-of-infection agent that could read antibiotic_culture_pairs would only have to pick
rows), so an agent must not see them: a build makes no table of them (each is part of the statements
that read it), and a workspace hides those an earlier build made. Checked against the anchors' own table lists in
../shared/data/anchors-demo: M4's `init-derived` output and mimic-code's derived tables.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clinbench.concepts.build import build_concepts
from clinbench.concepts.catalog import RETIRED_HELPERS, helper_tables, load_concepts
from clinbench.derive.catalogue import load_catalogue
from clinbench.derive.workspace import prepare_workspace
from tests.concepts.anchor_fixtures import anchors_dir

# the anchor whose derived tables each profile's concept layer reproduces
ANCHOR_TABLES = {"m4bench": "m4bench-pipeline/derived", "mimic-code": "mimic-code-derived",
                 "mimic-code-next": "mimic-code-derived"}
STANDARD = sorted(t for t, spec in load_catalogue().items() if spec.database == "mimic-iv" and spec.mode == "standard")


@pytest.fixture(scope="module")
def anchors(shared_data: Path) -> Path:
    return anchors_dir(shared_data)


def _anchor_tables(anchors: Path, profile: str) -> set[str]:
    return {p.stem for p in (anchors / ANCHOR_TABLES[profile]).glob("*.parquet")}


@pytest.mark.parametrize("profile", sorted(ANCHOR_TABLES))
def test_the_helpers_are_exactly_the_concepts_no_anchor_builds(anchors, profile):
    layer = {c.table for c in load_concepts(profile=profile).values() if c.kind == "concept" and c.schema == "mimiciv_derived"}
    anchor = _anchor_tables(anchors, profile)
    assert anchor <= layer  # every anchor table is a concept of the profile
    assert {q.split(".")[1] for q in helper_tables(profile) - RETIRED_HELPERS} == layer - anchor
    assert len(layer - anchor) == 5
    assert not {q.split(".")[1] for q in RETIRED_HELPERS} & layer  # retired: no concept builds them


def test_a_helper_an_earlier_build_left_is_never_shown_and_the_next_build_drops_it(synth_db, tmp_path, monkeypatch):
    """A database built before the ventilation rules moved into ventilation.sql still holds ventilation_episodes,
    which is the ventilation task's answer, and one built before helpers were part of their readers' statements
    holds sofa_hourly_worst: the agent's database never shows them, and the next build drops them."""
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "old.duckdb"
    db.write_bytes(synth_db.read_bytes())
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE mimiciv_derived.ventilation_episodes AS SELECT 'default' AS status_rule, * FROM mimiciv_derived.ventilation")
        con.execute("CREATE TABLE mimiciv_derived.ventilation_status AS SELECT stay_id, starttime AS charttime, ventilation_status FROM mimiciv_derived.ventilation")
        con.execute("CREATE TABLE mimiciv_derived.sofa_hourly_worst AS SELECT stay_id, hr FROM mimiciv_derived.icustay_hourly")
        con.execute("INSERT INTO clinbench_meta.concept_builds (name) VALUES ('mimiciv_derived.ventilation_episodes'), "
                    "('mimiciv_derived.ventilation_status'), ('mimiciv_derived.sofa_hourly_worst')")
    ws = prepare_workspace("mimic-ventilation", "no-skill", "native", db, tmp_path / "ws", shared=True)
    with duckdb.connect(str(ws / "database.duckdb"), read_only=True) as con:
        shown = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchall()}
    assert {"vitalsign", "ventilator_setting"} <= shown
    assert not shown & {"ventilation", "ventilation_episodes", "ventilation_status", "sofa_hourly_worst"}

    build_concepts(db, targets=False)
    with duckdb.connect(str(db), read_only=True) as con:
        left = con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name IN "
                           "('ventilation', 'ventilation_episodes', 'ventilation_status', 'sofa_hourly_worst')").fetchall()
        kept = con.execute("SELECT name FROM clinbench_meta.concept_builds WHERE name IN ('mimiciv_derived.ventilation_episodes', "
                           "'mimiciv_derived.ventilation_status', 'mimiciv_derived.sofa_hourly_worst')").fetchall()
    assert (left, kept) == ([("ventilation",)], [])


@pytest.mark.slow
def test_every_standard_task_database_holds_m4s_derived_tables_less_its_drops(demo_m4bench_db, anchors, tmp_path, monkeypatch):
    """The demo with every table built: each task's masked database shows exactly the tables M4's `init-derived`
    makes, less the ones the task drops, as M4Bench's agents saw them."""
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    with duckdb.connect(str(demo_m4bench_db), read_only=True) as con:
        held = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchall()}
    assert not {q.split(".")[1] for q in helper_tables("m4bench")} & held  # helpers are no tables
    m4 = _anchor_tables(anchors, "m4bench")
    for task in STANDARD:
        ws = prepare_workspace(task, "no-skill", "native", demo_m4bench_db, tmp_path / task, shared=True)
        with duckdb.connect(str(ws / "database.duckdb"), read_only=True) as con:
            shown = {t for (t,) in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchall()}
        assert shown == m4 - set(load_catalogue()[task].drop), task
