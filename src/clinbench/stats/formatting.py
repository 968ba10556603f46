"""How a comparison's figures are written as text, the same in the terminal, Markdown and HTML."""

from __future__ import annotations

from clinbench.stats.compare import Interval, StrictCount


def signed(x: float, digits: int = 3) -> str:
    """A delta with its sign, ``digits`` decimals; one that rounds to zero is '0.000', never '-0.000'."""
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def scope_text(tasks: int, families: int, benchmark: str) -> str:
    """What the runs cover: '28 tasks in 15 families', '32 cases' for diagnosis runs (a case has no family:
    '32 tasks in 0 families' was printed), '3 tasks' when no family mapping was given."""
    if benchmark == "dx":
        return f"{tasks} case{'s' * (tasks != 1)}"
    return f"{tasks} task{'s' * (tasks != 1)}" + (f" in {families} famil{'ies' if families != 1 else 'y'}" if families else "")


def ci_text(ci: Interval | None) -> str:
    return "—" if ci is None else f"[{signed(ci.lo)}, {signed(ci.hi)}]"


def left_out_text(c) -> str:
    """The runs a comparison left out because only one side ran their cell (agent, model, condition, schema) on that task."""
    return (f"{c.cells_left_out} cells (agent, model, condition, schema) run under one side only left out "
            f"({c.runs_left_out} runs)" if c.cells_left_out else "every cell (agent, model, condition, schema) ran under both sides")


def strict_text(s: StrictCount | None) -> str:
    """Passes out of runs when that is the cell-balanced share (equal trials per cell); otherwise the
    cell-balanced share, with the run count beside it."""
    if s is None:
        return "—"
    if s.balanced:
        return f"{s.passed}/{s.runs}"
    return f"{s.share:.1%} cell-balanced ({s.passed}/{s.runs} runs)"


def p_text(p: float, *, digits: int = 1) -> str:
    """Four decimals, or scientific notation (``digits`` after the point) below 0.001, where
    four decimals would print a small p as 0.0000."""
    return f"{p:.{digits}e}" if p < 1e-3 else f"{p:.4f}"


def mean_ci_text(ci: Interval | None) -> str:
    """An interval of a mean (not a delta): no signs."""
    return "—" if ci is None else f"[{ci.lo:.3f}, {ci.hi:.3f}]"


def pct_text(x: float | None) -> str:
    """A share as a percentage at one decimal; 'n/a' when there is none."""
    return "n/a" if x is None else f"{x:.1%}"


def usd_text(x: float | None) -> str:
    """Dollars, whole, with thousands separators; 'n/a' when there are none."""
    return "n/a" if x is None else f"${x:,.0f}"
