"""Terminal output: list commands fit 80 columns without cutting ids, and every list command has --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from clinbench.concepts.catalog import load_concepts
from clinbench.derive.catalogue import load_catalogue
import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def _cli(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": str(columns)})


def test_tasks_list_at_80_columns_keeps_every_task_id_whole():
    out = _cli("tasks", "list")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    ids = list(load_catalogue())
    rows = [line.split() for line in lines if line.split() and line.split()[0] in ids]
    assert [r[0] for r in rows] == ids  # all 28, whole, in catalogue order
    # family, database and mode are shown in full (issue: they collapsed to "g…" or blank)
    for r, spec in zip(rows, load_catalogue().values()):
        assert r[1:4] == [spec.family, spec.database, spec.mode]
    assert "…" not in out.stdout
    assert "not shown at 80 columns: keys" in out.stdout.replace("\n", " ")


def test_tasks_list_wide_terminal_shows_every_column():
    out = _cli("tasks", "list", columns=160)
    header = out.stdout.splitlines()[0].split()
    assert header[:5] == ["task", "family", "database", "mode", "keys"] and "spec" in header
    assert "not shown" not in out.stdout


def test_concepts_list_at_80_columns_breaks_no_word():
    out = _cli("concepts", "list")
    assert out.returncode == 0, out.stderr
    assert max(len(line) for line in out.stdout.splitlines()) <= 80
    names = {c.name for c in load_concepts().values()}
    table = out.stdout.split("(not shown")[0].splitlines()[2:]
    first = {line.split()[0] for line in table if line.split() and not line.startswith(" ")}
    assert names <= first  # every concept's row starts with its whole name
    marked = {line.split()[0] for line in table if line.split()[1:2] == ["(helper)"]}
    assert marked == {c.name for c in load_concepts().values() if c.helper}  # never in an agent's database
    deps = {d.strip(",") for line in table for d in line.split()[1:] if d not in ("-",) and not d.startswith("(")}
    tables = {q.split(".", 1)[1] for q in load_concepts()}
    assert deps <= names | tables  # wrapped dependency lists never break a name


def test_list_commands_have_json():
    tasks = json.loads(_cli("tasks", "list", "--json").stdout)
    assert len(tasks) == 28 and tasks[0]["task"] == next(iter(load_catalogue()))
    assert {"family", "database", "mode", "keys", "scored_columns", "coverage_threshold"} <= set(tasks[0])
    concepts = json.loads(_cli("concepts", "list", "--json").stdout)
    assert len(concepts) == len(load_concepts())
    assert all(set(c) >= {"name", "table", "domain", "grain", "depends_on", "helper"} for c in concepts)
    assert sorted(c["name"] for c in concepts if c["helper"]) == [  # never in an agent's database
        "antibiotic_culture_pairs", "apsiii_gases_24h", "sofa_first_day_worst", "sofa_hourly_worst", "sofa_points"]
    cases = json.loads(_cli("dx", "cases", "--json").stdout)
    assert len(cases) >= 30 and {"case", "splits", "tests", "vignette"} <= set(cases[0])


def _command_paths():
    import typer
    from typer._click import Context

    from clinbench.cli import app

    root = typer.main.get_command(app)
    ctx = Context(root)
    for name in root.list_commands(ctx):
        cmd = root.get_command(ctx, name)
        subs = getattr(cmd, "commands", None)
        yield from ([[name, s] for s in subs] if subs else [[name]])


def test_help_shows_no_bool_type_for_flags_and_no_old_spelling():
    """Flags take no value, so their help shows no type; the old spellings stay out of --help."""
    from typer.testing import CliRunner

    from clinbench.cli import app

    runner = CliRunner()
    paths = list(_command_paths())
    assert ["dx", "run"] in paths and ["stats"] in paths and len(paths) > 25
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, path
        assert "--tasks" not in result.output and "--conditions" not in result.output, path
        assert "--api-key " not in result.output and "--dest" not in result.output, path
    run_help = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output
    assert all(f"--{o} " in run_help for o in ("task", "condition", "schema-variant", "agent", "model"))


def test_old_spellings_still_work(tmp_path):
    from clinbench.cli._names import current_spellings

    assert current_spellings("run", ["--tasks", "a,b", "--conditions=no-skill", "--schema", "native", "--agent", "x"]) == [
        "--task", "a,b", "--condition=no-skill", "--schema-variant", "native", "--agent", "x"]
    assert current_spellings("concepts", ["build", "db.duckdb", "--schema", "d"]) == ["build", "db.duckdb", "--derived-schema", "d"]
    assert current_spellings("stats", ["x.csv", "--", "--schema"]) == ["x.csv", "--", "--schema"]
    from stats_fixtures import write_hand_csv

    csv = write_hand_csv(tmp_path / "runs.csv")
    new = _cli("stats", str(csv), "--schema-variant", "native", "--json", "--draws", "100", "--permutation-draws", "100")
    old = _cli("stats", str(csv), "--schema", "native", "--json", "--draws", "100", "--permutation-draws", "100")
    assert new.returncode == old.returncode == 0 and json.loads(new.stdout) == json.loads(old.stdout)
    bad = _cli("stats", str(csv), "--schema-variant", "obfuscated")
    assert bad.returncode == 2 and "no runs with schema 'obfuscated'" in bad.stderr
