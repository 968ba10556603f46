"""Every task reference on the synthetic databases: non-empty, the task's exact columns, unique grain,
and every scored column taking more than one value (a constant column cannot tell agents apart)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clinbench.concepts.build import build_concepts
from clinbench.concepts.catalog import find_concept
from clinbench.derive.catalogue import load_catalogue

TASKS = load_catalogue()
REFERENCES = sorted({(t.reference, t.database) for t in TASKS.values()})
# scored columns that are constant by construction: every reference row of Sepsis-3 is an onset
CONSTANT_BY_DEFINITION = {("sepsis3", "sepsis3")}
# columns the 200-patient seed-0 synthetic database happens not to vary (no first-day fever >= 39 C);
# tests/ehr/test_synth_tasks.py checks them on the 500-patient database
SYNTH_200_GAPS = {("sapsii-24h", "temp_score")}


@pytest.fixture(scope="module")
def synth_eicu_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clinbench.ehr.synth import synth_eicu as synth

    out = tmp_path_factory.mktemp("synth_eicu") / "eicu_synth.duckdb"
    synth(out, patients=200, seed=0)
    build_concepts(out)
    return out


@pytest.fixture(scope="module")
def databases(synth_db: Path, synth_eicu_db: Path):
    cons = {"mimic-iv": duckdb.connect(str(synth_db), read_only=True), "eicu": duckdb.connect(str(synth_eicu_db), read_only=True)}
    yield cons
    for con in cons.values():
        con.close()


def _table(reference: str) -> str:
    return find_concept(f"{'eicu_derived' if reference.startswith('eicu-') else 'mimiciv_derived'}.target_{reference.replace('-', '_')}").qualified


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reference_has_exactly_the_task_columns_and_a_unique_grain(databases, task_id):
    task = TASKS[task_id]
    con = databases[task.database]
    table = _table(task.reference)
    columns = [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]
    assert columns == list(task.required_columns)
    keys = ", ".join(task.keys)
    total, distinct = con.execute(f"SELECT count(*), count(DISTINCT ({keys})) FROM {table}").fetchone()
    assert total > 0
    assert distinct == total
    nulls = con.execute(f"SELECT count(*) FROM {table} WHERE " + " OR ".join(f"{k} IS NULL" for k in task.keys)).fetchone()[0]
    assert nulls == 0


SCORED = sorted({(t.reference, t.database, c) for t in TASKS.values() for c in t.scored_columns})


@pytest.mark.parametrize(("reference", "database", "column"), SCORED, ids=[f"{r}-{c}" for r, _, c in SCORED])
def test_scored_column_takes_more_than_one_value(databases, reference, database, column):
    if (reference, column) in CONSTANT_BY_DEFINITION:
        pytest.skip(f"{reference}.{column} is constant by definition (every reference row is an onset)")
    con = databases[database]
    # an empty cell is a value the agent must reproduce too (scored as "both empty")
    distinct = con.execute(f'SELECT count(DISTINCT COALESCE(CAST("{column}" AS VARCHAR), \'<empty>\')) FROM {_table(reference)}').fetchone()[0]
    if distinct == 1 and (reference, column) in SYNTH_200_GAPS:
        pytest.skip(f"{reference}.{column} is constant on the 200-patient synthetic database (no first-day fever >= 39 C)")
    assert distinct > 1


def test_every_reference_named_by_a_task_exists():
    for reference, _ in REFERENCES:
        assert find_concept(_table(reference)).kind == "target"


def test_cohort_shares_on_synthetic_data(synth_db):
    from clinbench.concepts.summary import cohort_shares

    shares = cohort_shares(synth_db)
    assert list(shares) == ["ICU stays with first-day SOFA >= 2", "ICU stays with KDIGO stage >= 1 in the first 48 h", "ICU stays with Sepsis-3"]
    assert all(0 < s < 1 for s in shares.values())
    con = duckdb.connect(str(synth_db), read_only=True)
    stays = con.execute("SELECT count(*) FROM mimiciv_icu.icustays").fetchone()[0]
    sepsis = con.execute("SELECT count(*) FROM mimiciv_derived.target_sepsis3").fetchone()[0]
    con.close()
    assert shares["ICU stays with Sepsis-3"] == pytest.approx(sepsis / stays)


def test_cohort_shares_refuses_an_unbuilt_database(tmp_path):
    from clinbench.concepts.summary import cohort_shares
    from clinbench.errors import ConceptError

    db = tmp_path / "raw.duckdb"
    duckdb.connect(str(db)).close()
    with pytest.raises(ConceptError, match="clinbench concepts build"):
        cohort_shares(db)


@pytest.mark.parametrize(("reference", "database"), REFERENCES, ids=[r for r, _ in REFERENCES])
@pytest.mark.slow
def test_inlined_reference_sql_reproduces_the_built_target(databases, reference, database):
    """target_sql() is what raw tasks and the with-skill-rawsql condition use: it must give the same rows."""
    from clinbench.concepts.build import target_sql

    con = databases[database]
    sql = target_sql(reference)
    table = _table(reference)
    extra = con.execute(f"SELECT count(*) FROM (({sql}) EXCEPT ALL (SELECT * FROM {table}))").fetchone()[0]
    missing = con.execute(f"SELECT count(*) FROM ((SELECT * FROM {table}) EXCEPT ALL ({sql}))").fetchone()[0]
    assert (extra, missing) == (0, 0)
