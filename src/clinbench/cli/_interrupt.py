"""Ctrl-C in a long command: say what was kept and how to resume, exit 130, no traceback.

Ctrl-C reaches a command as ``KeyboardInterrupt``, or, while DuckDB runs a query, as DuckDB's
own exception (``RuntimeError('Query interrupted')`` from a scan of Python data): ``is_interrupt``
is the one test of both. A command that catches one calls ``stopped`` with what it kept; one
that does not still ends with "interrupted" and 130 (``clinbench.cli.main``).
"""

from __future__ import annotations

import functools
from typing import NoReturn

import typer

from clinbench.errors import ClinbenchError


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C, as Python or DuckDB raises it, or a library error raised because of one
    (a load that reports DuckDB's failures as its own: Ctrl-C in one of its queries is no load error)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, ClinbenchError):
        return any(is_interrupt(e) for e in (exc.__cause__, exc.__context__) if e is not None and e is not exc)
    from clinbench.duck import duckdb

    return isinstance(exc, duckdb.InterruptException) or (isinstance(exc, RuntimeError)
                                                          and str(exc) == "Query interrupted")


def stopped(console, kept: str) -> NoReturn:
    """Print 'interrupted: KEPT' on one line and exit 130."""
    console.print(f"interrupted: {kept}", highlight=False, soft_wrap=True)
    raise typer.Exit(130)


def says_on_interrupt(kept: str):
    """A command whose Ctrl-C, wherever it lands, prints 'interrupted: KEPT' and exits 130."""
    def wrap(command):
        @functools.wraps(command)
        def interruptible(*args, **kwargs):
            try:
                return command(*args, **kwargs)
            except BaseException as exc:
                if is_interrupt(exc):
                    from clinbench.cli._console import make_console

                    stopped(make_console(stderr=True), kept)
                raise
        return interruptible
    return wrap
