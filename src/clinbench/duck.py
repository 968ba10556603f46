"""DuckDB's engine as clinbench uses it: the C extension the ``duckdb`` package wraps.

DuckDB >= 2.0's ``duckdb`` package lays a Python relational API over its extension ``_duckdb``
(200 kB of Python and ``importlib.metadata`` for its version: 40-110 ms to import (measured), paid by
every ``score``, ``rescore`` and ``run`` process: benchmarks/score_vs_m4bench.py). Connections,
``execute``/``fetch*``, the exceptions, ``StatementType``, ``extract_statements`` and ``__version__``
are the extension's own objects, the same ones ``duckdb`` re-exports, so modules import ``duckdb``
from here. The package is imported only where its Python layer is used (tests/test_layering.py lists
each place): Arrow exchange (synth's scans of pyarrow tables, the store's runs table) and the agent's
sandbox (agents/toolbox.py mounts the package's folder; agents/duckdb_shell.py runs in there with it
alone). An older DuckDB, without ``_duckdb``, is imported whole.
"""

try:
    import _duckdb as duckdb
except ImportError:  # DuckDB < 2.0
    import duckdb  # type: ignore[no-redef]

__all__ = ["connect_meanwhile", "duckdb"]


def connect_meanwhile():
    """Start an in-memory DuckDB on another thread and return a function that waits for it.

    Starting DuckDB takes 20-30 ms (its catalogue of functions) and holds no Python lock, so a process
    that imports its Python modules in the meantime (``clinbench score``) ends that much sooner. The
    function returns the connection, or raises what the start raised."""
    import threading

    box: list = []

    def start() -> None:
        try:
            box.append(duckdb.connect())
        except BaseException as exc:  # noqa: BLE001 - raised in the thread that waits
            box.append(exc)

    thread = threading.Thread(target=start, name="duckdb-start", daemon=True)
    thread.start()

    def wait():
        thread.join()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    return wait
