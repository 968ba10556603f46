"""Which runs form a compared group: ``--compare`` parsed, and a group's runs selected.

``--compare A:B`` compares two conditions (the shorthand); ``--compare DIM:A:B`` compares
two values of another dimension: ``condition``, ``agent``, ``model`` or ``schema`` (schema
variant). An agent value is an agent name (``codex``: all its models) or ``agent/model``
(``codex/gpt-5.4-mini``). Values may themselves hold colons (``model:llama3:8b:qwen2:7b``):
the split is chosen so that both sides name values present in the runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clinbench.stats.errors import StatsError
from clinbench.stats.runs import Runs

DIMENSIONS = ("condition", "agent", "model", "schema")


@dataclass(frozen=True)
class GroupPair:
    """Compare ``b`` against ``a`` (delta = b − a) along ``dimension``."""

    dimension: str
    a: str
    b: str


def group_mask(runs: Runs, dimension: str, value: str) -> np.ndarray:
    """The runs of one group: ``agent`` matches a name or an ``agent/model`` label."""
    if dimension not in DIMENSIONS:
        raise StatsError(f"cannot compare over {dimension!r}; use one of {', '.join(DIMENSIONS)}")
    if dimension == "agent":
        return (runs.agent == value) | (runs.labels == value)
    return getattr(runs, dimension) == value


def group_values(runs: Runs, dimension: str) -> list[str]:
    """The values present along ``dimension`` (agents as ``agent/model`` labels)."""
    if dimension == "agent":
        return sorted(set(runs.labels.tolist()))
    return sorted(set(getattr(runs, dimension).tolist()))


def _present(runs: Runs | None, dimension: str, value: str) -> bool:
    return runs is None or bool(group_mask(runs, dimension, value).any())


def split_pair(parts: list[str], present) -> list[tuple[str, str]]:
    """The ways to split ``parts`` (a spec split at its colons) into two values ``present`` knows."""
    splits = [(":".join(parts[:i]), ":".join(parts[i:])) for i in range(1, len(parts))]
    return [s for s in splits if present(s[0]) and present(s[1])]


def parse_compare(spec: str, runs: Runs | None = None) -> GroupPair:
    """``A:B`` (conditions) or ``DIM:A:B``; with ``runs``, a value with colons is split where
    both sides are present."""
    parts = [p.strip() for p in spec.split(":")]
    dimension = "condition"
    if len(parts) >= 3 and parts[0] in DIMENSIONS:
        dimension, parts = parts[0], parts[1:]
    if len(parts) < 2 or not all(parts):
        raise StatsError(
            f"--compare takes A:B (two conditions, e.g. no-skill:with-skill) or DIM:BASE:NEW (delta = NEW − BASE) with DIM one of "
            f"{', '.join(DIMENSIONS)} (e.g. agent:codex/gpt-5.4-mini:claude/sonnet), got {spec!r}"
        )
    splits = [(":".join(parts[:i]), ":".join(parts[i:])) for i in range(1, len(parts))]
    if len(splits) > 1:
        fitting = split_pair(parts, lambda v: _present(runs, dimension, v))
        if runs is None or len(fitting) != 1:
            raise StatsError(f"--compare {spec!r} splits into two {dimension} values in more than one way or none; "
                             f"{dimension}s present: {', '.join(group_values(runs, dimension)) if runs else 'unknown'}")
        splits = fitting
    a, b = splits[0]
    if a == b:
        raise StatsError(f"--compare needs two different {dimension} values, got {a!r} twice")
    return GroupPair(dimension, a, b)
