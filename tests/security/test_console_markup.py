"""Rich markup in what an agent, a model or a user wrote is shown as text, never obeyed.

An output cell, a run's cause, a diagnosis, a path holding ``[link=…]``, ``[black on black]`` or
``[/]`` reaches the operator's terminal as those very characters: no hyperlink escape
(``ESC ]8;``), no hidden or restyled text, no cell shown as a value the agent did not write, no
crash. Rich writes links and colours only to a terminal, so the commands run with
``FORCE_COLOR=1`` (what a terminal gets); the text is compared with its colours removed.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.progress import Progress
from rich.table import Table
from typer.testing import CliRunner

from clinbench.cli import app

LINK = "[link=https://evil.example]vancomycin[/link]"
HIDDEN = "[black on black]BLOOD[/]"
OSC8 = "\x1b]8;"
SGR = re.compile(r"\x1b\[[0-9;]*m")


def _cli(*args, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clinbench", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "250", **(env or {})})


@pytest.fixture(scope="module")
def suspicion(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(database, reference CSV, cache) for mimic-suspicion-infection on 60 synthetic patients."""
    tmp = tmp_path_factory.mktemp("markup")
    env = {"CLINBENCH_CACHE": str(tmp / "cache")}
    db, ref = tmp / "m.duckdb", tmp / "ref.csv"
    for args in (("data", "synth", "mimic-iv", "--out", db, "--patients", 60),
                 ("tasks", "reference", "mimic-suspicion-infection", "--db", db, "--out", ref)):
        done = _cli(*args, env=env)
        assert done.returncode == 0, done.stderr
    return db, ref, tmp / "cache"


def test_score_table_shows_an_agents_cells_as_written_and_no_link(suspicion, tmp_path):
    db, ref, cache = suspicion
    rows = list(csv.reader(ref.open()))
    rows[1][rows[0].index("antibiotic")] = LINK
    rows[1][rows[0].index("specimen")] = HIDDEN
    evil = tmp_path / "evil.csv"
    with evil.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    done = _cli("score", "mimic-suspicion-infection", evil, "--db", db, "--scored-columns", "required",
                env={"CLINBENCH_CACHE": str(cache), "FORCE_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    assert OSC8 not in done.stdout
    shown = SGR.sub("", done.stdout)
    assert f"vs {LINK} " in shown and f"vs {HIDDEN} " in shown, shown


@pytest.mark.parametrize("folders", [("[2024]", "[old]"), ("[2024]", "[/]")])
def test_an_error_naming_a_path_with_brackets_prints_it_intact(tmp_path, folders):
    output = tmp_path / "output.csv"
    output.write_text("stay_id,meld\n1,2\n")
    db = f"{tmp_path}/{'/'.join(folders)}/mimic.duckdb"
    done = _cli("score", "mimic-meld-24h", output, "--db", db)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert f" {db} " in done.stderr


def test_explain_shows_an_agents_cells_and_cause_as_written(tmp_path, monkeypatch):
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    cause = "codex exited 1: [link=https://evil.example]see the fix[/link] [/]"
    (run / "manifest.json").write_text(json.dumps({
        "run": {"run_id": "r1", "task": "mimic-suspicion-infection", "condition": "no-skill", "agent": "codex",
                "model": "[on red]m1[/]", "trial": 1}, "status": "agent-failed", "error": cause}))
    (run / "score.json").write_text(json.dumps({
        "task_id": "mimic-suspicion-infection", "reward": 0.0, "strict": False, "reference_rows": 2, "agent_rows": 2,
        "columns": {"antibiotic": {"match_rate": 0.5, "matched": 1, "denominator": 2, "nmae": None,
                                   "examples": [{"key": {"ab_id": "[b]1[/b]"}, "reference": "Vancomycin",
                                                 "agent": LINK}]}}}))
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "250")
    shown = CliRunner().invoke(app, ["explain", str(run)])
    assert shown.exit_code == 0, shown.output
    assert OSC8 not in shown.output
    text = SGR.sub("", shown.output)
    assert f"cause: {cause}" in text and "codex/[on red]m1[/]" in text
    assert f"Vancomycin → {LINK}" in text and "[b]1[/b]" in text, text


def test_dx_judge_shows_a_models_diagnosis_as_written(tmp_path):
    pairs = tmp_path / "pairs.csv"
    candidate = f"{HIDDEN} sepsis [link=https://evil.example]pneumonia[/link]"
    with pairs.open("w", newline="") as f:
        csv.writer(f).writerows([["reference", "candidate"], ["pneumonia", candidate]])
    shown = CliRunner().invoke(app, ["dx", "judge", "--pairs", str(pairs)], env={"COLUMNS": "250"})
    assert shown.exit_code == 0, shown.output
    # the console's width is its own (a module's console may predate COLUMNS): compare across line wraps
    assert " ".join(f"{candidate!r} vs 'pneumonia'".split()) in " ".join(shown.output.split()), shown.output


def test_every_way_text_reaches_the_console_shows_it_as_written():
    """A print, a table cell, a rule's title, a status line and a bar's column: markup inert, control
    characters as \\xNN; only the code's own template (``styled``) is styled."""
    from clinbench.cli._console import make_console, plain_column, styled

    value = f"{LINK} \x1b]0;owned\x07 :smile:"
    written = "[link=https://evil.example]vancomycin[/link] \\x1b]0;owned\\x07 :smile:"
    buf = io.StringIO()
    console = make_console(file=buf, force_terminal=True, width=200)
    table = Table("value")
    table.add_row(value)
    bar = Progress(plain_column("{task.description}"), console=console)
    bar.add_task(value)
    for shown in (value, table, console.status(value).renderable, bar.get_renderable()):
        console.print(shown)
    console.rule(value)
    console.print(styled("[red]cause:[/] {}", value))
    out = buf.getvalue()
    assert OSC8 not in out and "\x1b]0;" not in out and "😄" not in out
    lines = [SGR.sub("", line) for line in out.splitlines()]
    assert sum(written in line for line in lines) == 6, lines
    assert "\x1b[31mcause:\x1b[0m" in out and f"cause: {written}" in lines
