"""DuckDB's engine for the paths that only run SQL (scoring): the C extension the ``duckdb`` package wraps.

DuckDB >= 2.0's ``duckdb`` package lays a Python relational API over its extension ``_duckdb``
(200 kB of Python and ``importlib.metadata`` for its version: about 0.1 s of CPU to import,
measured in benchmarks/score_vs_m4bench.py). Connections, ``execute``/``fetch*``, the exceptions
and ``__version__`` are the extension's own objects, the same ones ``duckdb`` re-exports, so a
module that only executes SQL imports ``duckdb`` from here. An older DuckDB, without
``_duckdb``, is imported whole.
"""

try:
    import _duckdb as duckdb
except ImportError:  # DuckDB < 2.0
    import duckdb  # type: ignore[no-redef]

__all__ = ["duckdb"]
