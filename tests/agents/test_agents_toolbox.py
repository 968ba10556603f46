"""The agent toolbox inside the sandbox: `duckdb` and `python3 -c 'import duckdb'` read the
workspace database (the harness's storage version), and nothing else of the harness's
environment is visible."""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb
import pytest

from clinbench.agents import toolbox
from clinbench.agents.sandbox import BwrapSandbox, NoSandbox, bwrap_available
from clinbench.errors import SandboxError

needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot create namespaces here")


def _in_sandbox(sandbox, workspace: Path, tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    box = toolbox.prepare(tmp_path / "private", sandbox.kind)
    env = {"PATH": f"{box.bin_dir}:/usr/bin:/bin", "HOME": sandbox.home_for(tmp_path / "private"), **box.env}
    argv, host_env = sandbox.wrap(toolbox.with_profile(["bash", "-lc", script], box), workspace, env, ro_paths=box.ro_paths)
    return subprocess.run(argv, env=host_env, cwd=workspace, capture_output=True, text=True, timeout=60)


@needs_bwrap
@pytest.mark.slow
def test_duckdb_cli_and_python_module_read_the_workspace_database_in_bwrap(workspace, tmp_path):
    done = _in_sandbox(BwrapSandbox(), workspace, tmp_path,
                       "duckdb database.duckdb -csv -c 'SELECT stay_id, los FROM mimiciv_icu.icustays ORDER BY 1' && "
                       "duckdb database.duckdb -c '.tables' && "
                       "python3 -c \"import duckdb; print(duckdb.__version__)\" && "
                       "duckdb database.duckdb -c \"COPY (SELECT 1 AS stay_id) TO 'output.csv' (HEADER)\"")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["stay_id,los", "100,1.5", "200,3.25", "300,0.5", "mimiciv_icu.icustays", duckdb.__version__]
    assert (workspace / "output.csv").read_text() == "stay_id\n1\n"


@needs_bwrap
def test_the_toolbox_database_is_read_only_and_the_harness_environment_stays_out(workspace, tmp_path):
    site = Path(duckdb.__file__).resolve().parent.parent
    done = _in_sandbox(BwrapSandbox(), workspace, tmp_path,
                       f"duckdb database.duckdb -c 'DROP TABLE mimiciv_icu.icustays'; echo rc=$?; "
                       f"python3 -c 'import clinbench' 2>&1 | tail -1; ls {site}")
    lines = done.stdout.splitlines()
    assert "rc=1" in lines and "read-only" in done.stderr
    assert "ModuleNotFoundError: No module named 'clinbench'" in lines
    assert sorted(line for line in lines if line.startswith(("duckdb", "_duckdb"))) == sorted(
        p.name for p in toolbox._duckdb_files()[1])
    assert not any(line in ("httpx", "openai", "numpy") for line in lines)  # only the duckdb files are mounted


@pytest.mark.slow
def test_preflight_passes_where_the_toolbox_works_and_names_the_failure_where_not(monkeypatch, tmp_path):
    assert toolbox.preflight(NoSandbox()).split() == ["6", "4"]
    monkeypatch.setattr(toolbox, "SHELL_SCRIPT", tmp_path / "missing_shell.py")
    with pytest.raises(SandboxError, match=r"toolbox preflight failed in the none sandbox .*missing_shell\.py"):
        toolbox.preflight(NoSandbox())


def test_the_prompt_note_names_the_database_and_the_commands(workspace):
    note = toolbox.note(workspace / "database.duckdb", workspace)
    assert "`duckdb database.duckdb -csv -c" in note and "python3" in note and "read-only" in note
