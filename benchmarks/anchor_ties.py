"""The columns M4's own SQL leaves to the engine, compared after all (``Profile.undetermined``).

M4's vendored copy picks one row of several tied ones with a ROW_NUMBER whose ORDER BY does not
separate them (the lowest GCS charted twice; two cultures drawn at the same time) or joins a set
into a string in no stated order (``GROUP_CONCAT(DISTINCT dialysis_type)``). Which row M4's engine
takes is not part of its definition: the same SQL run again on the same data picks others. So
``compare_concepts`` leaves those columns out; this module compares them in two steps:

1. membership: M4's own file with each tie-breaking ROW_NUMBER turned into RANK gives, for every
   key, every row any tie-break could give (its candidates). Every row of clinbench's table must
   be one of its key's candidates (and, as a check of this module, so must every row of M4's
   own table). Where the tied rows are aggregated afterwards (oxygen_delivery's MAX over the kept
   flow row), RANK would merge them: M4's file is run once with each tie broken upward and once
   downward instead, and each undetermined cell must hold one of those forms' values for its key.
   ``first_day_rrt``'s dialysis types are compared as sets.
2. alignment: a copy of M4's database takes clinbench's choice in those columns (M4's values
   replaced by clinbench's, key by key), and every M4 file that reads them, directly or through
   another, is run again there. Then every table and every reference must equal clinbench's on
   every column, the undetermined ones included: given the same choice among ties, nothing
   downstream (APS III's GCS points and total, sepsis3, the references) differs.
"""

from __future__ import annotations

import itertools
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from anchor_runs import AnchorMissing, m4_concept_files


@dataclass(frozen=True)
class Tie:
    table: str  # mimiciv_derived.<table>
    keys: tuple[str, ...]  # one row per key in the table
    columns: tuple[str, ...]  # what the tie decides
    ranked: tuple[str, ...] = ()  # the ROW_NUMBER() expressions of M4's file that leave ties (turned into RANK)
    as_set: str | None = None  # a column holding a ', '-joined set in no order (compared as a set)
    # (an expression of M4's file, its two tie-broken forms), for each expression that leaves ties: where the
    # tied rows are aggregated afterwards, so RANK would merge them, M4's file is run once per combination of
    # forms; each undetermined cell must hold one of the combinations' values for its key
    orders: tuple[tuple[str, tuple[str, str]], ...] = ()
    # with orders: the rows of each group (e.g. a stay's weights) must be those of one combination, as a whole;
    # M4's own rows are checked by the finer ``m4_group``: M4's engine may break two ties of one stay in
    # opposite directions, an outcome no single combination gives
    group: tuple[str, ...] = ()
    m4_group: tuple[str, ...] = ()


TIES = (
    Tie("suspicion_of_infection", ("subject_id", "ab_id"), ("specimen", "positive_culture"),
        ranked=("ROW_NUMBER() OVER (PARTITION BY subject_id, ab_id ORDER BY chartdate NULLS FIRST, charttime)",)),
    Tie("first_day_gcs", ("stay_id",), ("gcs_motor", "gcs_verbal", "gcs_eyes", "gcs_unable"),
        ranked=("ROW_NUMBER() OVER (PARTITION BY g.stay_id ORDER BY g.gcs NULLS FIRST)",)),
    Tie("first_day_rrt", ("stay_id",), ("dialysis_type",), as_set="dialysis_type"),
    # two flows of one item stored at the same instant (a duplicated charting, one copy without a value)
    Tie("oxygen_delivery", ("subject_id", "charttime"), ("o2_flow", "o2_flow_additional"),
        orders=(("ORDER BY storetime DESC) AS rn", ("ORDER BY storetime DESC, valuenum DESC NULLS LAST) AS rn",
                                                   "ORDER BY storetime DESC, valuenum ASC NULLS FIRST) AS rn")),)),
    # two weights of one type charted at the same instant: which one starts at intime - 2 h, which one gets
    # the zero-length interval and which one is back-filled are each left to the engine
    Tie("weight_durations", ("stay_id",), ("starttime", "endtime", "weight"), group=("stay_id",),
        m4_group=("stay_id", "starttime"), orders=(
        ("ROW_NUMBER() OVER (PARTITION BY stay_id, weight_type ORDER BY charttime NULLS FIRST) AS rn",
         ("ROW_NUMBER() OVER (PARTITION BY stay_id, weight_type ORDER BY charttime NULLS FIRST, weight) AS rn",
          "ROW_NUMBER() OVER (PARTITION BY stay_id, weight_type ORDER BY charttime NULLS FIRST, weight DESC) AS rn")),
        ("LEAD(starttime) OVER (PARTITION BY stay_id ORDER BY starttime NULLS FIRST)",
         ("LEAD(starttime) OVER (PARTITION BY stay_id ORDER BY starttime NULLS FIRST, weight_type, weight)",
          "LEAD(starttime) OVER (PARTITION BY stay_id ORDER BY starttime NULLS FIRST, weight_type DESC, weight DESC)")),
        ("ROW_NUMBER() OVER (PARTITION BY wt1.stay_id ORDER BY wt1.starttime NULLS FIRST) AS rn",
         ("ROW_NUMBER() OVER (PARTITION BY wt1.stay_id ORDER BY wt1.starttime NULLS FIRST, wt1.weight_type, wt1.weight) AS rn",
          "ROW_NUMBER() OVER (PARTITION BY wt1.stay_id ORDER BY wt1.starttime NULLS FIRST, wt1.weight_type DESC, "
          "wt1.weight DESC) AS rn")),
    )),
)


def _target(sql_file: Path) -> str:
    return sql_file.stem


def _renamed(tie: Tie, text: str, name: str) -> str:
    return re.sub(rf"\bmimiciv_derived\.{tie.table}\b", f"mimiciv_derived.{name}", text)


def _forms_sql(tie: Tie, text: str) -> list[str]:
    """M4's file for ``tie.table`` once per combination of tie-broken forms, building ``<table>_form<i>``."""
    for expr, _ in tie.orders:
        if expr not in text:
            raise AnchorMissing(f"M4's {tie.table}.sql no longer holds {expr!r}: update benchmarks/anchor_ties.py")
    sqls = []
    for i, choice in enumerate(itertools.product(*(forms for _, forms in tie.orders))):
        variant = text
        for (expr, _), form in zip(tie.orders, choice):
            variant = variant.replace(expr, form)
        sqls.append(_renamed(tie, variant, f"{tie.table}_form{i}"))
    return sqls


def _candidates_sql(tie: Tie, text: str) -> str:
    """M4's file for ``tie.table`` building ``<table>_candidates`` with RANK in place of each tie's ROW_NUMBER."""
    for expr in tie.ranked:
        found = text.count(expr)
        if not found:
            raise AnchorMissing(f"M4's {tie.table}.sql no longer holds {expr!r}: update benchmarks/anchor_ties.py")
        text = text.replace(expr, "RANK" + expr[len("ROW_NUMBER"):])
    return _renamed(tie, text, f"{tie.table}_candidates")


def _not_a_candidate(con, table: str, candidates: str, columns: list[str]) -> int:
    match = " AND ".join(f'k."{c}" IS NOT DISTINCT FROM t."{c}"' for c in columns)
    return con.execute(f"SELECT count(*) FROM {table} AS t WHERE NOT EXISTS "
                       f"(SELECT 1 FROM {candidates} AS k WHERE {match})").fetchone()[0]


def _as_set(column: str, alias: str = "") -> str:
    return f"list_sort(string_split({alias + '.' if alias else ''}\"{column}\", ', '))"


def membership(ours_db: Path, m4_db: Path, m4: Path, work: Path) -> dict[str, str]:
    """Step 1: table -> "" when clinbench's (and M4's) rows are among M4's candidates, else what is not; prints figures."""
    files = {_target(f): f for f in m4_concept_files(m4)}
    scratch = work / "m4_ties.duckdb"
    shutil.copy(m4_db, scratch)
    con = duckdb.connect(str(scratch))
    found = {}
    try:
        con.execute(f"ATTACH '{ours_db}' AS ours (READ_ONLY)")
        for tie in TIES:
            ours, theirs = f"ours.mimiciv_derived.{tie.table}", f"mimiciv_derived.{tie.table}"
            keys = ", ".join(tie.keys)
            if tie.as_set:
                on = " AND ".join(f"o.{k} = t.{k}" for k in tie.keys)
                bad = con.execute(f"SELECT count(*) FROM {ours} o FULL JOIN {theirs} t ON {on} "
                                  f"WHERE o.{tie.keys[0]} IS NULL OR t.{tie.keys[0]} IS NULL "
                                  f"OR {_as_set(tie.as_set, 'o')} IS DISTINCT FROM {_as_set(tie.as_set, 't')}").fetchone()[0]
                multi = con.execute(f"SELECT count(*) FROM {theirs} WHERE len({_as_set(tie.as_set)}) > 1").fetchone()[0]
                found[tie.table] = f"{bad} rows whose {tie.as_set} set differs" if bad else ""
                print(f"  {'ok     ' if not bad else 'DIFFERS'} {tie.table:<24} {tie.as_set} as a set: {bad} rows differ; "
                      f"{multi} rows hold more than one")
                continue
            if tie.orders:
                found[tie.table] = _forms_membership(con, tie, files[tie.table].read_text(encoding="utf-8"), ours, theirs)
                continue
            con.execute(_candidates_sql(tie, files[tie.table].read_text(encoding="utf-8")))
            candidates = f"mimiciv_derived.{tie.table}_candidates"
            columns = [d[0] for d in con.execute(f"SELECT * FROM {theirs} LIMIT 0").description]
            tied = con.execute(f"SELECT count(*) FROM (SELECT {keys} FROM (SELECT DISTINCT * FROM {candidates}) "
                               f"GROUP BY {keys} HAVING count(*) > 1)").fetchone()[0]
            ours_out = _not_a_candidate(con, ours, candidates, columns)
            theirs_out = _not_a_candidate(con, theirs, candidates, columns)
            problems = []
            if ours_out:
                problems.append(f"{ours_out} clinbench rows are no candidate of M4's SQL")
            if theirs_out:
                problems.append(f"{theirs_out} of M4's own rows are no candidate (this module is wrong)")
            found[tie.table] = "; ".join(problems)
            print(f"  {'ok     ' if not problems else 'DIFFERS'} {tie.table:<24} {tie.columns}: {tied} keys tied "
                  f"(more than one candidate); clinbench's row a candidate in all but {ours_out}, M4's in all but {theirs_out}")
    finally:
        con.close()
        scratch.unlink(missing_ok=True)
    return found


def _forms_membership(con, tie: Tie, text: str, ours: str, theirs: str) -> str:
    """Each undetermined cell of ``ours`` (and ``theirs``) holds one of the forms' values for its key; with
    ``tie.group``, each group's rows are all of one form's rows of that group."""
    sqls = _forms_sql(tie, text)
    for sql in sqls:
        con.execute(sql)
    forms = " UNION ALL ".join(f"SELECT {i} AS form, * FROM mimiciv_derived.{tie.table}_form{i}" for i in range(len(sqls)))
    keys = ", ".join(tie.group or tie.keys)
    if tie.group:
        types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {theirs})").fetchall())
        cols = list(types)
        packed = ", ".join(f'"{c}" := CAST("{c}" AS {types[c]})' for c in cols)
        order = ", ".join(f'"{c}"' for c in cols)

        def grouped(table: str, by: str) -> str:
            return (f"SELECT {by}, list(struct_pack({packed}) ORDER BY {order}) AS rows FROM {table} GROUP BY {by}")
        candidates = grouped(f"({forms})", f"form, {keys}")
        tied = con.execute(f"SELECT count(*) FROM (SELECT {keys} FROM (SELECT DISTINCT {keys}, rows FROM ({candidates})) "
                           f"GROUP BY {keys} HAVING count(*) > 1)").fetchone()[0]
        out = {}
        for name, table, by in (("clinbench", ours, tie.group), ("M4", theirs, tie.m4_group or tie.group)):
            on = " AND ".join(f"k.{g} = t.{g}" for g in by)
            out[name] = con.execute(
                f"SELECT count(*) FROM ({grouped(table, ', '.join(by))}) AS t WHERE NOT EXISTS "
                f"(SELECT 1 FROM ({grouped(f'({forms})', 'form, ' + ', '.join(by))}) AS k WHERE {on} AND k.rows = t.rows)"
            ).fetchone()[0]
        unit = "groups"
    else:
        on = " AND ".join(f"k.{key} = t.{key}" for key in tie.keys)
        tied = con.execute(f"SELECT count(*) FROM (SELECT {keys} FROM (SELECT DISTINCT {keys}, {', '.join(tie.columns)} "
                           f"FROM ({forms})) GROUP BY {keys} HAVING count(*) > 1)").fetchone()[0]
        out = {name: sum(con.execute(
            f"SELECT count(*) FROM {table} AS t WHERE NOT EXISTS (SELECT 1 FROM ({forms}) AS k WHERE {on} "
            f'AND k."{c}" IS NOT DISTINCT FROM t."{c}")').fetchone()[0] for c in tie.columns)
            for name, table in (("clinbench", ours), ("M4", theirs))}
        unit = "cells"
    problems = []
    if out["clinbench"]:
        problems.append(f"{out['clinbench']} clinbench {unit} are no candidate of M4's SQL")
    if out["M4"]:
        problems.append(f"{out['M4']} of M4's own {unit} are no candidate (this module is wrong)")
    print(f"  {'ok     ' if not problems else 'DIFFERS'} {tie.table:<24} {tie.columns}: {tied} keys tied "
          f"({len(sqls)} forms differ); clinbench's {unit} candidates in all but {out['clinbench']}, M4's in all but {out['M4']}")
    return "; ".join(problems)


def aligned_copy(ours_db: Path, m4_db: Path, m4: Path, work: Path) -> tuple[Path, list[str]]:
    """Step 2: a copy of M4's database holding clinbench's tie choices, with every M4 file downstream run again."""
    aligned = work / "m4_aligned.duckdb"
    shutil.copy(m4_db, aligned)
    con = duckdb.connect(str(aligned))
    rerun = []
    try:
        con.execute(f"ATTACH '{ours_db}' AS ours (READ_ONLY)")
        for tie in TIES:
            if tie.group:  # whole groups move: take clinbench's rows
                con.execute(f"DELETE FROM mimiciv_derived.{tie.table}")
                con.execute(f"INSERT INTO mimiciv_derived.{tie.table} BY NAME SELECT * FROM ours.mimiciv_derived.{tie.table}")
                continue
            sets = ", ".join(f'"{c}" = o."{c}"' for c in tie.columns)
            on = " AND ".join(f"t.{k} = o.{k}" for k in tie.keys)
            con.execute(f"UPDATE mimiciv_derived.{tie.table} AS t SET {sets} FROM ours.mimiciv_derived.{tie.table} AS o WHERE {on}")
        con.execute("DETACH ours")
        moved = {t.table for t in TIES}
        for sql_file in m4_concept_files(m4):
            target, text = _target(sql_file), sql_file.read_text(encoding="utf-8")
            if target not in moved and any(re.search(rf"\bmimiciv_derived\.{t}\b", text) for t in moved):
                con.execute(text)
                moved.add(target)
                rerun.append(target)
    finally:
        con.close()
    return aligned, rerun
