"""End to end on synthetic databases: reference agent, schema variants, reference-validity variants.

Runs for every task on small synthetic MIMIC-IV and eICU databases with every target built
by ``build_concepts``.
"""

from __future__ import annotations

import duckdb
import pytest

from clinbench.derive.catalogue import load_catalogue
from clinbench.derive.conditions import reference_sql
from clinbench.derive.score import score_output
from clinbench.derive.workspace import prepare_database, prepare_workspace

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

TASKS = list(load_catalogue().values())


def _build(tmp_path_factory, database: str):
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_eicu, synth_mimic_iv

    path = tmp_path_factory.mktemp(f"synth-{database}") / "db.duckdb"
    make = synth_mimic_iv if database == "mimic-iv" else synth_eicu
    make(path, patients=20, seed=3)
    build_concepts(path)
    return path


@pytest.fixture(scope="session")
def synth_dbs(tmp_path_factory):
    cache: dict[str, object] = {}

    def get(database: str):
        if database not in cache:
            cache[database] = _build(tmp_path_factory, database)
        return cache[database]

    return get


def _has_table(db, qualified: str) -> bool:
    schema, name = qualified.split(".")
    con = duckdb.connect(str(db), read_only=True)
    try:
        return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?",
                                [schema, name]).fetchone()[0])
    finally:
        con.close()


def _db_for(synth_dbs, spec):
    db = synth_dbs(spec.database)
    assert _has_table(db, spec.target_table), f"build_concepts did not build {spec.target_table}"
    return db


STANDARD = [t for t in TASKS if t.mode == "standard" and t.database == "mimic-iv"]


@pytest.mark.parametrize("spec", STANDARD, ids=[t.id for t in STANDARD])
def test_no_kept_derived_relation_carries_the_answer_columns(spec, synth_dbs, tmp_path):
    """A standard workspace keeps intermediate concepts, but none holding (nearly) every scored column.

    Catches an intermediate added between the raw layer and a target (e.g. per-charting
    ventilation status, scored SOFA points) that the task's drop list forgot.
    """
    ws = prepare_workspace(spec.id, "no-skill", "native", _db_for(synth_dbs, spec), tmp_path / "ws")
    con = duckdb.connect(str(ws / "database.duckdb"), read_only=True)
    try:
        columns: dict[str, set[str]] = {}
        for table, column in con.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'mimiciv_derived'"
        ).fetchall():
            columns.setdefault(table, set()).add(column)
    finally:
        con.close()
    assert columns, "standard mode keeps the intermediate concepts"
    scored = set(spec.scored_columns)
    # every scored column, or all but one (a total is one sum away from its parts)
    leaking = sorted(t for t, cols in columns.items() if len(scored & cols) >= max(1, len(scored) - 1))
    assert leaking == [], f"{spec.id}: {leaking} hold every scored column; add them to drop in task.toml"


def _rows(db, sql):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return sorted(con.execute(sql).fetchall(), key=repr)
    finally:
        con.close()


# One masked raw database per variant serves every reference SQL (they read source tables only).
REFERENCES = {t.reference: t for t in TASKS if t.mode == "raw"}


@pytest.mark.parametrize("variant", ["obfuscated", "restructured"])
def test_schema_variant_rewrite_returns_native_rows(variant, synth_dbs):
    from clinbench.derive.schema_variants import rewrite_sql

    checked = 0
    for database in ("mimic-iv", "eicu"):
        specs = [t for t in REFERENCES.values() if t.database == database]
        db = synth_dbs(database)
        other = prepare_database(specs[0], variant, db)
        for spec in specs:
            sql = reference_sql(spec)
            # the built target is the native result of the same SQL (the concept builder runs it)
            expected = _rows(db, f"SELECT * FROM {spec.target_table}")
            assert _rows(other.path, rewrite_sql(sql, other.plan)) == expected, spec.id
            assert expected, f"{spec.id}: no rows to compare"
            checked += 1
    assert checked == len(REFERENCES)


def test_obfuscated_workspace_hides_names(synth_dbs, tmp_path):
    db = synth_dbs("mimic-iv")
    ws = prepare_workspace("mimic-sofa-24h", "no-skill", "obfuscated", db, tmp_path / "ws")
    con = duckdb.connect(str(ws / "database.duckdb"), read_only=True)
    names = con.execute("SELECT schema_name, table_name, column_name FROM duckdb_columns()").fetchall()
    con.close()
    flat = " ".join(" ".join(n) for n in names)
    for word in ("chartevents", "mimiciv", "stay_id", "valuenum", "sofa"):
        assert word not in flat
    assert "opaque" in (ws / "prompt.md").read_text()


def test_rawsql_condition_runs_in_workspace(synth_dbs, tmp_path):
    """The raw-SQL skill is one statement that reproduces the reference inside the workspace."""
    db = synth_dbs("mimic-iv")
    spec = load_catalogue()["mimic-kdigo-48h-raw"]
    assert _has_table(db, spec.target_table)
    for variant in ("native", "restructured"):
        ws = prepare_workspace(spec.id, "with-skill-rawsql", variant, db, tmp_path / variant)
        text = (ws / "skills" / "reference-sql" / "SKILL.md").read_text()
        sql = text.split("```sql\n", 1)[1].rsplit("```", 1)[0]
        cols = ", ".join(spec.required_columns)
        got = _rows(ws / "database.duckdb", f"SELECT {cols} FROM ({sql})")
        assert got == _rows(db, f"SELECT {cols} FROM {spec.target_table}")


VARIANT_TASKS = [t for t in TASKS if t.mode == "standard" or t.reference not in {u.reference for u in TASKS if u.mode == "standard"}]


def _changed_columns(db, spec, variant_table: str) -> set[str]:
    """Scored columns on which the variant's rows differ from the target (within tolerance)."""
    on = " AND ".join(f"r.{k} = v.{k}" for k in spec.keys)
    only_one_side = _rows(db, f"SELECT count(*) FROM {spec.target_table} r FULL JOIN {variant_table} v ON {on} "
                              f"WHERE r.{spec.keys[0]} IS NULL OR v.{spec.keys[0]} IS NULL")[0][0]
    if only_one_side:
        return set(spec.scored_columns)
    changed = set()
    for col in spec.scored_columns:
        tol = spec.tolerance(col)
        differs = f"r.{col} IS DISTINCT FROM v.{col}"
        if tol:
            differs = f"(r.{col} IS NULL) <> (v.{col} IS NULL) OR abs(r.{col} - v.{col}) > {tol} + 1e-9"
        if _rows(db, f"SELECT count(*) FROM {spec.target_table} r JOIN {variant_table} v ON {on} WHERE {differs}")[0][0]:
            changed.add(col)
    return changed


def test_reference_validity_variants_lose_only_changed_columns(synth_dbs, tmp_path):
    from clinbench.agents.builtin import run_builtin
    from clinbench.concepts.variants import list_variants

    variants = list_variants()
    assert len(variants) >= 4, [v.name for v in variants]
    checked = []
    for v in variants:
        for spec in (t for t in VARIANT_TASKS if t.reference == v.reference):
            db = synth_dbs(spec.database)
            if not _has_table(db, v.table):
                continue
            out = run_builtin("variant", tmp_path / spec.id / v.label, spec.id, db, variant=v.name)
            result = score_output(spec.id, out, db)
            changed = _changed_columns(db, spec, v.table)
            lost = {c for c, col in result.columns.items() if col.match_rate < 1.0}
            assert lost == changed, (spec.id, v.name)
            assert (result.reward < 1.0) == bool(changed)
            checked.append((v.name, sorted(changed)))
    if not checked:
        pytest.skip("no variant table built in the synthetic database")
    # a variant that changes nothing on the synthetic data would not test the scorer
    assert any(changed for _, changed in checked), checked


@pytest.mark.parametrize("database", ["mimic-iv", "eicu"])
def test_one_command_runs_every_control_on_every_task(database, synth_dbs, tmp_path, monkeypatch):
    """`run --condition all` with the reference agent: all six conditions on every task, each run
    1.0, no task × condition pair skipped, and with-skill-all is in the statistics."""
    import json

    from typer.testing import CliRunner

    from clinbench.records.store import Store
    from clinbench.cli import app
    from clinbench.derive.catalogue import CONDITIONS

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db, out = synth_dbs(database), tmp_path / "camp"
    tasks = [t for t in TASKS if t.database == database]
    result = CliRunner().invoke(app, ["run", "--db", str(db), "--out", str(out), "--task", "all", "--condition", "all",
                                      "--agent", "reference", "--jobs", "2"])
    assert result.exit_code == 0, result.output
    # every task offers all six conditions: nothing is skipped
    every_pair = {(t.id, c) for t in tasks for c in CONDITIONS}
    assert len(CONDITIONS) == 6 and len(every_pair) == 6 * len(tasks)
    runs = Store.open(out).runs()
    assert {(r["task"], r["condition"]) for r in runs} == every_pair and len(runs) == len(every_pair)
    # the reference agent scores 1.0, strict, on every task under every condition (each task has reference
    # rows on the synthetic database, or run would have skipped it as unscorable)
    wrong = [(r["task"], r["condition"], r["reward"], r["error"]) for r in runs if r["reward"] != 1.0 or not r["strict"]]
    assert not wrong, wrong
    assert "skipped" not in result.output and "unsupported" not in result.output
    stats = CliRunner().invoke(app, ["stats", str(out), "--compare", "with-skill:with-skill-all", "--json"])
    summary = json.loads(stats.output)
    assert (summary["condition_b"], summary["tasks"], summary["mean_b"]) == ("with-skill-all", len(tasks), 1.0)
