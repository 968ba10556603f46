"""A table clinbench built, changed since by someone else, is rebuilt by the next build, and so is what reads it.

Before, a derived table was known by its bookkeeping row alone: an UPDATE of kdigo_stages, or another program's
table put in its place under the same name (mimic-code's scripts run on the same database), was kept as
"unchanged", and the task reference built on it, which `tasks verify` then passed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from clinbench.concepts.build import build_concepts
from clinbench.concepts.manifest import table_hash

KDIGO = ["mimiciv_derived.kdigo_stages", "mimiciv_derived.target_kdigo_48h"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """20 synthetic patients with the kdigo-48h reference and what it reads built (the default profile)."""
    from clinbench.ehr.synth import synth_mimic_iv

    path = tmp_path_factory.mktemp("changed") / "synth.duckdb"
    synth_mimic_iv(path, patients=20, seed=0)
    build_concepts(path, only=["kdigo-48h"], profile="m4bench")
    return path


def _hashes(db: Path) -> dict[str, tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {t: table_hash(con, t) for t in KDIGO}


def _statuses(db: Path) -> dict[str, tuple[str, str]]:
    return {r.name: (r.status, r.note) for r in build_concepts(db, only=["kdigo-48h"], profile="m4bench")}


def test_an_updated_concept_table_is_rebuilt_with_its_readers_to_the_rows_it_had(built, tmp_path):
    db = Path(shutil.copy(built, tmp_path / "db.duckdb"))
    before = _hashes(db)
    assert all(status == "unchanged" for status, _ in _statuses(db).values())  # the hashes it kept hold
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE mimiciv_derived.kdigo_stages SET aki_stage = 3")
    statuses = _statuses(db)
    assert statuses["mimiciv_derived.kdigo_stages"] == (
        "built", "rebuilt: changed since clinbench built it, by an UPDATE or another program's table of its name")
    assert statuses["mimiciv_derived.target_kdigo_48h"][0] == "built"
    assert {n for n, (s, _) in statuses.items() if s == "built"} == {
        "mimiciv_derived.kdigo_stages", "mimiciv_derived.target_kdigo_48h"}
    assert _hashes(db) == before
    assert all(status == "unchanged" for status, _ in _statuses(db).values())


def test_another_programs_table_of_the_same_name_is_replaced(built, tmp_path):
    db = Path(shutil.copy(built, tmp_path / "db.duckdb"))
    before = _hashes(db)
    with duckdb.connect(str(db)) as con:  # same columns, a stage more for one stay: as another pipeline's might be
        con.execute("CREATE OR REPLACE TABLE mimiciv_derived.kdigo_stages AS SELECT * REPLACE "
                    "(CASE WHEN stay_id = (SELECT min(stay_id) FROM mimiciv_icu.icustays) THEN 3 ELSE aki_stage END "
                    "AS aki_stage) FROM mimiciv_derived.kdigo_stages")
    assert _statuses(db)["mimiciv_derived.kdigo_stages"][0] == "built"
    assert _hashes(db) == before


def test_a_table_dropped_and_made_again_in_another_session_with_other_values_is_rebuilt(built, tmp_path):
    """Made again after a checkpoint, the table lands in the blocks its old self freed, with the same row count
    and the same min and max (stages 1 and 2 swapped): its storage layout is as before, its rows are not."""
    db = Path(shutil.copy(built, tmp_path / "db.duckdb"))
    before = _hashes(db)
    swapped = tmp_path / "swapped.parquet"
    with duckdb.connect(str(db)) as con:
        con.execute(f"COPY (SELECT * REPLACE (CASE aki_stage WHEN 1 THEN 2 WHEN 2 THEN 1 ELSE aki_stage END AS aki_stage) "
                    f"FROM mimiciv_derived.kdigo_stages) TO '{swapped}' (FORMAT parquet)")
        con.execute("DROP TABLE mimiciv_derived.kdigo_stages")
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE TABLE mimiciv_derived.kdigo_stages AS SELECT * FROM '{swapped}'")
    assert _statuses(db)["mimiciv_derived.kdigo_stages"][0] == "built"
    assert _hashes(db) == before


def test_a_view_put_in_a_built_tables_place_is_named_in_one_line(built, tmp_path):
    from clinbench.errors import ConceptError

    db = Path(shutil.copy(built, tmp_path / "db.duckdb"))
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE mimiciv_derived.kdigo_stages")
        con.execute("CREATE VIEW mimiciv_derived.kdigo_stages AS SELECT 1 AS stay_id")
    with pytest.raises(ConceptError, match=r"^mimiciv_derived\.kdigo_stages is a view now, not the table clinbench "
                                           r"built: drop or rename the view and build again$"):
        _statuses(db)


def test_a_database_built_before_hashes_were_kept_is_trusted_once_and_then_checked(built, tmp_path):
    db = Path(shutil.copy(built, tmp_path / "db.duckdb"))
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE clinbench_meta.concept_builds SET content_hash = NULL")
    assert all(status == "unchanged" for status, _ in _statuses(db).values())  # nothing rebuilt on an upgrade
    with duckdb.connect(str(db)) as con:
        assert con.execute("SELECT count(*) FROM clinbench_meta.concept_builds WHERE name IN "
                           "('mimiciv_derived.kdigo_stages', 'mimiciv_derived.target_kdigo_48h') "
                           "AND content_hash IS NULL").fetchone()[0] == 0
        con.execute("UPDATE mimiciv_derived.kdigo_stages SET aki_stage = 0")
    assert _statuses(db)["mimiciv_derived.kdigo_stages"][0] == "built"


def test_raw_rows_changed_twice_by_a_connection_this_process_holds_are_seen_each_time(built, tmp_path):
    """A notebook's own connection to the database, open across builds: its updates are not checkpointed, and the
    second left the storage layout as the first made it. Before, the second build kept first_day_vitalsign from the
    first value (100 where the raw maximum was 150)."""
    db = Path(shutil.copy(built, tmp_path / "db.duckdb"))
    user = duckdb.connect(str(db))
    try:
        stay = user.execute("SELECT min(stay_id) FROM mimiciv_icu.icustays").fetchone()[0]
        for value in (100.0, 150.0):
            user.execute("UPDATE mimiciv_icu.chartevents SET valuenum = ? WHERE itemid = 220045 AND stay_id = ?", [value, stay])
            user.execute("SELECT has_updates FROM pragma_storage_info('mimiciv_icu.chartevents') LIMIT 1").fetchone()
            build_concepts(db, only=["mimiciv_derived.first_day_vitalsign"], profile="m4bench")
            assert user.execute("SELECT heart_rate_max FROM mimiciv_derived.first_day_vitalsign WHERE stay_id = ?",
                                [stay]).fetchone()[0] == value
    finally:
        user.close()
