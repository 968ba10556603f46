"""Reference profiles: how they are composed, what they record, and what tells them apart."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from clinbench.concepts.catalog import CONCEPTS_DIR, load_concepts, parse_header
from clinbench.concepts.profiles import DEFAULT_PROFILE, PROFILES, get_profile, label
from clinbench.errors import ConceptError


def test_a_profile_is_its_base_with_its_own_files_laid_over_it_and_its_omissions_dropped():
    base, m4 = load_concepts(profile="mimic-code"), load_concepts(profile="m4bench")
    own = sorted((CONCEPTS_DIR / "profiles" / "m4bench").rglob("*.sql"))
    assert len(own) == 23
    for path in own:  # every file of the profile replaces the base file of the same table
        match = [q for q, c in m4.items() if c.path == path]
        assert len(match) == 1 and match[0] in base and base[match[0]].path != path, path
    assert set(base) - set(m4) == {"mimiciv_derived.arb", "mimiciv_derived.code_status"}
    assert set(m4) <= set(base)
    same = [q for q in m4 if m4[q].path == base[q].path]
    assert len(same) == len(m4) - len(own)


def test_every_profile_file_names_its_source_and_what_differs():
    import re

    sources = {"m4bench": r"hannesill/m4 6ed55907", "mimic_code_next": r"mimic-code (PR|issue) #\d+"}
    files = 0
    for folder, source in sources.items():
        for path in (CONCEPTS_DIR / "profiles" / folder).rglob("*.sql"):
            header = parse_header(path.read_text(encoding="utf-8"))
            assert re.search(source, header.get("source", "")), path
            assert "the mimic-code profile" in header.get("deviations", ""), path  # what differs, and from what
            files += 1
    assert files == 23 + 5


def test_an_unknown_profile_is_one_line_naming_the_profiles():
    with pytest.raises(ConceptError, match=r"no reference profile named 'm4' \(profiles: m4bench, mimic-code"):
        load_concepts(profile="m4")
    assert DEFAULT_PROFILE == "m4bench"  # the shipped default (this directory's tests name mimic-code: conftest)
    assert label("m4bench") == "m4bench@0.5.3-6ed55907" and label("mimic-code") == "mimic-code@8bcbd190"


def test_concepts_profiles_lists_each_profile_with_its_source():
    from clinbench.cli import app

    result = CliRunner().invoke(app, ["concepts", "profiles"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for profile in PROFILES.values():
        assert label(profile.name) in result.output
    assert "the mimic-code profile with 23 file(s) of its own, without arb, code_status" in " ".join(result.output.split())


def test_verify_and_reference_refuse_a_reference_of_another_profile(demo_m4bench_db, tmp_path):
    from clinbench.concepts.manifest import verify
    from clinbench.derive.reference import export_reference
    from clinbench.errors import TaskError

    problems = verify(demo_m4bench_db, ["mimiciv_derived.target_kdigo_48h"], profile="mimic-code")
    option = "" if get_profile(None).name == "mimic-code" else " --profile mimic-code"  # no option for the default
    assert [str(p) for p in problems] == [
        "mimiciv_derived.target_kdigo_48h: built with reference profile m4bench@0.5.3-6ed55907, not "
        f"mimic-code@8bcbd190; run `clinbench concepts build {demo_m4bench_db}{option}`"]
    assert verify(demo_m4bench_db, ["mimiciv_derived.target_kdigo_48h"], profile="m4bench") == []
    with pytest.raises(TaskError, match="was built with reference profile m4bench@0.5.3-6ed55907, not mimic-code@8bcbd190"):
        export_reference("mimic-kdigo-48h", demo_m4bench_db, tmp_path / "r.csv", profile="mimic-code")
    assert export_reference("mimic-kdigo-48h", demo_m4bench_db, tmp_path / "r.csv", profile="m4bench") == 140


def test_the_two_profiles_differ_on_the_demo_where_m4bench_and_mimic_code_were_measured_to(demo_db, demo_m4bench_db):
    """What `concepts diff-profiles DEMO mimic-code m4bench` prints, from the two session builds."""
    from clinbench.concepts.profile_diff import compare_built

    con = duckdb.connect()
    con.execute(f"ATTACH '{demo_db}' AS mc (READ_ONLY)")
    con.execute(f"ATTACH '{demo_m4bench_db}' AS m4 (READ_ONLY)")
    diffs = {d.table: d for d in compare_built(con, "mimic-code", "m4bench", ("mc", "mimiciv_derived"),
                                               ("m4", "mimiciv_derived"))}
    every_row = {t for t, d in diffs.items() if d.kind == "concept" and d.rows_a and d.only_a == d.rows_a == d.rows_b}
    assert every_row == {"age", "creatinine_baseline", "icustay_detail", "oasis"}
    assert (diffs["arb"].rows_b, diffs["code_status"].rows_b) == (None, None)
    assert (diffs["kdigo_stages"].only_a, diffs["kdigo_stages"].rows_a) == (6683, 8554)
    assert (diffs["icustay_hourly"].rows_a, diffs["icustay_hourly"].rows_b) == (15569, 15571)
    references = {t.removeprefix("target_"): d for t, d in diffs.items() if d.kind == "target"}
    assert sorted(r for r, d in references.items() if d.differs) == [
        "apsiii_24h", "charlson", "creatinine_baseline", "kdigo_48h", "oasis_24h"]
    assert {r: references[r].keys_moved for r in ("apsiii_24h", "charlson", "kdigo_48h", "oasis_24h")} == {
        "apsiii_24h": 2, "charlson": 29, "kdigo_48h": 3, "oasis_24h": 4}
    assert len(references) == 15


def test_diff_profiles_compares_the_tables_of_the_layer_and_the_references_never_a_helper():
    """`diff-profiles` printed '48 of 70 derived tables identical' on the demo: the 5 helpers, which no
    build makes a table, counted as 5 identical tables beside mimic-code's 65."""
    from clinbench.concepts.profile_diff import compare_built

    con = duckdb.connect()
    con.execute("CREATE SCHEMA a; CREATE SCHEMA b")
    diffs = compare_built(con, "mimic-code", "m4bench", ("memory", "a"), ("memory", "b"))
    helpers = {c.table for c in load_concepts(profile="mimic-code").values() if c.helper}
    assert helpers and not helpers & {d.table for d in diffs}
    assert (sum(d.kind == "concept" for d in diffs), sum(d.kind == "target" for d in diffs)) == (65, 15)
