"""Export a task's reference rows (or a reference-validity variant's rows) as an output CSV.

Used by ``clinbench tasks reference`` (users auditing a target) and by the built-in
``reference``/``variant`` agents. The CSV has the task's required columns in order, rows
sorted by the task's keys, written to a temporary file and renamed into place.
"""

from __future__ import annotations

from pathlib import Path

from clinbench.atomic import atomic_path
from clinbench.derive.catalogue import TaskSpec, get_task
from clinbench.duck import RELATIONS, connect_when_free, duckdb
from clinbench.errors import DataError, TaskError


def missing_reference(spec: TaskSpec, db_path: Path, schemas: set[str]) -> str:
    """What to do when ``spec``'s reference is absent from a database holding ``schemas``.

    Building concepts helps only when the database holds the task's dataset at all.
    """
    from clinbench.ehr.schema import dataset_tables

    if {t.schema for t in dataset_tables(spec.database)}.isdisjoint(schemas):
        return (f"{db_path} holds no {spec.database} data, so it has no reference for {spec.id}; "
                f"pass --db a database loaded from {spec.database} with the concepts built")
    return (f"reference table {spec.target_table} is not in {db_path}; "
            f"run `clinbench concepts build {db_path} --only {spec.id}`")


def variant_table(spec: TaskSpec, variant: str) -> str:
    """Qualified name of a reference-validity variant's table (``<ref>__<variant>``)."""
    name = variant.split("__", 1)[1] if "__" in variant else variant
    return f"{spec.derived_schema}.variant_{spec.reference.replace('-', '_')}__{name.replace('-', '_')}"


def export_reference(task_id: str, db_path: str | Path, out_csv: str | Path, *, variant: str | None = None,
                     profile: str | None = None) -> int:
    """Write the reference (or variant) output of ``task_id`` to ``out_csv``; return the row count.
    With ``profile``, a reference whose manifest records another reference profile is refused."""
    spec = get_task(task_id)
    db_path, out_csv = Path(db_path), Path(out_csv)
    if not db_path.is_file():
        raise DataError(f"database {db_path} not found; pass --db the database the references were built in")
    if variant is not None:
        check_variant(spec, variant)
    table = spec.target_table if variant is None else variant_table(spec, variant)
    con = connect_when_free(db_path, read_only=True)
    try:
        schema, name = table.split(".")
        have = {c for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ?", [schema, name]
        ).fetchall()}
        if not have:
            schemas = {s for (s,) in con.execute(f"SELECT DISTINCT schema_name FROM {RELATIONS}").fetchall()}
            message = missing_reference(spec, db_path, schemas)
            if variant is not None and message.startswith("reference table"):
                message = (f"variant {variant!r} table {table} is not in {db_path}; "
                           f"run `clinbench concepts build {db_path} --only {table}`")
            raise TaskError(message)
        if profile is not None:
            _check_profile(con, table, profile, db_path)
        missing = [c for c in spec.required_columns if c not in have]
        if missing:
            raise TaskError(f"{table} lacks required column(s) {', '.join(missing)}; rebuild the concepts")
        cols = ", ".join(f'"{c}"' for c in spec.required_columns)
        keys = ", ".join(f'"{c}"' for c in spec.keys)
        out_csv.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out_csv) as tmp:
            con.execute(
                f"COPY (SELECT {cols} FROM {table} ORDER BY {keys}) TO '{_esc(str(tmp))}' "
                "(HEADER, DELIMITER ',', TIMESTAMPFORMAT '%Y-%m-%d %H:%M:%S')"
            )
        rows = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        con.close()
    return rows


def _check_profile(con: duckdb.DuckDBPyConnection, table: str, profile: str, db_path: Path) -> None:
    from clinbench.concepts.manifest import manifest_rows
    from clinbench.concepts.profiles import DEFAULT_PROFILE, get_profile, label

    built = manifest_rows(con).get(table, {}).get("profile")
    if built is not None and built != label(profile):  # a reference built by hand records none
        option = "" if get_profile(profile).name == DEFAULT_PROFILE else f" --profile {profile}"
        raise TaskError(f"{table} in {db_path} was built with reference profile {built}, not {label(profile)}; "
                        f"run `clinbench concepts build {db_path}{option}`, or pass --profile {built.split('@')[0]}")


def check_variant(spec: TaskSpec, variant: str) -> None:
    """An unknown variant name is a typo to name, not a database to rebuild."""
    from clinbench.concepts.variants import list_variants

    label = variant.split("__", 1)[1] if "__" in variant else variant
    known = [v.label for v in list_variants() if v.reference == spec.reference]
    if label.replace("-", "_") not in {k.replace("-", "_") for k in known}:
        choices = ", ".join(known) if known else "none"
        raise TaskError(f"task {spec.id} has no variant {variant!r}; its variants: {choices} "
                        "(see `clinbench concepts variants DB`)")


def _esc(text: str) -> str:
    return text.replace("'", "''")
