"""Every MIMIC-IV task reference reproduces M4Bench 0.5.3's reference on the MIMIC-IV demo.

The references are built over mimic-code's own derived tables (``anchor_fixtures``), exactly
as M4Bench ran its ``benchmark/ground_truth/*.sql``; M4Bench's CSVs are then scored as if an
agent had written them, with clinbench's scorer under both column settings, and compared cell
by cell. Skipped when ../shared/data (the demo and the anchor outputs) is absent.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clinbench.concepts.compare import table_mismatch
from clinbench.derive.catalogue import load_catalogue
from clinbench.derive.score import SCORED_COLUMN_SETS, score_against
from tests.concepts.anchor_fixtures import anchors_dir, build_on_top, load_mimic_code_derived, manifest, plan_on_top

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

# the references M4Bench made on the demo; ventilation is empty there (no text chartevents)
NON_EMPTY = ["apsiii-24h", "charlson", "creatinine-baseline", "gcs-24h", "kdigo-48h", "meld-24h", "oasis-24h",
             "sapsii-24h", "sepsis3", "sirs-24h", "sofa-24h", "suspicion-infection", "urine-output-rate",
             "vasopressor-equivalents"]
TASKS = load_catalogue()


@pytest.fixture(scope="module")
def anchors(shared_data: Path) -> Path:
    return anchors_dir(shared_data)


@pytest.fixture(scope="module")
def anchor_db(anchors: Path, mimic_demo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clinbench.ehr.load import load_mimic_iv

    out = tmp_path_factory.mktemp("anchor") / "demo_mimic_code.duckdb"
    load_mimic_iv(mimic_demo_dir, out)
    con = duckdb.connect(str(out))
    try:
        load_mimic_code_derived(con, anchors)
        build_on_top(con)
    finally:
        con.close()
    return out


@pytest.fixture(scope="module")
def con(anchor_db: Path):
    c = duckdb.connect(str(anchor_db), read_only=True)
    yield c
    c.close()


def test_the_manifest_lists_the_references_the_tests_score(anchors):
    refs = manifest(anchors)["references"]
    assert sorted(r for r, m in refs.items() if m["rows"]) == NON_EMPTY
    assert refs["ventilation"]["rows"] == 0
    assert manifest(anchors)["provenance"]["m4bench_commit"] == "6ed55907679157e3dff46e99da487bb969c04a9c"


@pytest.mark.parametrize("reference", NON_EMPTY)
@pytest.mark.parametrize("columns", SCORED_COLUMN_SETS)
def test_m4bench_reference_scores_reward_1_against_ours(con, anchors, reference, columns):
    entry = manifest(anchors)["references"][reference]
    for task_id in entry["task_ids"]:
        spec = TASKS[task_id]
        assert spec.keys == entry["key_columns"]
        result = score_against(spec, anchors / "m4bench-references" / entry["path"], con, spec.target_table,
                               scored_columns=columns)
        assert result.reward == 1.0, {c: s.examples for c, s in result.columns.items() if s.match_rate < 1}
        assert result.strict and result.reference_rows == entry["rows"] == result.agent_rows
        assert result.extra_keys == 0 and result.duplicate_rows == 0


def _cell_mismatches(con: duckdb.DuckDBPyConnection, csv: Path, table: str) -> str | None:
    """None when every row and cell of ``table`` equals M4Bench's CSV (numbers to 1e-6), else what differs."""
    return table_mismatch(con, table, f"read_csv('{csv}', header = true)")


@pytest.mark.parametrize("reference", [*NON_EMPTY, "ventilation"])
def test_every_cell_of_every_row_equals_the_anchor(con, anchors, reference):
    entry = manifest(anchors)["references"][reference]
    table = f"mimiciv_derived.target_{reference.replace('-', '_')}"
    columns = [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]
    assert columns == entry["columns"]
    assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == entry["rows"]
    if entry["rows"]:
        assert _cell_mismatches(con, anchors / "m4bench-references" / entry["path"], table) is None


def test_the_task_references_read_only_mimic_code_tables_and_their_own_helpers(con, anchors):
    """Beyond mimic-code's tables, the task references need only two helper tables of clinbench."""
    raw = {f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()
           if s != "mimiciv_derived"}
    mimic_code = {f"mimiciv_derived.{p.stem}" for p in (anchors / "mimic-code-derived").glob("*.parquet")}
    helpers = sorted(out for out, _ in plan_on_top(raw | mimic_code, kinds=("target",))
                     if not out.split(".")[1].startswith(("target_", "variant_")))
    assert helpers == ["mimiciv_derived.antibiotic_culture_pairs", "mimiciv_derived.apsiii_gases_24h"]


# ---------------------------------------------------------------- end to end on clinbench's own build

@pytest.fixture(scope="module")
def own(demo_db: Path):
    c = duckdb.connect(str(demo_db), read_only=True)
    yield c
    c.close()


@pytest.mark.parametrize("reference", [*NON_EMPTY, "ventilation"])
def test_clinbench_own_build_of_the_demo_reproduces_every_anchor_reference(own, anchors, reference):
    """`clinbench concepts build` on the demo (its own concept layer, not mimic-code's tables)."""
    entry = manifest(anchors)["references"][reference]
    table = f"mimiciv_derived.target_{reference.replace('-', '_')}"
    assert own.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == entry["rows"]
    if not entry["rows"]:
        return
    for columns in SCORED_COLUMN_SETS:
        spec = TASKS[entry["task_ids"][0]]
        result = score_against(spec, anchors / "m4bench-references" / entry["path"], own, table, scored_columns=columns)
        assert result.reward == 1.0 and result.strict, {c: s.examples for c, s in result.columns.items() if s.match_rate < 1}
    assert _cell_mismatches(own, anchors / "m4bench-references" / entry["path"], table) is None
