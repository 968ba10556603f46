"""The builder: dependency order from the SQL, --only closure, skip-if-unchanged, atomic tables,
error positions, schema rename, skipped schemas, and the inlined single statement."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from clinbench.concepts import build as build_module
from clinbench.concepts.build import build_concepts, target_sql
from clinbench.concepts.catalog import find_concept, load_concepts, parse_header
from clinbench.concepts.graph import closure, dependency_map, table_references, topological_order
from clinbench.concepts.inline import inline_sql
from clinbench.errors import ConceptError, DataError

HEADER = """-- Concept: {name}
-- Definition: test concept
-- Source: test
-- Grain: {grain}
-- Deviations: none.
"""


def _write(root: Path, rel: str, grain: str, body: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER.format(name=path.stem, grain=grain) + body, encoding="utf-8")
    return path


@pytest.fixture()
def toy_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A concepts folder of three chained concepts, used by the builder instead of the real one."""
    root = tmp_path / "concepts"
    _write(root, "mimic_iv/demo/stays.sql", "stay_id", "SELECT stay_id, intime FROM mimiciv_icu.icustays\n")
    _write(
        root,
        "mimic_iv/demo/stay_hours.sql",
        "stay_id",
        "SELECT s.stay_id, date_diff('hour', s.intime, ie.outtime) AS hours\nFROM mimiciv_derived.stays AS s\n"
        "JOIN mimiciv_icu.icustays AS ie ON ie.stay_id = s.stay_id\n",
    )
    _write(root, "mimic_iv/demo/long_stays.sql", "stay_id", "SELECT stay_id FROM mimiciv_derived.stay_hours WHERE hours >= 48\n")
    _write(root, "mimic_iv/demo/lonely.sql", "subject_id", "SELECT subject_id FROM mimiciv_hosp.patients\n")
    _write(root, "eicu/unit_stays.sql", "patientunitstayid", "SELECT patientunitstayid FROM eicu_crd.patient\n")
    _write(root, "targets/long-stay.sql", "stay_id", "SELECT stay_id, 1 AS flag FROM mimiciv_derived.long_stays\n")
    monkeypatch.setattr(build_module, "load_concepts", lambda profile=None: load_concepts(root, profile=profile))
    return root


@pytest.fixture()
def toy_db(empty_db: Path) -> Path:
    con = duckdb.connect(str(empty_db))
    con.execute(
        "INSERT INTO mimiciv_icu.icustays (subject_id, hadm_id, stay_id, intime, outtime) VALUES "
        "(1, 10, 100, '2150-01-01 00:00', '2150-01-04 00:00'), (2, 20, 200, '2150-01-01 00:00', '2150-01-01 12:00')"
    )
    con.close()
    return empty_db


def _table(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_header_fields_and_continuation_lines():
    text = "-- Concept: x\n-- Definition: first part\n--   second part\n-- Grain: stay_id, hr\n-- Deviations: none.\nSELECT 1"
    assert parse_header(text) == {"concept": "x", "definition": "first part second part", "grain": "stay_id, hr", "deviations": "none."}


def test_dependencies_come_from_sql_table_references():
    refs = table_references("WITH a AS (SELECT * FROM mimiciv_derived.bg) SELECT * FROM a JOIN mimiciv_icu.icustays i ON true")
    assert refs == ("mimiciv_derived.bg", "mimiciv_icu.icustays")


def test_real_concepts_order_puts_every_dependency_first():
    concepts = load_concepts()
    deps = dependency_map(concepts)
    order = topological_order(set(concepts), deps)
    position = {name: i for i, name in enumerate(order)}
    assert all(position[d] < position[name] for name in order for d in deps[name].derived)
    # a few facts a clinician would check
    assert "mimiciv_derived.weight_durations" in deps["mimiciv_derived.urine_output_rate"].derived
    assert set(deps["mimiciv_derived.vasoactive_agent"].derived) >= {"mimiciv_derived.norepinephrine", "mimiciv_derived.vasopressin"}
    assert closure(["mimiciv_derived.norepinephrine_equivalent_dose"], deps) >= {"mimiciv_derived.milrinone", "mimiciv_derived.vasoactive_agent"}


def test_dependency_cache_follows_edits_and_ignores_a_damaged_file(toy_root, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    assert dependency_map(load_concepts(toy_root))["mimiciv_derived.long_stays"].derived == ("mimiciv_derived.stay_hours",)
    (cache,) = (tmp_path / "cache" / "concept-references").glob("duckdb-*.json")
    path = toy_root / "mimic_iv/demo/long_stays.sql"
    path.write_text(path.read_text().replace("FROM mimiciv_derived.stay_hours WHERE hours >= 48", "FROM mimiciv_derived.stays"))
    assert dependency_map(load_concepts(toy_root))["mimiciv_derived.long_stays"].derived == ("mimiciv_derived.stays",)
    cache.write_text("{not json", encoding="utf-8")
    assert dependency_map(load_concepts(toy_root))["mimiciv_derived.stay_hours"].derived == ("mimiciv_derived.stays",)
    assert len(json.loads(cache.read_text(encoding="utf-8"))) == len(load_concepts(toy_root))  # rewritten whole


@pytest.mark.slow
def test_a_second_process_reads_the_dependencies_without_parsing_sql(tmp_path):
    probe = ("import sys; from clinbench.concepts.catalog import load_concepts; "
             "from clinbench.concepts import graph; "
             "deps = graph.dependency_map(load_concepts(profile='mimic-code')); "
             "print(len(deps), 'mimiciv_derived.bg' in deps['mimiciv_derived.first_day_bg'].derived, 'sqlglot' in sys.modules, "
             "'importlib.metadata' in sys.modules, bool(graph._PARSER))")
    env = {**os.environ, "CLINBENCH_CACHE": str(tmp_path / "cache")}
    first = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    second = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    count = len(load_concepts(profile="mimic-code"))
    # DuckDB's parser reads the SQL (neither process imports sqlglot, 0.5 s with its parse, or importlib.metadata),
    # the first process only: the second reads what it found from the cache
    assert first.stdout.split() == [str(count), "True", "False", "False", "True"], first.stderr
    assert second.stdout.split() == [str(count), "True", "False", "False", "False"], second.stderr
    (cache,) = (tmp_path / "cache" / "concept-references").glob("duckdb-*.json")
    assert len(json.loads(cache.read_text(encoding="utf-8"))) == count  # the second read them from here


def test_the_dependency_cache_is_named_by_the_duckdb_version_whose_parser_read_the_sql(tmp_path, monkeypatch):
    from clinbench.concepts import graph

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    assert graph._cache_path().name == f"duckdb-{duckdb.__version__}.json"


def test_a_concept_file_duckdb_cannot_parse_or_that_is_no_select_is_named_with_what_to_do():
    with pytest.raises(ConceptError, match=r'^x\.sql: DuckDB cannot parse the SQL \(syntax error at or near "SELEC"\): fix the syntax$'):
        table_references("SELEC stay_id FROM mimiciv_icu.icustays", "x.sql")
    with pytest.raises(ConceptError, match=r"^y\.sql is not a SELECT: a concept file is one SELECT statement$"):
        table_references("CREATE TABLE t AS SELECT 1", "y.sql")


@pytest.mark.slow
def test_concurrent_and_serial_builds_give_the_same_tables_and_order(toy_root, toy_db, tmp_path):
    import shutil

    serial_db = tmp_path / "serial.duckdb"
    shutil.copy(toy_db, serial_db)
    concurrent = build_concepts(toy_db, workers=4)
    serial = build_concepts(serial_db, workers=1)
    assert [r.name for r in concurrent] == [r.name for r in serial]
    assert [r.status for r in concurrent] == [r.status for r in serial]
    for r in concurrent:
        if r.status == "built":
            sql = f"SELECT * FROM {r.name} ORDER BY ALL"
            assert _table(toy_db, sql) == _table(serial_db, sql), r.name


def test_a_build_leaves_the_callers_duckdb_threads_as_they_were(toy_root, toy_db):
    # the builders run single-threaded queries on a small machine; a caller holding the same file
    # shares the DuckDB instance, and its own queries keep the threads it set
    con = duckdb.connect(str(toy_db))
    try:
        con.execute("SET threads = 3")
        assert {r.status for r in build_concepts(toy_db, workers=2)} >= {"built"}
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 3
    finally:
        con.close()


def test_every_concept_header_declares_the_five_fields():
    for concept in load_concepts().values():
        if concept.kind != "concept" or concept.schema != "mimiciv_derived":
            continue
        missing = [f for f in ("concept", "definition", "source", "grain", "deviations") if not concept.header.get(f)]
        assert not missing, f"{concept.path} lacks {missing}"
        assert concept.header["concept"] == concept.name


def test_only_builds_the_closure_and_skips_absent_schemas(toy_root, toy_db):
    results = build_concepts(toy_db, only=["long_stays"])
    assert [r.name for r in results] == ["mimiciv_derived.stays", "mimiciv_derived.stay_hours", "mimiciv_derived.long_stays"]
    assert _table(toy_db, "SELECT stay_id FROM mimiciv_derived.long_stays") == [(100,)]
    assert _table(toy_db, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'lonely'") == [(0,)]

    everything = {r.name: r for r in build_concepts(toy_db)}
    assert everything["eicu_derived.unit_stays"].status == "skipped"
    assert "eicu_crd" in everything["eicu_derived.unit_stays"].note
    assert everything["mimiciv_derived.target_long_stay"].status == "built"
    assert everything["mimiciv_derived.stays"].status == "unchanged"


@pytest.mark.slow
def test_unchanged_concepts_are_skipped_until_sql_or_inputs_change(toy_root, toy_db):
    first = {r.name: r.status for r in build_concepts(toy_db)}
    assert first["mimiciv_derived.stay_hours"] == "built"
    second = {r.name: r.status for r in build_concepts(toy_db)}
    assert set(s for n, s in second.items() if not n.startswith("eicu")) == {"unchanged"}

    # new raw rows: everything reading icustays (and downstream) is rebuilt, patients-only is not
    con = duckdb.connect(str(toy_db))
    con.execute("INSERT INTO mimiciv_icu.icustays (subject_id, hadm_id, stay_id, intime, outtime) VALUES (3, 30, 300, '2150-01-01', '2150-01-05')")
    con.close()
    third = {r.name: r.status for r in build_concepts(toy_db)}
    assert third["mimiciv_derived.long_stays"] == "built"
    assert third["mimiciv_derived.lonely"] == "unchanged"
    assert _table(toy_db, "SELECT stay_id FROM mimiciv_derived.long_stays ORDER BY 1") == [(100,), (300,)]

    # raw rows edited in place, the row count kept (a corrected value): what reads them is rebuilt too
    con = duckdb.connect(str(toy_db))
    con.execute("UPDATE mimiciv_icu.icustays SET outtime = '2150-01-01 06:00' WHERE stay_id = 300")
    con.close()
    edited = {r.name: r.status for r in build_concepts(toy_db)}
    assert (edited["mimiciv_derived.long_stays"], edited["mimiciv_derived.lonely"]) == ("built", "unchanged")
    assert _table(toy_db, "SELECT stay_id FROM mimiciv_derived.long_stays ORDER BY 1") == [(100,)]
    again = {r.name: r.status for r in build_concepts(toy_db)}  # the edit is seen once: its own checkpoint is no change
    assert {s for n, s in again.items() if not n.startswith("eicu")} == {"unchanged"}

    # edited SQL: that concept and its dependents are rebuilt, its inputs are not
    path = toy_root / "mimic_iv/demo/stay_hours.sql"
    path.write_text(path.read_text() + "-- reviewed\n")
    fourth = {r.name: r.status for r in build_concepts(toy_db)}
    assert (fourth["mimiciv_derived.stays"], fourth["mimiciv_derived.stay_hours"], fourth["mimiciv_derived.long_stays"]) == ("unchanged", "built", "built")

    forced = {r.name: r.status for r in build_concepts(toy_db, only=["stays"], force=True)}
    assert forced == {"mimiciv_derived.stays": "built"}


def test_raw_tables_that_are_views_are_built_from_and_a_changed_view_rebuilds(toy_root, toy_db):
    """Databases that point at raw files (M4 makes views over Parquet) hold views, not tables."""
    con = duckdb.connect(str(toy_db))
    con.execute("ALTER TABLE mimiciv_icu.icustays RENAME TO icustays_rows")
    con.execute("CREATE VIEW mimiciv_icu.icustays AS SELECT * FROM mimiciv_icu.icustays_rows")
    con.close()
    first = {r.name: r.status for r in build_concepts(toy_db)}
    assert first["mimiciv_derived.long_stays"] == "built"
    assert _table(toy_db, "SELECT stay_id FROM mimiciv_derived.long_stays") == [(100,)]
    assert {r.name: r.status for r in build_concepts(toy_db)}["mimiciv_derived.long_stays"] == "unchanged"

    con = duckdb.connect(str(toy_db))  # the view now points elsewhere: same rows counted, other stays
    con.execute("CREATE OR REPLACE VIEW mimiciv_icu.icustays AS SELECT subject_id, hadm_id, stay_id + 1 AS stay_id, "
                "intime, outtime FROM mimiciv_icu.icustays_rows")
    con.close()
    assert {r.name: r.status for r in build_concepts(toy_db)}["mimiciv_derived.long_stays"] == "built"
    assert _table(toy_db, "SELECT stay_id FROM mimiciv_derived.long_stays") == [(101,)]


def test_an_unchanged_rebuild_reports_the_rows_built_also_in_a_database_built_before_row_counts(toy_root, toy_db):
    first = {r.name: r.rows for r in build_concepts(toy_db) if r.status == "built"}
    # a database built before the bookkeeping kept row counts: its rows are counted once, nothing is rebuilt
    con = duckdb.connect(str(toy_db))
    con.execute("ALTER TABLE clinbench_meta.concept_builds DROP COLUMN rows")
    con.close()
    old = {r.name: (r.status, r.rows) for r in build_concepts(toy_db) if r.name in first}
    assert old == {name: ("unchanged", rows) for name, rows in first.items()}
    assert first["mimiciv_derived.stays"] == 2
    assert {r.name: (r.status, r.rows) for r in build_concepts(toy_db) if r.name in first} == old


def test_failing_concept_keeps_previous_table_and_names_file_and_line(toy_root, toy_db):
    build_concepts(toy_db, only=["stay_hours"])
    path = toy_root / "mimic_iv/demo/stay_hours.sql"
    lines = path.read_text().splitlines()
    lines[6] = "FROM mimiciv_derived.stays AS s, no_such_column"  # line 7 of the file
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConceptError) as err:
        build_concepts(toy_db, only=["stay_hours"])
    assert f"{path}:7" in str(err.value)
    assert "\n" not in str(err.value)
    assert sorted(_table(toy_db, "SELECT stay_id, hours FROM mimiciv_derived.stay_hours")) == [(100, 72), (200, 12)]
    assert _table(toy_db, "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '__clinbench_tmp_%'") == [(0,)]


def test_build_leaves_verify_the_raw_fingerprints_it_computed(toy_root, toy_db, tmp_path, monkeypatch):
    from clinbench.concepts import manifest

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    build_concepts(toy_db)
    monkeypatch.setattr(manifest, "_FILE_CACHES", {})  # a new process: only what was persisted
    cached = manifest.file_cache(toy_db)
    con = duckdb.connect(str(toy_db), read_only=True)
    try:
        fresh = manifest.source_fingerprint(con, ["mimiciv_icu.icustays"])
    finally:
        con.close()
    assert cached == {"mimiciv_icu.icustays": fresh}
    monkeypatch.setattr(manifest, "load_concepts", lambda profile=None: load_concepts(toy_root, profile=profile))
    assert manifest.verify(toy_db, ["mimiciv_derived.target_long_stay"]) == []


def test_a_parquet_file_replaced_under_a_view_is_seen_by_the_build_and_by_verify(toy_root, toy_db, tmp_path,
                                                                                 monkeypatch):
    """M4's databases are views over Parquet files: their rows change with the files, not with the database
    file that keys the persisted raw fingerprints."""
    from clinbench.concepts import manifest

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(manifest, "load_concepts", lambda profile=None: load_concepts(toy_root, profile=profile))
    parquet = tmp_path / "icustays.parquet"
    con = duckdb.connect(str(toy_db))
    con.execute(f"COPY mimiciv_icu.icustays TO '{parquet}' (FORMAT parquet)")
    con.execute("DROP TABLE mimiciv_icu.icustays")
    con.execute(f"CREATE VIEW mimiciv_icu.icustays AS SELECT * FROM read_parquet('{parquet}')")
    con.close()
    assert {r.name: r.status for r in build_concepts(toy_db)}["mimiciv_derived.long_stays"] == "built"
    assert manifest.verify(toy_db, ["mimiciv_derived.target_long_stay"]) == []

    # the file rewritten with the same number of rows (stay 200 now long), the database file untouched
    writer = duckdb.connect()
    writer.execute(f"COPY (SELECT subject_id, hadm_id, stay_id, intime, CASE WHEN stay_id = 200 THEN outtime + "
                   f"INTERVAL 3 DAY ELSE outtime END AS outtime FROM read_parquet('{parquet}')) TO '{parquet}.new' "
                   "(FORMAT parquet)")
    writer.close()
    os.replace(f"{parquet}.new", parquet)
    monkeypatch.setattr(manifest, "_FILE_CACHES", {})  # a new process: only what was persisted
    stale = manifest.verify(toy_db, ["mimiciv_derived.target_long_stay"])
    assert [p.table for p in stale] == ["mimiciv_derived.target_long_stay"]
    assert {r.name: r.status for r in build_concepts(toy_db)}["mimiciv_derived.long_stays"] == "built"
    assert _table(toy_db, "SELECT stay_id FROM mimiciv_derived.long_stays ORDER BY 1") == [(100,), (200,)]
    assert manifest.verify(toy_db, ["mimiciv_derived.target_long_stay"]) == []


def test_schema_option_rewrites_derived_references(toy_root, toy_db):
    results = build_concepts(toy_db, only=["long_stays"], schema="derived_v2")
    assert [r.name for r in results][-1] == "derived_v2.long_stays"
    assert _table(toy_db, "SELECT stay_id FROM derived_v2.long_stays") == [(100,)]
    assert _table(toy_db, "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'") == [(0,)]


def test_bad_inputs_give_one_line_errors(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        build_concepts(tmp_path / "missing.duckdb")
    with pytest.raises(ConceptError, match="did you mean"):
        find_concept("vitalsigns")
    with pytest.raises(ConceptError, match="invalid schema"):
        build_concepts(tmp_path / "missing.duckdb", schema="Bad-Name")
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    with pytest.raises(DataError, match=r"not a valid DuckDB database file.*check that it is a DuckDB database, and retry$"):
        build_concepts(text)


def test_inlined_statement_runs_without_derived_schema_and_matches(toy_root, toy_db, tmp_path):
    build_concepts(toy_db)
    sql = inline_sql("long_stays", load_concepts(toy_root))
    assert table_references(sql) == ("mimiciv_icu.icustays",)
    raw = tmp_path / "raw.duckdb"
    con = duckdb.connect(str(raw))
    con.execute(f"ATTACH '{toy_db}' AS src (READ_ONLY)")
    con.execute("CREATE SCHEMA mimiciv_icu")
    con.execute("CREATE TABLE mimiciv_icu.icustays AS SELECT * FROM src.mimiciv_icu.icustays")
    assert con.execute(sql).fetchall() == [(100,)]


def _inlined_by_sqlglot(name: str, concepts) -> str:
    """inline_sql as it was before it reused each concept's text: one tree, printed whole by sqlglot."""
    import sqlglot
    from sqlglot import exp

    from clinbench.concepts.inline import _point_at_ctes, _with_key, cte_name

    target = find_concept(name, concepts)
    deps = dependency_map(concepts)
    order = topological_order(closure([target.qualified], deps), deps)
    order.remove(target.qualified)
    tree = lambda c: _point_at_ctes(sqlglot.parse_one(c.sql, read="duckdb"))  # noqa: E731
    ctes = [exp.CTE(this=tree(concepts[q]), alias=exp.TableAlias(this=exp.to_identifier(cte_name(q)))) for q in order]
    main = tree(target)
    key = _with_key(main)
    own = main.args.get(key)
    if ctes:
        main.set(key, exp.With(expressions=ctes + (list(own.expressions) if own else [])))
    inlined = ", ".join(cte_name(q) for q in order) if order else "none"
    return (f"-- {target.name} as one statement ({target.path.name}); dependencies inlined as CTEs: {inlined}\n"
            f"{main.sql(dialect='duckdb', pretty=True)}\n")


@pytest.mark.parametrize("profile", ["m4bench", "mimic-code"])
def test_inlined_statement_is_sqlglots_print_of_the_whole_tree(profile):
    """Put together from each concept's own text, the statement is byte for byte what sqlglot prints for
    the one inlined tree: a concept with no dependencies (its header kept), one with its own CTEs under
    inlined ones, and the deepest chains."""
    concepts = load_concepts(profile=profile)
    for name in ("icustay_times", "height", "kdigo_stages", "sofa", "sepsis3", "urine_output_rate"):
        assert inline_sql(name, concepts) == _inlined_by_sqlglot(name, concepts), name


def test_an_edited_concept_is_inlined_as_it_now_reads(toy_root):
    before = inline_sql("long_stays", load_concepts(toy_root))
    path = toy_root / "mimic_iv/demo/stays.sql"
    path.write_text(path.read_text().replace("SELECT stay_id, intime", "SELECT stay_id, intime, 7 AS edited"))
    after = inline_sql("long_stays", load_concepts(toy_root))
    assert "edited" not in before and "7 AS edited" in after


@pytest.fixture(scope="module")
def raw_demo(demo_db, tmp_path_factory) -> Path:
    """A copy of the demo's raw tables only: no mimiciv_derived schema at all."""
    raw = tmp_path_factory.mktemp("raw") / "raw.duckdb"
    con = duckdb.connect(str(raw))
    con.execute(f"ATTACH '{demo_db}' AS src (READ_ONLY)")
    for schema, table in con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'src' AND schema_name IN ('mimiciv_hosp', 'mimiciv_icu')"
    ).fetchall():
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        con.execute(f"CREATE TABLE {schema}.{table} AS SELECT * FROM src.{schema}.{table}")
    con.close()
    return raw


@pytest.mark.parametrize(
    "name",
    ["urine_output_rate", "norepinephrine_equivalent_dose", "first_day_lab", "icustay_hourly", "creatinine_baseline", "first_day_gcs", "bg"],
)
@pytest.mark.slow
def test_inlined_concept_on_raw_demo_equals_built_table(demo_db, raw_demo, name):
    """The single statement, run where no derived schema exists, returns the built table's rows."""
    concept = find_concept(name)
    sql = inline_sql(name).rstrip().rstrip(";")
    con = duckdb.connect(str(raw_demo), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchone() == (0,)
        con.execute(f"CREATE TEMP TABLE inlined AS {sql}")
        con.execute(f"ATTACH '{demo_db}' AS src (READ_ONLY)")
        columns = [r[0] for r in con.execute("DESCRIBE inlined").fetchall()]
        # doubles compared at 1e-9: a mean over many rows can differ in its last bit with row order
        rounded = ", ".join(f"CASE WHEN typeof({c}) = 'DOUBLE' THEN round({c}::DOUBLE, 9)::VARCHAR ELSE {c}::VARCHAR END" for c in columns)
        ours = con.execute(f"SELECT {rounded} FROM inlined EXCEPT ALL SELECT {rounded} FROM src.{concept.qualified}").fetchall()
        theirs = con.execute(f"SELECT {rounded} FROM src.{concept.qualified} EXCEPT ALL SELECT {rounded} FROM inlined").fetchall()
        count = con.execute("SELECT count(*) FROM inlined").fetchone()[0]
    finally:
        con.close()
    assert count > 0
    assert ours == [] and theirs == []


@pytest.mark.slow
def test_target_sql_is_self_contained():
    concepts = load_concepts()
    targets = [c for c in concepts.values() if c.kind == "target" and c.schema == "mimiciv_derived"]
    assert len(targets) == 15
    sql = target_sql(targets[0].name)
    assert not any(ref.startswith("mimiciv_derived.") for ref in table_references(sql))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clinbench", "concepts", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_cli_list_show_sql_and_build(empty_db):
    listed = _cli("list")
    assert listed.returncode == 0, listed.stderr
    assert "urine_output_rate" in listed.stdout and "weight_durations" in listed.stdout

    shown = _cli("show", "vitalsign")
    assert shown.returncode == 0 and "Grain:" in shown.stdout and "223761" in shown.stdout

    inlined = _cli("sql", "first_day_urine_output", "--inline")
    assert inlined.returncode == 0 and "mimiciv_derived_urine_output" in inlined.stdout
    assert not any(ref.startswith("mimiciv_derived.") for ref in table_references(inlined.stdout))

    first = _cli("build", str(empty_db), "--only", "icustay_times,age")
    assert first.returncode == 0, first.stderr
    assert "built" in first.stdout and "icustay_times" in first.stdout and "mimiciv_derived.age" in first.stdout
    again = _cli("build", str(empty_db), "--only", "icustay_times")
    assert "unchanged" in again.stdout

    missing = _cli("build", "/nonexistent/x.duckdb")
    assert missing.returncode == 2 and "error:" in missing.stderr and "does not exist" in missing.stderr


def test_schema_rewrite_touches_only_derived_references():
    from clinbench.concepts.build import rewrite_schema

    sql = "SELECT * FROM mimiciv_derived.bg JOIN my_mimiciv_derived.x ON true -- mimiciv_derived_bg stays"
    assert rewrite_schema(sql, "d2") == "SELECT * FROM d2.bg JOIN my_mimiciv_derived.x ON true -- mimiciv_derived_bg stays"
    assert rewrite_schema(sql, "mimiciv_derived") == sql


def test_progress_reports_start_and_result_of_each_concept(toy_root, toy_db):
    events = []
    build_concepts(toy_db, only=["stay_hours"], progress=lambda name, i, n, result: events.append((name, i, n, result and result.status)))
    assert events == [
        ("mimiciv_derived.stays", 0, 2, None),
        ("mimiciv_derived.stays", 0, 2, "built"),
        ("mimiciv_derived.stay_hours", 1, 2, None),
        ("mimiciv_derived.stay_hours", 1, 2, "built"),
    ]


@pytest.mark.slow
def test_cli_only_concepts_the_database_cannot_hold_is_an_error(tmp_path):
    import duckdb

    from clinbench.ehr.schema import create_empty

    db = tmp_path / "eicu.duckdb"
    with duckdb.connect(str(db)) as con:
        create_empty(con, "eicu")
    done = _cli("build", str(db), "--only", "icustay_times")
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: none of icustay_times can be built in {db} (no mimiciv_icu schema in the "
                                   "database): use a database that holds the source tables they need")


SOFA_24H_CLOSURE = [  # the m4bench profile's SOFA chain: every table the sofa-24h reference reads, transitively
    # (its helpers, sofa_hourly_worst, sofa_points and sofa_first_day_worst, are part of the statements that read them)
    "bg", "blood_differential", "chemistry", "coagulation", "complete_blood_count", "dobutamine", "dopamine", "enzyme",
    "epinephrine", "first_day_gcs", "first_day_lab", "first_day_sofa", "first_day_urine_output", "first_day_vitalsign",
    "gcs", "icustay_hourly", "icustay_times", "norepinephrine", "oxygen_delivery", "target_sofa_24h", "urine_output",
    "urine_output_rate", "ventilation", "ventilator_setting", "vitalsign", "weight_durations"]


@pytest.mark.slow
def test_only_a_task_builds_exactly_its_references_closure_and_a_rerun_builds_nothing(tmp_path):
    from typer.testing import CliRunner

    from clinbench.cli import app
    from clinbench.ehr.schema import create_empty

    db = tmp_path / "empty.duckdb"
    with duckdb.connect(str(db)) as con:
        create_empty(con, "mimic-iv")
    first = CliRunner().invoke(app, ["concepts", "build", str(db), "--only", "mimic-sofa-24h"])
    assert first.exit_code == 0, first.output
    assert "26 built, 0 unchanged, 0 skipped" in first.output
    built = sorted(n.split(".")[1] for (n,) in duckdb.connect(str(db), read_only=True).execute(
        "SELECT name FROM clinbench_meta.concept_builds").fetchall())
    assert built == SOFA_24H_CLOSURE
    again = CliRunner().invoke(app, ["concepts", "build", str(db), "--only", "sofa-24h"])  # the reference's name
    assert "0 built, 26 unchanged, 0 skipped" in again.output
