"""Help and usage errors a newcomer reads: whole option names, true descriptions, one-line errors."""

from __future__ import annotations

import pytest
import os
import subprocess
import sys


def _clinbench(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True, env=env)


def test_the_top_level_help_says_the_demo_synthesises_mimic_iv_only():
    """`clinbench demo` makes no eICU database: the listing must not say it does."""
    from clinbench.cli import AREAS

    line = AREAS["demo"][1]
    assert "eICU" not in line
    assert "MIMIC-IV" in line


def _all_commands():
    import typer

    from clinbench.cli import app

    def walk(group, path):
        for name in sorted(group.list_commands(None)):
            cmd = group.get_command(None, name)
            if hasattr(cmd, "commands"):
                yield path + (name,), cmd
                yield from walk(cmd, path + (name,))
            else:
                yield path + (name,), cmd

    yield from walk(typer.main.get_command(app), ())


@pytest.mark.slow
def test_every_option_name_of_every_command_is_whole_in_its_help_at_80_columns():
    """`dx run --help` cut `--gatekeeper-model` to `--gatekeeper-mo…`: a reader could not type it."""
    from typer.testing import CliRunner

    from clinbench.cli import app

    cut = []
    for path, cmd in _all_commands():
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
        assert res.exit_code == 0, (path, res.output)
        assert max(len(line) for line in res.output.splitlines()) <= 80, path
        words = set(res.output.replace("│", " ").replace(",", " ").split())
        for param in cmd.params:
            if getattr(param, "hidden", False):
                continue
            for opt in (*param.opts, *param.secondary_opts):
                if opt.startswith("-") and opt not in words:
                    cut.append(f"clinbench {' '.join(path)} {opt}")
            help_words = (getattr(param, "help", None) or "").split()
            if help_words and help_words[0].strip(".,:;()") not in " ".join(words):  # its help is shown too
                cut.append(f"clinbench {' '.join(path)} {param.name}: no help text shown")
    assert cut == []


def test_dx_run_takes_max_cases_and_limit_means_a_sandbox_limit_only_in_run():
    """`--limit` was a sandbox limit in `run` and "first N cases" in `dx run`: one name, one meaning."""
    from typer.testing import CliRunner

    from clinbench.cli import app
    from clinbench.cli._names import current_spellings

    dx_help = CliRunner().invoke(app, ["dx", "run", "--help"], env={"COLUMNS": "200"}).output
    assert "--max-cases" in dx_help and "--limit" not in dx_help
    run_help = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output
    assert "Sandbox limit KEY=VALUE" in " ".join(run_help.replace("│", " ").split())
    assert current_spellings("dx", ["run", "--limit", "2"]) == ["run", "--max-cases", "2"]  # old scripts still work
    # --prices is the model price table (TOML) in `run`; the tests' price CSV of `dx run` is --test-prices
    assert "--test-prices" in dx_help and "--prices" not in dx_help.replace("--test-prices", "")
    assert current_spellings("dx", ["run", "--prices", "p.csv"]) == ["run", "--test-prices", "p.csv"]


@pytest.mark.slow
def test_a_usage_error_is_one_line_like_every_other_error(tmp_path):
    """A wrong dataset name or `--patients -5` printed a 5-line boxed panel; a ClinbenchError prints one line."""
    for args in (["data", "synth", "mimic-iv", "--patients", "-5", "--out", str(tmp_path / "x.duckdb")],
                 ["data", "load", "mimic-v", str(tmp_path), "--out", str(tmp_path / "y.duckdb")],
                 ["tasks", "list", "--dbx"]):
        out = _clinbench(*args)
        assert out.returncode == 2, args
        assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: "), out.stderr
        assert f"see `clinbench {' '.join(args[:2])} --help`" in out.stderr
    assert "'mimic-v' is not one of 'mimic-iv', 'eicu'" in _clinbench(*["data", "load", "mimic-v", str(tmp_path),
                                                                         "--out", str(tmp_path / "y.duckdb")]).stderr
    assert not list(tmp_path.iterdir())
