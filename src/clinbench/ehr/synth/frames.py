"""Vectorised building blocks shared by the generators: grouped ranges, event tables, writing.

Generators describe events as numpy arrays (one element per row, times in epoch seconds)
and hand them to DuckDB as Arrow tables; no Python loop ever runs per event.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Callable
from typing import Any, Iterator

import duckdb
import numpy as np
import pyarrow as pa

from clinbench import atomic
from clinbench.errors import DataError

HOUR = 3600
DAY = 86400


def expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For groups of sizes ``counts``: (group index of each row, position of the row in its group)."""
    counts = np.asarray(counts, dtype=np.int64).clip(min=0)
    group = np.repeat(np.arange(len(counts)), counts)
    starts = np.cumsum(counts) - counts
    pos = np.arange(len(group), dtype=np.int64) - starts[group]
    return group, pos


def grid(start: np.ndarray, end: np.ndarray, step: np.ndarray | int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times ``start + k*step`` strictly before ``end``, per group: (group, k, time)."""
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    step = np.broadcast_to(np.asarray(step, dtype=np.int64), start.shape)
    counts = np.where(end > start, (end - start - 1) // step + 1, 0)
    group, k = expand(counts)
    return group, k, start[group] + k * step[group]


def group_cumsum(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at each new group (rows of a group are contiguous)."""
    total = np.cumsum(values)
    first = np.r_[True, group[1:] != group[:-1]]
    base = np.maximum.accumulate(np.where(first, np.arange(len(values)), 0))
    return total - total[base] + values[base]


def ceil_hour(t: np.ndarray) -> np.ndarray:
    return -(-np.asarray(t, dtype=np.int64) // HOUR) * HOUR


def floor_day(t: np.ndarray) -> np.ndarray:
    return np.asarray(t, dtype=np.int64) // DAY * DAY


def ts(seconds: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """Epoch seconds -> Arrow timestamp; rows where ``valid`` is False become NULL."""
    arr = np.asarray(seconds, dtype=np.int64)
    mask = None if valid is None else ~np.asarray(valid, dtype=bool)
    return pa.array(arr, type=pa.int64(), mask=mask).cast(pa.timestamp("s"))


def nullable(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(np.asarray(values), mask=~np.asarray(valid, dtype=bool))


def pick(choices: list | tuple, index: np.ndarray) -> pa.Array:
    """Strings (or None) from ``choices`` by index, as a dictionary-free Arrow string array."""
    dictionary = pa.array(list(choices), type=pa.string())
    return dictionary.take(pa.array(np.asarray(index, dtype=np.int64)))


class Events:
    """Accumulates pieces of one event table (dicts of equal-length arrays) and concatenates them."""

    def __init__(self) -> None:
        self.pieces: list[dict[str, object]] = []

    def add(self, **columns: object) -> None:
        lengths = {len(v) for v in columns.values() if not np.isscalar(v) and v is not None}
        if len(lengths) > 1:
            raise ValueError(f"columns of unequal length: {lengths}")
        n = lengths.pop() if lengths else 0
        if n:
            self.pieces.append({k: (np.full(n, v) if np.isscalar(v) else v) for k, v in columns.items()})

    def table(self, schema: dict[str, pa.DataType]) -> pa.Table:
        arrays: dict[str, list[pa.Array]] = {name: [] for name in schema}
        for piece in self.pieces:
            n = len(next(iter(piece.values())))
            for name, type_ in schema.items():
                value = piece.get(name)
                if value is None:
                    arrays[name].append(pa.nulls(n, type_))
                elif isinstance(value, (pa.Array, pa.ChunkedArray)):
                    arrays[name].append(value.cast(type_))
                else:
                    arrays[name].append(pa.array(np.asarray(value)).cast(type_))
        return pa.table({name: pa.concat_arrays(parts) if parts else pa.array([], type=schema[name])
                         for name, parts in arrays.items()})


def insert(con: duckdb.DuckDBPyConnection, qualified: str, data: pa.Table | dict, select: str = "s.*",
           joins: str = "") -> int:
    """Append ``data`` (aliased ``s``) to ``qualified`` by column name; ``select``/``joins`` may derive columns."""
    table = data if isinstance(data, pa.Table) else pa.table(data)
    if table.num_rows == 0:
        return 0
    con.register("synth_src", table)
    try:
        con.execute(f"INSERT INTO {qualified} BY NAME SELECT {select} FROM synth_src AS s {joins}")
    finally:
        con.unregister("synth_src")
    return table.num_rows


@contextmanager
def atomic_database(out_path: str | os.PathLike) -> Iterator[duckdb.DuckDBPyConnection]:
    """``clinbench.atomic.atomic_database`` after checking that ``out_path`` can be a synthetic database."""
    out = Path(out_path)
    if out.suffix != ".duckdb":
        raise DataError(f"{out} must end in .duckdb: pass --out FILE.duckdb")
    if out.is_dir():
        raise DataError(f"{out} is a folder: pass --out FILE.duckdb")
    if not out.parent.exists():
        raise DataError(f"folder {out.parent} does not exist: create it or choose another --out")
    with atomic.atomic_database(out) as con:
        yield con


def record_synthesis(con: duckdb.DuckDBPyConnection, dataset: str, patients: int, seed: int) -> None:
    """Mark the database as synthetic (``clinbench_meta.synthesis``), so reports can say so."""
    from clinbench import __version__

    con.execute("CREATE SCHEMA IF NOT EXISTS clinbench_meta")
    con.execute("CREATE OR REPLACE TABLE clinbench_meta.synthesis AS SELECT ? AS generator, ? AS dataset, "
                "? AS patients, ? AS seed", [f"clinbench {__version__} data synth", dataset, patients, seed])


def synthesise(out_path: str | os.PathLike, dataset: str, builder: Callable[..., Any], *, patients: int, seed: int,
               after_raw: Callable[..., object] | None, knobs: dict) -> Path:
    """The one way a synthetic database is written: size and knobs checked, ``builder(con, patients,
    seed, Knobs).build()`` into a file that appears only when complete, ``after_raw(con, dataset)``
    once the raw tables are written, and the database marked synthetic."""
    from clinbench.ehr.synth.knobs import Knobs, check_size, known_knobs

    check_size(patients, seed)
    settings = Knobs(**known_knobs(knobs))
    out = Path(out_path)
    with atomic_database(out) as con:
        builder(con, patients, seed, settings).build()
        if after_raw is not None:
            after_raw(con, dataset)
        record_synthesis(con, dataset, patients, seed)
    return out
