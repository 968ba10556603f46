"""Export derivation tasks as Harbor task folders (the Terminal-Bench / Harbor format).

One folder per task, runnable by ``harbor run -p FOLDER``:

- ``instruction.md``: the prompt clinbench gives under the chosen condition, output at
  ``/app/output.csv``;
- ``task.toml``: timeouts, resources, no internet, and clinbench's coordinates in metadata;
- ``environment/``: a Dockerfile and the masked database (copied in, never a drop from a full
  copy) plus any skill files of the condition;
- ``tests/``: ``test.sh`` and ``verify.py``, which run clinbench's own scorer over the hidden
  reference (``reference.duckdb``: the target table only) and write Harbor's
  ``/logs/verifier/reward.txt`` and ``reward.json``, and a ``Dockerfile`` for the verifier's own
  image. ``task.toml`` asks for a separate verifier (``[verifier] environment_mode =
  "separate"``, ``artifacts = ["/app/output.csv"]``): Harbor copies the output out of the agent's
  container and scores it in a fresh one, so the reference never enters a container where a
  process the agent left running could read it;
- ``solution/``: the reference rows and ``solve.sh`` for Harbor's oracle agent.

The verifier refuses an ``output.csv`` that is not a regular file (a symlink could point at
the uploaded tests) or is over the output cap (2 GiB, as ``clinbench run --limit output``),
from its size alone: a sparse 20 GiB file is refused at once, never read.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from importlib import metadata
from pathlib import Path

import clinbench
from clinbench.agents.limits import Limits
from clinbench.atomic import atomic_dir
from clinbench.derive.catalogue import get_task
from clinbench.concepts.manifest import profile_of
from clinbench.derive.reference import export_reference
from clinbench.derive.workspace import prepare_workspace
from clinbench.duck import duckdb
from clinbench.errors import DataError

APP_OUTPUT = "/app/output.csv"
# Packages the verifier imports from clinbench.derive.score (installed in the image).
_VERIFIER_PACKAGES = ("duckdb",)

_TEST_SH = """#!/usr/bin/env bash
# Harbor verifier: score /app/output.csv with clinbench's scorer against the hidden reference.
# APP_DIR, TESTS_DIR, LOGS_DIR and PYTHON override the Harbor paths (for running it by hand).
set -u
APP_DIR="${APP_DIR:-/app}"
TESTS_DIR="${TESTS_DIR:-/tests}"
LOGS_DIR="${LOGS_DIR:-/logs/verifier}"
mkdir -p "$LOGS_DIR"
exec "${PYTHON:-python3}" "$TESTS_DIR/verify.py" "$APP_DIR/output.csv" "$TESTS_DIR" "$LOGS_DIR"
"""

_VERIFY_PY = '''"""Score the agent's output with clinbench's scorer; write reward.txt and reward.json."""
import json
import os
import stat
import sys

output, tests, logs = sys.argv[1:4]
sys.path.insert(0, tests)  # the clinbench package copied beside this file
task_id = json.load(open(os.path.join(tests, "task.json")))["task_id"]


def write(reward, detail):
    with open(os.path.join(logs, "reward.json"), "w") as fh:
        json.dump({"reward": reward, **detail}, fh, indent=2)
    with open(os.path.join(logs, "reward.txt"), "w") as fh:
        fh.write(f"{reward}\\n")


try:
    st = os.lstat(output)
except FileNotFoundError:
    write(0.0, {"reason": "no output.csv was written"})
    sys.exit(0)
if not stat.S_ISREG(st.st_mode):
    write(0.0, {"reason": "output.csv is not a regular file (symlink, FIFO or folder): not scored"})
    sys.exit(0)
cap = json.load(open(os.path.join(tests, "task.json")))["output_cap_bytes"]
if st.st_size > cap:
    write(0.0, {"reason": f"output.csv refused: {st.st_size} bytes, over the {cap}-byte output cap: not read"})
    sys.exit(0)
from clinbench.derive.score import score_output  # noqa: E402

result = score_output(task_id, output, os.path.join(tests, "reference.duckdb"), cache=False)  # scored once
write(result.reward, {"strict": result.strict, "key_f1": result.key_f1, "reason": result.reason,
                      "columns": result.column_match_rates})
'''


def _pins() -> str:
    pins = []
    for name in _VERIFIER_PACKAGES:
        try:
            pins.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pins.append(name)
    return " ".join(pins)


def _dockerfile(has_skills: bool) -> str:
    lines = [
        "# Agent environment for a clinbench derivation task: the masked database, the condition's",
        "# skills, and Python with DuckDB (the same storage version that wrote the database).",
        "FROM python:3.11-slim",
        f"RUN pip install --no-cache-dir {_pins()}",
        "WORKDIR /app",
        "COPY database.duckdb /app/database.duckdb",
    ]
    if has_skills:
        lines.append("COPY skills/ /app/skills/")
    return "\n".join(lines) + "\n"


def _verifier_dockerfile() -> str:
    return "\n".join([
        "# The verifier's own image (Harbor's separate verifier): clinbench's scorer and the hidden",
        "# reference, never in the agent's container.",
        "FROM python:3.11-slim",
        f"RUN pip install --no-cache-dir {_pins()}",
        "COPY . /tests",
    ]) + "\n"


def _task_toml(task_id: str, condition: str, schema: str, timeout_sec: float, family: str, database: str) -> str:
    return (
        'version = "1.0"\n'
        f'artifacts = ["{APP_OUTPUT}"]  # copied out of the agent\'s container for the separate verifier\n\n'
        "[metadata]\n"
        'author_name = "clinbench"\n'
        'category = "clinical-data-derivation"\n'
        f'tags = ["clinbench", "{family}", "{database}"]\n'
        f'clinbench_task = "{task_id}"\n'
        f'clinbench_condition = "{condition}"\n'
        f'clinbench_schema = "{schema}"\n'
        f'clinbench_version = "{clinbench.__version__}"\n\n'
        "[verifier]\n"
        "timeout_sec = 600.0\n"
        'environment_mode = "separate"  # a fresh container: no process of the agent\'s sees the reference\n\n'
        "[agent]\n"
        f"timeout_sec = {float(timeout_sec)}\n\n"
        "[environment]\n"
        "build_timeout_sec = 1800.0\n"
        "cpus = 2\n"
        "memory_mb = 8192\n"
        "allow_internet = false\n"
    )


def folder_name(task_id: str, condition: str, schema: str) -> str:
    if (condition, schema) == ("no-skill", "native"):
        return task_id
    return f"{task_id}.{condition}.{schema}"


def _write_reference_db(spec, db_path: Path, dest: Path) -> int:
    schema, table = spec.target_table.split(".")
    con = duckdb.connect(str(dest))
    try:
        con.execute(f"ATTACH '{str(db_path).replace(chr(39), chr(39) * 2)}' AS src (READ_ONLY)")
        con.execute(f'CREATE SCHEMA "{schema}"')
        con.execute(f'CREATE TABLE "{schema}"."{table}" AS SELECT * FROM src."{schema}"."{table}"')
        return con.execute(f'SELECT count(*) FROM "{schema}"."{table}"').fetchone()[0]
    finally:
        con.close()


def export_harbor_task(task_id: str, db_path: str | Path, out_root: str | Path, *, condition: str = "no-skill",
                       schema: str = "native", timeout_sec: float = 1800.0) -> Path:
    """Write one Harbor task folder under ``out_root``; return its path. Refuses an existing folder."""
    spec = get_task(task_id)
    db_path = Path(db_path)
    dest = Path(out_root) / folder_name(task_id, condition, schema)
    if dest.exists():
        raise DataError(f"{dest} already exists; remove it or pass another output folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(dest) as tmp, tempfile.TemporaryDirectory(prefix="clinbench-harbor-") as scratch:
        ws = prepare_workspace(task_id, condition, schema, db_path, Path(scratch) / "ws", output_path=APP_OUTPUT)
        env = tmp / "environment"
        env.mkdir()
        shutil.copyfile(ws / "database.duckdb", env / "database.duckdb")  # a copy: the workspace file may be a link to the shared cache
        has_skills = (ws / "skills").is_dir()
        if has_skills:
            shutil.copytree(ws / "skills", env / "skills")
        (env / "Dockerfile").write_text(_dockerfile(has_skills), encoding="utf-8")
        (tmp / "instruction.md").write_text((ws / "prompt.md").read_text(encoding="utf-8"), encoding="utf-8")
        (tmp / "task.toml").write_text(
            _task_toml(task_id, condition, schema, timeout_sec, spec.family, spec.database), encoding="utf-8")

        tests = tmp / "tests"
        tests.mkdir()
        rows = _write_reference_db(spec, db_path, tests / "reference.duckdb")
        profile = profile_of(db_path, [spec.target_table])  # which reference profile the hidden reference is
        (tests / "task.json").write_text(json.dumps({"task_id": task_id, "reference_rows": rows, "profile": profile,
                                                     "output_cap_bytes": Limits().output_bytes}), encoding="utf-8")
        (tests / "Dockerfile").write_text(_verifier_dockerfile(), encoding="utf-8")
        (tests / "verify.py").write_text(_VERIFY_PY, encoding="utf-8")
        (tests / "test.sh").write_text(_TEST_SH, encoding="utf-8")
        (tests / "test.sh").chmod(0o755)
        package = Path(clinbench.__file__).parent
        shutil.copytree(package, tests / "clinbench", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

        solution = tmp / "solution"
        solution.mkdir()
        export_reference(task_id, db_path, solution / "output.csv")
        (solution / "solve.sh").write_text(
            "#!/usr/bin/env bash\n# Harbor's oracle: the reference rows.\n"
            f'cp "$(dirname "$0")/output.csv" {APP_OUTPUT}\n', encoding="utf-8")
        (solution / "solve.sh").chmod(0o755)
    return dest


def export_harbor(task_ids: list[str], db_path: str | Path, out_root: str | Path, *, condition: str = "no-skill",
                  schema: str = "native", timeout_sec: float = 1800.0, progress=None) -> list[Path]:
    done = []
    for task_id in task_ids:
        done.append(export_harbor_task(task_id, db_path, out_root, condition=condition, schema=schema,
                                       timeout_sec=timeout_sec))
        if progress is not None:
            progress(task_id)
    return done
