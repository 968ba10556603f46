"""The run's dollar cost from a user-editable price table (``prices.toml`` beside this module).

``cost_of(model, usage)`` prices input tokens (less the cached ones), cached input tokens and
output tokens at the first table entry whose pattern matches the model name; a model with no
entry has no cost (``None``), so an unknown price is never reported as a number. A user's own
table is passed as ``path`` (``clinbench run --prices FILE``) or ``CLINBENCH_PRICES``.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from clinbench.records import Usage
from clinbench.errors import AgentError

DEFAULT_TABLE = Path(__file__).with_name("prices.toml")
PRICES_ENV = "CLINBENCH_PRICES"


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cached_input: float


def load_prices(path: str | os.PathLike[str] | None = None) -> dict[str, Price]:
    """Pattern -> price, in file order; a missing or malformed file is an ``AgentError`` saying which."""
    table = Path(path or os.environ.get(PRICES_ENV) or DEFAULT_TABLE)
    try:
        data = tomllib.loads(table.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise AgentError(f"price table {table}: {exc}; fix it or pass another with --prices FILE") from exc
    prices = {}
    for pattern, entry in (data.get("models") or {}).items():
        try:
            prices[pattern] = Price(float(entry["input"]), float(entry["output"]),
                                    float(entry.get("cached_input", entry["input"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise AgentError(f"price table {table}: model {pattern!r} needs numeric input and output prices ({exc})") from exc
    return prices


def price_for(model: str | None, prices: dict[str, Price]) -> Price | None:
    if not model:
        return None
    return next((p for pattern, p in prices.items() if fnmatch.fnmatchcase(model, pattern)), None)


def cost_of(model: str | None, usage: Usage | None, path: str | os.PathLike[str] | None = None) -> float | None:
    """Dollars for ``usage`` at ``model``'s price, or None when the table has no price for it."""
    if usage is None:
        return None
    price = price_for(model, load_prices(path))
    if price is None:
        return None
    cached = min(usage.cached_input_tokens, usage.input_tokens)
    return ((usage.input_tokens - cached) * price.input + cached * price.cached_input
            + usage.output_tokens * price.output) / 1_000_000
