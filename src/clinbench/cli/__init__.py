"""The one command-line entry.

Each module in this package holds the thin Typer commands of one area and exposes
``register(app)``. Commands call library code and print; library code raises ``ClinbenchError``.

Start-up stays cheap because a command's module is imported only when that command runs:
``AREAS`` names, for each top-level command, the modules that register it and the one-line
help ``clinbench --help`` lists (tests/test_cli_startup.py checks the names against the modules). A
module missing from ``AREAS`` still works: it is imported and registered at start-up, which
only costs time. Option values are converted without importing pydantic (``_coerce``).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from clinbench.cli._coerce import install as _coerce_without_pydantic
from clinbench.errors import ClinbenchError

# top-level command -> (modules of this package that register it, the help line --help lists)
AREAS: dict[str, tuple[tuple[str, ...], str]] = {
    "audit": (("audit",), "Flag runs that must not be published (leaks, copies, writes outside the workspace); "
                          "store the verdicts."),
    "rescore": (("audit",), "Re-score every run from its evidence and update the store."),
    "demo": (("demo",), "Synthesise a MIMIC-IV database, build the concepts and task references, run a small "
                        "campaign, diagnose the synthetic demo cases, write the report."),
    "report": (("report",), "Write the report of a campaign: headline or summary, provenance, usage, failures, "
                            "each run's why, evidence."),
    "explain": (("explain",), "Why a run scored what it did: cause, per-column match rates, first mismatching rows."),
    "export": (("export",), "Write a campaign's runs, column scores, usage and dx encounters as Parquet or CSV."),
    "run": (("run",), "Run a campaign; rerunning the same command resumes it."),
    "score": (("score",), "Score an agent's output CSV for a task (reward, strict pass, key F1, per-column rates)."),
    "store": (("store",), "A campaign's results store: rebuild it from the evidence."),
    "stats": (("stats",), "Summarise a campaign, or compare two groups of runs (conditions, agents, models, "
                          "schema variants)."),
    "workspace": (("workspace",), "Prepare a workspace: masked database.duckdb, prompt.md and skills/."),
    "export-tasks": (("export_tasks",), "Write Harbor task folders (instruction, task.toml, environment/, tests/ "
                                        "running clinbench's scorer)."),
    "concepts": (("concepts", "concept_variants"), "Derived concepts (mimiciv_derived, eicu_derived) and task "
                                                   "targets."),
    "data": (("data", "synth"), "EHR databases: load PhysioNet files, fetch the demos, inspect; the workspace cache."),
    "dx": (("dx",), "Sequential diagnosis: encounters, gatekeeper, judge, costs."),
    "tasks": (("tasks",), "The derivation benchmark's task catalogue."),
    "serve": (("serve",), "A local web app: every campaign's stats and runs, transcripts, scores explained; "
                          "play diagnosis cases as a clinician."),
}

def _flag_type(self, ctx):
    """A flag takes no value: its help shows no type (Typer 0.29 prints ``<bool>`` for every flag)."""
    return None if self.is_flag else _value_type(self, ctx)


_value_type = TyperOption.display_type_rich
TyperOption.display_type_rich = _flag_type
_coerce_without_pydantic()


def _whole_names_first(format_help):
    """``format_help`` with Typer's option and command tables never cutting a name (``--gatekeeper-mo…`` at
    80 columns): the name columns keep their width; the type column (the one before the help text) and
    the help text wrap instead. A table's last two columns are the type and the help text; a commands
    table's two are the name and the help, so its name column may wrap at spaces only (a name has none)."""
    def format_with_whole_names(self, ctx, formatter) -> None:
        from typer import rich_utils

        if not getattr(rich_utils.Table, "whole_names", False):
            class WholeNamesTable(rich_utils.Table):
                whole_names = True

                def add_row(self, *cells, **kwargs) -> None:
                    if len(cells) >= 6:  # an option row: [required,] long, short, --no-long, --no-short, type, help
                        cells = list(cells)
                        long, negative = len(cells) - 6, len(cells) - 4
                        if str(cells[negative]):  # '--no-x' under '--x', not in a column of its own
                            cells[long] = rich_utils.Text.assemble(cells[long], "\n", cells[negative])
                            cells[negative] = ""
                    super().add_row(*cells, **kwargs)
                    for column in self.columns[:-2]:
                        column.no_wrap = True

            rich_utils.Table = WholeNamesTable
        return format_help(self, ctx, formatter)
    return format_with_whole_names


TyperCommand.format_help = _whole_names_first(TyperCommand.format_help)
TyperGroup.format_help = _whole_names_first(TyperGroup.format_help)

_loaded: dict[str, Any] = {}  # command name -> its click command, built once per process


def _load(name: str):
    """The real click command ``name``: import the modules that register it, register them on a scratch app."""
    if name not in _loaded:
        scratch = typer.Typer()
        scratch.callback()(lambda: None)  # a callback keeps the scratch app a group even with one command
        for module in AREAS[name][0]:
            importlib.import_module(f"{__name__}.{module}").register(scratch)
        cmd = typer.main.get_command(scratch).commands[name]
        cmd.short_help = AREAS[name][1]  # the listing line is AREAS's, loaded or not
        _loaded[name] = cmd
    return _loaded[name]


class _LazyGroup(TyperGroup):
    """The root group: lists every area from ``AREAS`` and imports one only when it is invoked."""

    _listing = False

    def list_commands(self, ctx) -> list[str]:
        eager = super().list_commands(ctx)
        return eager + [n for n in AREAS if n not in eager]

    def get_command(self, ctx, cmd_name: str):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None or cmd_name not in AREAS:
            return cmd
        if self._listing and cmd_name not in _loaded:
            return typer.core.TyperCommand(cmd_name, help=AREAS[cmd_name][1])
        return _load(cmd_name)

    def resolve_command(self, ctx, args):
        from clinbench.cli._names import current_spellings

        name, cmd, rest = super().resolve_command(ctx, args)
        return name, cmd, current_spellings(name, rest) if name else rest

    def invoke(self, ctx):
        # Typer turns a Ctrl-C no command handled into a silent exit 130; main() says it was interrupted
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted from None

    def format_help(self, ctx, formatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="clinbench",
    cls=_LazyGroup,
    help="Benchmarks for AI agents doing clinical data work on MIMIC-style EHR databases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Benchmarks for AI agents doing clinical data work on MIMIC-style EHR databases."""


@app.command()
def version() -> None:
    """Print the installed clinbench version."""
    from clinbench import __version__

    print(__version__)


def _register_undeclared() -> None:
    """Register, eagerly, any command module ``AREAS`` does not name (so a new area works at once)."""
    declared = {m for modules, _ in AREAS.values() for m in modules}
    for entry in sorted(os.listdir(os.path.dirname(__file__))):
        name, ext = os.path.splitext(entry)
        if ext == ".py" and not name.startswith("_") and name not in declared:
            register = getattr(importlib.import_module(f"{__name__}.{name}"), "register", None)
            if register is not None:
                register(app)


_register_undeclared()


def _error(message: str) -> None:
    from clinbench.cli._console import make_console

    make_console(stderr=True).print(message, highlight=False, soft_wrap=True)


def _failed(message: object) -> None:
    """``error: MESSAGE`` on stderr, the message shown as written (a user's path, an agent's bytes)."""
    from clinbench.cli._console import styled

    _error(styled("[bold red]error:[/] {}", message))


class _Interrupted(Exception):
    """Ctrl-C that reached the root group: no command said what it kept."""


def _usage_error(exc) -> str:
    """A Click usage error (unknown option, bad value) as one line, like every other error."""
    from typer._click import exceptions as click  # Typer 0.29 vendors Click: its exceptions are these

    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (see `{ctx.command_path} --help`)"
    return message


def main() -> None:
    """Console-script entry: run the app, turning library and usage errors into one-line messages."""
    from typer._click import exceptions as click

    from clinbench.cli._interrupt import is_interrupt

    try:
        code = app(prog_name="clinbench", standalone_mode=False)
    except ClinbenchError as exc:
        if is_interrupt(exc):
            _error("interrupted")  # Ctrl-C inside a query that a library call reports as its own failure
            sys.exit(130)
        _failed(exc)
        sys.exit(2)
    except click.ClickException as exc:
        if exc.format_message().strip():  # a group run without a command has printed its help instead
            _failed(_usage_error(exc))
        sys.exit(exc.exit_code)
    except typer.Abort:
        _error("aborted")
        sys.exit(1)
    except (KeyboardInterrupt, _Interrupted):
        _error("interrupted")
        sys.exit(130)
    except Exception as exc:
        # Ctrl-C while DuckDB runs a query surfaces as its own exception, not KeyboardInterrupt;
        # the writers clean up their temporary files, so only the traceback needs replacing.
        if is_interrupt(exc):
            _error("interrupted")
            sys.exit(130)
        from clinbench.duck import out_of_memory

        if memory := out_of_memory(exc):  # a step with no handling of its own: what was written is kept
            _failed(f"{memory}, and run the same command again")
            sys.exit(2)
        # A database another program holds open, or a path that is not a DuckDB file, reaches
        # DuckDB from many commands; its message names the file and the holder.
        if _is_duckdb_io_error(exc):
            from clinbench.duck import held_too_long

            if held := held_too_long(exc):
                _failed(held)
                sys.exit(2)
            message = " ".join(str(exc).split())
            _failed(f"{message}; close the program holding the database, or check that the path is a DuckDB "
                    "database, and retry")
            sys.exit(2)
        raise
    sys.exit(code if isinstance(code, int) else 0)


def _is_duckdb_io_error(exc: BaseException) -> bool:
    from clinbench.duck import duckdb

    return isinstance(exc, duckdb.IOException)

