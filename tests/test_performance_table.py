"""docs/performance.md's figures table is the render of docs/performance.json (nobody types a figure), and
a benchmark's ``--record`` writes the figures it measured, in place of its row, keeping every other row."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import anchor_runs  # noqa: E402
import concepts  # noqa: E402  (benchmarks/concepts.py)
import figures  # noqa: E402
import performance_table  # noqa: E402
import rescore_vs_m4bench  # noqa: E402
import startup  # noqa: E402

RUN = figures.Run(command="benchmarks/startup.py --record", date="2026-12-03", commit="abc1234", load="2.0 -> 3.0")


def test_the_committed_table_is_the_render_of_the_figures_store():
    text = performance_table.MARKDOWN.read_text(encoding="utf-8")
    rows = figures.read()
    assert len(rows) >= 20 and len({r.id for r in rows}) == len(rows)
    assert performance_table.with_table(text, performance_table.render(rows)) == text


def test_every_row_has_its_run_and_no_history():
    for row in figures.read():
        assert row.command and row.date and row.commit and row.load, row.id
        assert (row.goal is None) <= (row.met is None), row.id  # a verdict needs a goal
        cells = " ".join((row.clinbench, row.anchor, row.ratio)).lower()
        assert not any(word in cells for word in ("(was ", "before:", "earlier")), row.id


def test_record_writes_the_measured_figures_in_place_and_keeps_the_other_rows(tmp_path):
    store = tmp_path / "performance.json"
    other = {"id": "concepts:layer", "what": "w", "clinbench": "1 s", "anchor": "2 s", "ratio": "0.5x",
             "goal": None, "met": None}
    figures.record([startup.help_row([0.10, 0.12, 0.20], [0.2, 0.3, 0.25], 0.15), other], RUN, store)
    # a second measurement replaces the first; a new row of the same script goes after its script's rows
    again = startup.help_row([0.10, 0.11, 0.12], [0.2, 0.2, 0.2], 0.16)
    extra = {**other, "id": "startup:working"}
    rows = figures.record([again, extra], RUN, store)
    assert [r.id for r in rows] == ["startup:help", "startup:working", "concepts:layer"]
    help_ = rows[0]
    assert help_.what.startswith("each of the 3 `clinbench … --help`")
    assert help_.clinbench == "0.10–0.12 s CPU in imports, median 0.11 s; `-X importtime` median 0.20 s"
    assert help_.anchor == "a one-option Typer app's `--help`: 0.16 s"
    assert help_.ratio == "0.69x Typer's floor, 0.73x the goal (medians)"
    assert (help_.goal, help_.met) == ("≤ 0.15 s import CPU, each command (slowest 0.12 s)", True)
    assert (help_.command, help_.commit, help_.load) == (RUN.command, "abc1234", "2.0 -> 3.0")
    assert json.loads(store.read_text(encoding="utf-8"))["rows"][2]["clinbench"] == "1 s"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["performance.json"]  # written by rename, no temp left


def test_a_ratio_row_judges_its_goal_from_the_measured_seconds():
    med = {"clinbench": (1.0, 2.0), "m4": (25.0, 30.0)}
    row = rescore_vs_m4bench.rescore_row("rescore_vs_m4bench:distinct", "14 tasks x 40 trials", 200, 560, 560, med,
                                         agree=560)
    assert row["id"] == "rescore_vs_m4bench:distinct" and "560 distinct (task, output) pairs" in row["what"]
    assert row["clinbench"] == "1.00 s wall, 2.00 s CPU, 3.6 ms CPU a run"
    assert row["ratio"] == "25.0x wall, 15.0x CPU; rewards agree on 560 of 560 runs"
    assert (row["goal"], row["met"]) == ("≥ 20x wall and CPU", False)  # CPU falls short


def test_a_concept_build_at_another_size_or_profile_keeps_rows_of_its_own():
    def rows(patients, profile):
        args = SimpleNamespace(patients=patients, profile=profile)
        return concepts.build_rows(args, 10, 110, 68, 65, [(3.0, 5.0)], [(1.2, 2.2)], [(2.0, 4.0)])

    def ids(patients, profile):
        return [r["id"] for r in rows(patients, profile)]

    assert ids(2000, None) == ["concepts:all", "concepts:layer"]  # the table's default rows, replaced in place
    assert ids(2000, "mimic-code") == ["concepts:all@mimic-code", "concepts:layer@mimic-code"]
    assert ids(20000, None) == ["concepts:all-20000", "concepts:layer-20000"]
    assert ids(20000, "mimic-code") == ["concepts:all-20000@mimic-code", "concepts:layer-20000@mimic-code"]
    layer = rows(20000, None)[1]
    assert "20,000 patients" in layer["what"] and layer["ratio"] == "0.55x CPU, 0.60x wall"
    assert layer["met"] is True  # 0.55x CPU <= 0.6x and 0.60x wall <= 0.8x


def test_the_mimic_code_anchor_runs_without_duckdbs_progress_bar(tmp_path, monkeypatch):
    """A query over 2 s redraws DuckDB's progress bar on stdout, in the anchor's time; clinbench's build has it off.
    The bar is on by default in a script (the 20,000-patient run printed it) and off under pytest: on here."""
    connect = anchor_runs.duckdb.connect

    def connect_with_the_bar(*args, **kwargs):
        con = connect(*args, **kwargs)
        con.execute("SET enable_progress_bar = true")
        return con

    monkeypatch.setattr(anchor_runs.duckdb, "connect", connect_with_the_bar)
    sql = tmp_path / "setting.sql"
    sql.write_text("CREATE TABLE mimiciv_derived.setting AS SELECT current_setting('enable_progress_bar') AS shown")
    db = tmp_path / "anchor.duckdb"
    seconds = anchor_runs._run_files(db, [sql])
    monkeypatch.undo()
    assert list(seconds) == ["setting"]
    with anchor_runs.duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT shown FROM mimiciv_derived.setting").fetchone() == (False,)


def test_the_render_shows_the_goal_verdict_and_the_run():
    row = figures.Figure(**startup.help_row([0.2], [0.2], 0.15), **vars(RUN))
    line = performance_table.render([row]).splitlines()[2]
    assert line.endswith("| ≤ 0.15 s import CPU, each command (slowest 0.20 s): not met | "
                         "2026-12-03, abc1234, load 2.0 -> 3.0: `benchmarks/startup.py --record` |")


def test_check_fails_in_one_line_on_a_hand_edited_figure(tmp_path, monkeypatch, capsys):
    store, markdown = tmp_path / "performance.json", tmp_path / "performance.md"
    figures.record([startup.help_row([0.10, 0.12], [0.2, 0.2], 0.15)], RUN, store)
    markdown.write_text("# Performance\n\nprose\n\n<!-- figures:start -->\n<!-- figures:end -->\n\nmore prose\n")
    argv = ["performance_table.py", "--figures", str(store), "--markdown", str(markdown)]
    monkeypatch.setattr(sys, "argv", argv)
    performance_table.main()
    rendered = markdown.read_text()
    assert rendered.startswith("# Performance\n\nprose\n\n<!-- figures:start -->\n| what |")
    assert rendered.endswith("<!-- figures:end -->\n\nmore prose\n")
    monkeypatch.setattr(sys, "argv", [*argv, "--check"])
    performance_table.main()  # the render itself passes
    markdown.write_text(rendered.replace("median 0.11 s", "median 0.09 s"))
    with pytest.raises(SystemExit) as exc:
        performance_table.main()
    message = str(exc.value)
    assert "\n" not in message and message.startswith("performance.md: the figures table differs from performance.json")
