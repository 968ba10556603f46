"""The one command-line entry.

Each module in this package holds the thin Typer commands of one area and exposes
``register(app)``; modules are discovered here, so adding an area never edits this file.
Commands call library code and print; library code raises ``ClinbenchError``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer
from rich.console import Console

from clinbench.errors import ClinbenchError

app = typer.Typer(
    name="clinbench",
    help="Benchmarks for AI agents doing clinical data work on MIMIC-style EHR databases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)


@app.callback()
def _root() -> None:
    """Benchmarks for AI agents doing clinical data work on MIMIC-style EHR databases."""


def _register_areas() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


@app.command()
def version() -> None:
    """Print the installed clinbench version."""
    from clinbench import __version__

    print(__version__)


_register_areas()


def main() -> None:
    """Console-script entry: run the app, turning library errors into one-line messages."""
    try:
        app()
    except ClinbenchError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except Exception as exc:
        # Ctrl-C while DuckDB runs a query surfaces as its own exception, not KeyboardInterrupt;
        # the writers clean up their temporary files, so only the traceback needs replacing.
        if _is_duckdb_interrupt(exc):
            err_console.print("interrupted")
            sys.exit(130)
        # A database another program holds open, or a path that is not a DuckDB file, reaches
        # DuckDB from many commands; its message names the file and the holder.
        if _is_duckdb_io_error(exc):
            message = " ".join(str(exc).split())
            err_console.print(f"[bold red]error:[/] {message}; close the program holding the database, or check "
                              "that the path is a DuckDB database, and retry", highlight=False, soft_wrap=True)
            sys.exit(2)
        raise


def _is_duckdb_io_error(exc: BaseException) -> bool:
    import duckdb

    return isinstance(exc, duckdb.IOException)


def _is_duckdb_interrupt(exc: BaseException) -> bool:
    import duckdb

    return isinstance(exc, duckdb.InterruptException) or (
        isinstance(exc, RuntimeError) and str(exc) == "Query interrupted"
    )
