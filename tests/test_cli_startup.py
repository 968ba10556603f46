"""The command line starts fast: `clinbench --help` loads no command module's heavy dependencies,
and the root's list of areas (what --help shows without importing them) matches the modules."""

from __future__ import annotations

import pytest
import json
import os
import subprocess
import sys

import typer

HEAVY = ("duckdb", "_duckdb", "numpy", "openai", "anthropic", "pandas", "sqlglot", "pyarrow", "httpx", "pydantic")


def _modules_after(*args: str) -> set[str]:
    script = ("import sys, json\n"
              f"sys.argv = ['clinbench', *{list(args)!r}]\n"
              "import clinbench.cli as cli\n"
              "try:\n    cli.app()\nexcept SystemExit:\n    pass\n"
              "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


def _command_modules(loaded: set[str]) -> list[str]:
    """The command modules among ``loaded`` (the root's private helpers, ``cli._*``, are not)."""
    return sorted(m for m in loaded if m.startswith("clinbench.cli.") and not m.rsplit(".", 1)[1].startswith("_"))


def test_help_imports_no_heavy_dependency_and_no_command_module():
    loaded = _modules_after("--help")
    assert [m for m in HEAVY if m in loaded] == []
    assert _command_modules(loaded) == []


def test_help_lists_every_command_with_its_help_line():
    env = {**os.environ, "COLUMNS": "250"}
    out = subprocess.run([sys.executable, "-m", "clinbench", "--help"], capture_output=True, text=True, env=env,
                         check=True).stdout
    from clinbench.cli import AREAS

    for name, (_, line) in AREAS.items():
        assert f" {name} " in out and line[:60] in out, name
    assert " version " in out


def test_a_loaded_command_is_listed_with_the_same_line():
    import clinbench.cli as cli

    cmd = cli._load("stats")
    assert cmd.get_short_help_str(limit=1000) == cli.AREAS["stats"][1]


def _every_command() -> list[list[str]]:
    """The path of every top-level command and subcommand, read from the CLI itself."""
    import clinbench.cli as cli

    def walk(cmd, path):
        yield path
        for name in sorted(getattr(cmd, "commands", {}) or {}):
            yield from walk(cmd.commands[name], [*path, name])

    root = typer.main.get_command(cli.app)
    return [p for name in ["version", *cli.AREAS] for p in walk(root.commands.get(name) or cli._load(name), [name])]


@pytest.mark.slow
def test_no_command_help_imports_a_heavy_dependency():
    """Every `clinbench <command> --help`, run one after another in one process: the first help
    that imports a heavy module is named (none may; modules stay loaded, so later helps are
    checked against everything the earlier ones loaded, which only makes the check stricter)."""
    commands = _every_command()
    assert len(commands) > 30 and ["dx", "run"] in commands and ["concepts", "build"] in commands
    script = ("import contextlib, io, json, sys\n"
              f"heavy = {HEAVY!r}\n"
              "import clinbench.cli as cli\n"
              "first = {m: 'import clinbench.cli' for m in heavy if m in sys.modules}\n"
              f"for command in {commands!r}:\n"
              "    sys.argv = ['clinbench', *command, '--help']\n"
              "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
              "        try:\n            cli.app()\n        except SystemExit:\n            pass\n"
              "    assert 'Usage:' in out.getvalue(), command\n"
              "    first.update({m: ' '.join(command) for m in heavy if m in sys.modules and m not in first})\n"
              "print(json.dumps(first), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "COLUMNS": "100"})
    assert json.loads(out.stderr.strip().splitlines()[-1]) == {}


@pytest.mark.slow
def test_one_command_loads_only_its_own_module():
    loaded = _modules_after("tasks", "list")
    assert _command_modules(loaded) == ["clinbench.cli.tasks"]
    assert {"duckdb", "_duckdb"} & _modules_after("run", "--help") == set()


def test_areas_match_what_the_modules_register():
    """AREAS (the root's lazy table) names every command the modules register, and only those."""
    import importlib
    import pkgutil

    import clinbench.cli as cli

    scratch = typer.Typer()
    scratch.callback()(lambda: None)
    modules = sorted(m.name for m in pkgutil.iter_modules(cli.__path__) if not m.name.startswith("_"))
    for name in modules:
        importlib.import_module(f"clinbench.cli.{name}").register(scratch)
    real = typer.main.get_command(scratch).commands
    assert sorted(real) == sorted(cli.AREAS)
    assert sorted({m for mods, _ in cli.AREAS.values() for m in mods}) == modules
