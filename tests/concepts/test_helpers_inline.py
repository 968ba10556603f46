"""A helper is part of the statement of each table that reads it: the statement's lines are the files' lines,
an error in a helper names the helper's file and line, and SQL the build could not point at the CTE is refused."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clinbench.concepts.catalog import Concept, load_concepts, parse_header
from clinbench.concepts.graph import Dependencies, dependency_map
from clinbench.concepts.helpers import inputs, statement
from clinbench.errors import ConceptError


def _concept(folder: Path, name: str, sql: str, helper: bool = False) -> Concept:
    path = folder / f"{name}.sql"
    header = f"-- Concept: {name}\n" + ("-- Helper: read by the others\n" if helper else "")
    path.write_text(header + sql, encoding="utf-8")
    return Concept(name, "concept", "score", path, "mimiciv_derived", name, parse_header(path.read_text(encoding="utf-8")))


def _world(tmp_path: Path, files: dict[str, tuple[str, bool]], reads: dict[str, tuple[str, ...]]):
    concepts = {f"mimiciv_derived.{n}": _concept(tmp_path, n, sql, helper) for n, (sql, helper) in files.items()}
    deps = {q: Dependencies(tuple(f"mimiciv_derived.{r}" for r in reads.get(q.split(".")[1], ())), ("mimiciv_icu.icustays",))
            for q in concepts}
    return concepts, deps


def test_the_sofa_statement_is_its_files_line_for_line_with_each_helper_once():
    concepts = load_concepts(profile="m4bench")
    deps = dependency_map(concepts)
    made = statement("mimiciv_derived.sofa", concepts, deps, "mimiciv_derived")
    lines = made.sql.splitlines()
    assert [p.name for _, _, p in made.pieces] == ["sofa_first_day_worst.sql", "sofa_hourly_worst.sql", "sofa_points.sql",
                                                   "sofa.sql"]
    for first, count, path in made.pieces:  # every line of every file, at the line locate names
        text = path.read_text(encoding="utf-8").rstrip().splitlines()
        assert len(text) == count
        for number in range(1, count + 1):
            assert made.locate(first + number - 1) == (path, number)
            assert lines[first + number - 2] == text[number - 1].replace("mimiciv_derived.sofa_points", '"sofa_points"') \
                .replace("mimiciv_derived.sofa_hourly_worst", '"sofa_hourly_worst"') \
                .replace("mimiciv_derived.sofa_first_day_worst", '"sofa_first_day_worst"')
    assert "mimiciv_derived.sofa_points" not in made.sql and "mimiciv_derived.sofa_hourly_worst" not in made.sql
    # what sofa reads, once its helpers are in it: the tables they read, never a helper
    read = inputs(deps, concepts)["mimiciv_derived.sofa"].derived
    assert "mimiciv_derived.icustay_hourly" in read and not {d for d in read if concepts[d].helper}
    # a concept that reads no helper runs as its file
    bg = statement("mimiciv_derived.bg", concepts, deps, "mimiciv_derived")
    assert bg.sql == concepts["mimiciv_derived.bg"].sql  # byte for byte: its SQL hash is what a build before had


def test_an_error_in_a_helper_is_located_in_the_helpers_file(tmp_path):
    concepts, deps = _world(tmp_path, {
        "inner": ("SELECT stay_id,\n    no_such_column AS x\nFROM mimiciv_icu.icustays\n", True),
        "outer": ("SELECT o.stay_id\nFROM mimiciv_derived.inner AS o\n", False),
    }, {"outer": ("inner",)})
    made = statement("mimiciv_derived.outer", concepts, deps, "mimiciv_derived")
    con = duckdb.connect()
    con.execute("CREATE SCHEMA mimiciv_icu; CREATE TABLE mimiciv_icu.icustays (stay_id INTEGER)")
    with pytest.raises(duckdb.BinderException) as failed:
        con.execute(made.sql)
    line = int(str(failed.value).split("LINE ")[1].split(":")[0])
    assert made.locate(line) == (tmp_path / "inner.sql", 4)  # its header is 2 lines, the bad column the 2nd of the SQL


def test_a_schema_rename_points_the_helper_at_its_cte_too(tmp_path):
    concepts, deps = _world(tmp_path, {
        "inner": ("SELECT stay_id FROM mimiciv_icu.icustays\n", True),
        "outer": ("SELECT inner.stay_id FROM mimiciv_derived.inner JOIN mimiciv_derived.other USING (stay_id)\n", False),
        "other": ("SELECT stay_id FROM mimiciv_icu.icustays\n", False),
    }, {"outer": ("inner", "other")})
    made = statement("mimiciv_derived.outer", concepts, deps, "d2")
    assert 'FROM "inner" JOIN d2.other' in made.sql and made.sql.startswith('WITH "inner" AS (')  # a keyword, quoted


def test_sql_the_build_cannot_point_at_the_cte_is_refused_with_what_to_write(tmp_path):
    quoted, _ = _world(tmp_path, {
        "inner": ("SELECT stay_id FROM mimiciv_icu.icustays\n", True),
        "outer": ('SELECT stay_id FROM "mimiciv_derived"."inner"\n', False),
    }, {})
    deps = {"mimiciv_derived.inner": Dependencies((), ()), "mimiciv_derived.outer": Dependencies(("mimiciv_derived.inner",), ())}
    with pytest.raises(ConceptError, match=r"outer\.sql reads the helper mimiciv_derived\.inner in a form the build "
                                           r"cannot point at its CTE \(quoted\?\): write it as mimiciv_derived\.inner$"):
        statement("mimiciv_derived.outer", quoted, deps, "mimiciv_derived")

    # a CTE of the helper's name would silently take its place: every way of writing one is refused
    for cte in ("inner AS (SELECT 1 AS stay_id)", '"inner" AS (SELECT 1 AS stay_id)', "inner(stay_id) AS (SELECT 1)",
                '"INNER" (stay_id) AS MATERIALIZED (SELECT 1)', "x AS (SELECT 2), inner AS NOT MATERIALIZED (SELECT 1 AS stay_id)"):
        shadowed, _ = _world(tmp_path, {
            "inner": ("SELECT stay_id FROM mimiciv_icu.icustays\n", True),
            "outer": (f"WITH {cte}\nSELECT * FROM mimiciv_derived.inner\n", False),
        }, {})
        with pytest.raises(ConceptError, match=r"outer\.sql names a CTE inner, as the helper it reads: rename the CTE$"):
            statement("mimiciv_derived.outer", shadowed, deps, "mimiciv_derived")
    # a table or CTE whose name merely ends in the helper's, or the helper itself, is not one
    fine, _ = _world(tmp_path, {
        "inner": ("SELECT stay_id FROM mimiciv_icu.icustays\n", True),
        "outer": ("WITH my_inner AS (SELECT 1 AS stay_id)\nSELECT * FROM mimiciv_derived.inner JOIN my_inner USING (stay_id)\n",
                  False),
    }, {})
    assert 'FROM "inner" JOIN my_inner' in statement("mimiciv_derived.outer", fine, deps, "mimiciv_derived").sql


def test_concepts_sql_prints_the_statement_the_build_ran(tmp_path):
    """`clinbench concepts sql sofa` is runnable as printed on a built database (no helper table exists) and gives
    the rows of the sofa table the build made."""
    import subprocess
    import sys

    from clinbench.concepts.build import build_concepts
    from clinbench.concepts.manifest import table_hash
    from clinbench.ehr.synth import synth_mimic_iv

    db = tmp_path / "synth.duckdb"
    synth_mimic_iv(db, patients=20, seed=0)
    build_concepts(db, targets=False)
    printed = subprocess.run([sys.executable, "-m", "clinbench", "concepts", "sql", "sofa"], capture_output=True, text=True)
    assert printed.returncode == 0, printed.stderr
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE TABLE mimiciv_derived.sofa_again AS {printed.stdout}")
        rows, digest = table_hash(con, "mimiciv_derived.sofa")
        assert table_hash(con, "mimiciv_derived.sofa_again") == (rows, digest) and rows > 0
