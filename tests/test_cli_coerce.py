"""Option values coerced without pydantic (clinbench.cli._coerce) come out exactly as Typer's own
coercion makes them: the same value of the same type, or the same error message and exit code."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import pytest
import typer
from typer.testing import CliRunner

import clinbench.cli  # noqa: F401  (installs the fast coercion)
from clinbench.cli import _coerce


class Db(str, Enum):
    mimic = "mimic-iv"
    eicu = "eicu"


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def show(
        db: Db = typer.Argument(Db.mimic),
        text: str = typer.Option("dflt"),
        n: int = typer.Option(3),
        low: int = typer.Option(10, min=2),
        x: float = typer.Option(0.5),
        frac: float = typer.Option(0.1, min=0.01),
        flag: bool = typer.Option(False, "--flag/--no-flag"),
        path: Optional[Path] = typer.Option(None),
        out: Path = typer.Option(Path("out")),
        existing: Optional[Path] = typer.Option(None, exists=True),
        item: Optional[list[str]] = typer.Option(None),
        paths: Optional[list[Path]] = typer.Option(None),
    ) -> None:
        for name, value in locals().items():
            print(name, type(value).__name__, repr(value))

    return app


def _invoke(args: list[str], fast: bool, monkeypatch) -> tuple[int, str]:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(_coerce, "plain_coercer", lambda descriptor: None)
        result = CliRunner().invoke(_app(), args)
    return result.exit_code, result.output


CASES = [
    [],
    ["eicu"], ["EICU"], ["nope"],
    ["--text", "abc"], ["--text", ""], ["--text", " x "], ["--text", "-"], ["--text", "é"],
    ["--n", "12"], ["--n", "-3"], ["--n", "007"], ["--n", "+5"], ["--n", " 5"], ["--n", "1_000"],
    ["--n", "5.0"], ["--n", "-0"], ["--n", "00"], ["--n", "abc"], ["--n", ""], ["--n", "123456789012345678901234"],
    ["--low", "1"], ["--low", "2"], ["--low", "50"],
    ["--x", "1.5"], ["--x", "2"], ["--x", "-0.25"], ["--x", "1e3"], ["--x", ".5"], ["--x", "inf"], ["--x", "-0"], ["--x", "007.50"], ["--x", "abc"],
    ["--frac", "0"], ["--frac", "0.01"], ["--frac", "0.5"],
    ["--flag"], ["--no-flag"],
    ["--path", "a/b"], ["--path", "a/b/"], ["--path", "."], ["--path", "-"], ["--path", ""], ["--path", "~"],
    ["--out", "x.csv"], ["--existing", "/no/such/file"], ["--existing", "/"],
    ["--item", "a", "--item", "b,c"], ["--item", ""],
    ["--paths", "a", "--paths", "b/c"],
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a) or "defaults")
def test_fast_coercion_matches_typers_own(args, monkeypatch):
    assert _invoke(args, fast=True, monkeypatch=monkeypatch) == _invoke(args, fast=False, monkeypatch=monkeypatch)


def test_plain_values_come_out_typed(monkeypatch):
    code, out = _invoke(["eicu", "--n", "007", "--x", "2", "--item", "a", "--item", "b", "--path", "a/b"],
                        fast=True, monkeypatch=monkeypatch)
    assert code == 0
    lines = set(out.splitlines())
    assert {"db Db <Db.eicu: 'eicu'>", "n int 7", "x float 2.0", "item list ['a', 'b']",
            "path PosixPath PosixPath('a/b')", "flag bool False", "out PosixPath PosixPath('out')"} <= lines


def test_a_bad_number_is_worded_by_typer(monkeypatch):
    code, out = _invoke(["--low", "1"], fast=True, monkeypatch=monkeypatch)
    assert code == 2 and "--low" in out and "greater than or equal to 2" in out
