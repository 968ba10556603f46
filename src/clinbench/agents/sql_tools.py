"""The built-in agent's tools over a workspace database: list_tables, describe_table, run_sql,
read_skill, write_output.

The database is opened read-only with external access switched off and the configuration
locked, so a query cannot write, attach another file or read the file system: the
workspace database is the agent's whole world. Each query runs under a time cap
(``interrupt`` from a timer) and returns at most ``max_rows`` rows.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import threading
from pathlib import Path
from collections.abc import Callable
from typing import Any

from clinbench.agents.llm_clients import ToolSpec
from clinbench.atomic import atomic_path
from clinbench.duck import duckdb

TOOL_SPECS = [
    ToolSpec("list_tables", "List the tables of the database as schema.table.", {"type": "object", "properties": {}}),
    ToolSpec(
        "describe_table",
        "Column names and types of one table (schema.table).",
        {"type": "object", "properties": {"table": {"type": "string"}}, "required": ["table"]},
    ),
    ToolSpec(
        "run_sql",
        "Run one read-only DuckDB SQL query; returns at most the first rows as CSV.",
        {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
    ),
    ToolSpec(
        "read_skill",
        "Read a skill document given for this task, by name (call with no name to list them).",
        {"type": "object", "properties": {"name": {"type": "string"}}},
    ),
    ToolSpec(
        "write_output",
        "Run a DuckDB SQL query and save its full result as output.csv (your answer). Calling it again replaces the answer.",
        {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
    ),
]


_SPECS = {t.name: t for t in TOOL_SPECS}
_JSON_TYPES = {"string": str, "object": dict, "integer": int, "number": (int, float), "boolean": bool, "array": list}


def argument_problem(spec: ToolSpec, arguments: Any) -> str | None:
    """What is wrong with ``arguments`` for ``spec`` (missing, unknown or wrong-type keys), or None."""
    if not isinstance(arguments, dict):
        return f"arguments must be a JSON object, not {type(arguments).__name__}"
    props = spec.parameters.get("properties", {})
    missing = [k for k in spec.parameters.get("required", []) if k not in arguments]
    if missing:
        return f"missing argument {', '.join(missing)}"
    unknown = [k for k in arguments if k not in props]
    if unknown:
        return f"unknown argument {', '.join(map(repr, unknown))}; arguments are {', '.join(props) or 'none'}"
    for key, value in arguments.items():
        want = props[key].get("type")
        if value is None and key not in spec.parameters.get("required", []):
            continue
        if want in _JSON_TYPES and (not isinstance(value, _JSON_TYPES[want]) or isinstance(value, bool) and want != "boolean"):
            return f"argument {key!r} must be a {want}, not {type(value).__name__} ({json.dumps(value)[:60]})"
    return None


class ToolError(Exception):
    """A tool call the agent got wrong; the message goes back to the model."""


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


_COUNT_BATCH = 2048  # rows past the cap are counted this many at a time, never all held


class WorkspaceTools:
    """The five tools, bound to one workspace."""

    def __init__(self, database: Path | None, output_csv: Path, skills: list[Path], *,
                 max_rows: int = 100, time_limit_seconds: float = 60.0):
        self.output_csv = output_csv
        self.skills = {p.name: p for p in skills}
        self.max_rows = max_rows
        self.time_limit_seconds = time_limit_seconds
        self._con: duckdb.DuckDBPyConnection | None = None
        if database is not None:
            self._con = duckdb.connect(str(database), read_only=True)
            self._con.execute("SET enable_external_access = false")
            self._con.execute("SET lock_configuration = true")

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    # -- dispatch ------------------------------------------------------------------
    def call(self, name: str, arguments: Any) -> str:
        """The tool's result, or ``error: ...`` (one line) for the model when the call is wrong."""
        spec = _SPECS.get(name)
        if spec is None:
            return f"error: unknown tool {name!r}; tools are {', '.join(t.name for t in TOOL_SPECS)}"
        problem = argument_problem(spec, arguments)
        if problem:
            return f"error: {name}: {problem}"
        try:
            return getattr(self, f"tool_{name}")(**arguments)
        except ToolError as exc:
            return f"error: {exc}"
        except duckdb.Error as exc:
            return f"error: {str(exc).splitlines()[0][:500]}"

    def _query(self, sql: str, limit: int | None = None, sink: Callable[[list[str], list[tuple]], None] | None = None,
               ) -> tuple[list[str], list[tuple], int]:
        """Column names, rows and the row count; with ``limit`` only that many rows are kept (the rest
        are counted in batches and dropped, so a huge result cannot fill the harness's memory); with
        ``sink`` every row is handed to it, a batch at a time, and none is kept.

        The query is the model's: its errors, its time limit and a result Python cannot hold (an
        INTERVAL of a billion days, a year past 9999) are the model's, a ``ToolError``."""
        if self._con is None:
            raise ToolError("this workspace has no database")
        if not isinstance(sql, str) or not sql.strip():
            raise ToolError("sql must be a non-empty string")
        timer = threading.Timer(self.time_limit_seconds, self._con.interrupt)
        timer.start()
        try:
            cur = self._con.execute(sql)
            if cur.description is None:
                return [], [], 0
            names = [d[0] for d in cur.description]
            rows = cur.fetchmany(limit if limit is not None else _COUNT_BATCH)
            total = len(rows)
            if sink is not None:
                sink(names, rows)
                rows = []
            while batch := cur.fetchmany(_COUNT_BATCH):
                total += len(batch)
                if sink is not None:
                    sink(names, batch)
                elif limit is None:
                    rows += batch
            return names, rows, total
        except duckdb.InterruptException as exc:
            raise ToolError(f"query stopped after the {self.time_limit_seconds:g} s time limit; make it cheaper") from exc
        except duckdb.Error as exc:
            raise ToolError(str(exc).splitlines()[0][:500]) from exc
        except (OverflowError, ValueError, UnicodeError, TypeError) as exc:  # DuckDB's value to Python's
            raise ToolError(f"the result cannot be read: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}") from exc
        finally:
            timer.cancel()

    # -- tools ---------------------------------------------------------------------
    def tool_list_tables(self) -> str:
        _, rows, _ = self._query(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('information_schema', 'pg_catalog') ORDER BY 1"
        )
        return "\n".join(r[0] for r in rows) or "(no tables)"

    def tool_describe_table(self, table: str) -> str:
        schema, _, name = table.rpartition(".")
        params = [name] + ([schema] if schema else [])
        _, rows = self._query_params(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?"
            + (" AND table_schema = ?" if schema else "") + " ORDER BY ordinal_position",
            params,
        )
        if not rows:
            raise ToolError(f"no table {table!r}; call list_tables")
        return "\n".join(f"{c} {t}" for c, t in rows)

    def _query_params(self, sql: str, params: list[Any]) -> tuple[list[str], list[tuple]]:
        if self._con is None:
            raise ToolError("this workspace has no database")
        cur = self._con.execute(sql, params)
        return [d[0] for d in cur.description], cur.fetchall()

    def tool_run_sql(self, sql: str) -> str:
        names, shown, total = self._query(sql, limit=self.max_rows)
        if not names:
            return "(statement ran; no result set)"
        lines = [",".join(names)] + [",".join(str(_cell(v)) for v in r) for r in shown]
        more = f"\n... {total - len(shown)} more rows not shown (row cap {self.max_rows})" if total > len(shown) else ""
        return "\n".join(lines) + more + f"\n({total} rows)"

    def tool_read_skill(self, name: str | None = None) -> str:
        if not name:
            return "skills: " + (", ".join(sorted(self.skills)) or "(none given)")
        skill = self.skills.get(name)
        if skill is None:
            raise ToolError(f"no skill {name!r}; given: {', '.join(sorted(self.skills)) or 'none'}")
        return (skill / "SKILL.md").read_text(encoding="utf-8")

    def tool_write_output(self, sql: str) -> str:
        with atomic_path(self.output_csv) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)

            def write(names: list[str], rows: list[tuple]) -> None:  # a batch at a time: never held whole
                if fh.tell() == 0:
                    writer.writerow(names)
                writer.writerows([_cell(v) for v in r] for r in rows)

            names, _, total = self._query(sql, sink=write)
            if not names:
                raise ToolError("write_output needs a query that returns rows (a SELECT)")
        return json.dumps({"written": self.output_csv.name, "rows": total, "columns": names})
