"""Chunking of resampling draws so memory stays bounded whatever the number of draws.

Each chunk gets its own generator spawned from one seed sequence; the chunk size is a fixed
function of the data's width, so a result depends only on the data, ``draws`` and ``seed``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from clinbench.stats.errors import StatsError

# About 32 MiB of float64 per chunk matrix: small next to the machine, large enough that
# numpy spends its time computing rather than looping.
_CELLS_PER_CHUNK = 1 << 22
_DRAWS_PER_CHUNK = 1 << 14


def check_draws(draws: int, option: str = "--draws") -> int:
    """``draws`` itself; callers that size an output array check before allocating it."""
    if draws < 1:
        raise StatsError(f"draws must be at least 1 (got {draws}); pass a positive {option}")
    return draws


def chunks(draws: int, width: int, seed: int) -> Iterator[tuple[np.random.Generator, int]]:
    """Yield (generator, rows) pairs whose rows add up to ``draws``."""
    check_draws(draws)
    rows_per_chunk = max(1, min(_DRAWS_PER_CHUNK, _CELLS_PER_CHUNK // max(width, 1)))
    n_chunks = -(-draws // rows_per_chunk)
    children = np.random.SeedSequence(seed).spawn(n_chunks)
    remaining = draws
    for child in children:
        rows = min(rows_per_chunk, remaining)
        remaining -= rows
        yield np.random.default_rng(child), rows
