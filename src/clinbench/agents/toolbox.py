"""The agent toolbox: a ``duckdb`` command and a ``python3`` with the ``duckdb`` module, in every sandbox.

Both run the harness's own ``duckdb`` module, so they open the workspace database in the
same storage version the harness wrote. In a bubblewrap (or unisolated) run the toolbox is
mounted read-only from the harness's install: the Python interpreter (``sys.base_prefix``,
the interpreter and standard library only), the ``duckdb`` package alone (not the rest of
the harness's environment: no clinbench code or data) and a ``bin`` folder holding the
``duckdb`` and ``python3`` launchers, first on ``PATH``. The Docker image (see ``Dockerfile``)
carries the same two commands itself.

``preflight`` runs both commands inside a sandbox on a scratch database before a campaign,
so a sandbox without a working toolbox fails before any run is recorded.
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from clinbench.errors import SandboxError

SHELL_SCRIPT = Path(__file__).with_name("duckdb_shell.py")
TOOLBOX_NOTE = (
    "\n\n## Tools in this sandbox\n"
    "There is no network. To query the database use the `duckdb` command, for example "
    "`duckdb {db} -csv -c \"SELECT ...\"` (or pipe SQL into `duckdb {db}`; `.tables` lists the tables; "
    "the database opens read-only), or `python3` with the `duckdb` module "
    "(`duckdb.connect('{db}', read_only=True)`). Write your answer to output.csv in the working folder, "
    "for example `duckdb {db} -c \"COPY (SELECT ...) TO 'output.csv' (HEADER)\"`.\n"
)


@dataclass
class Toolbox:
    """What a sandbox needs for the toolbox: read-only paths, a ``bin`` folder for PATH, environment."""

    ro_paths: list[Path] = field(default_factory=list)
    bin_dir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=1)
def _duckdb_files() -> tuple[Path, list[Path]]:
    """The site folder holding the duckdb module, and the module's own files in it."""
    import duckdb

    package = Path(duckdb.__file__).resolve().parent
    site = package.parent
    files = [package, *sorted(site.glob("duckdb-*.dist-info")),
             *sorted(p for p in site.glob("_duckdb*") if p.suffix in (".so", ".pyd"))]
    return site, files


def interpreter() -> Path:
    """The harness's Python interpreter outside any venv (the venv's site-packages stay out of view)."""
    base = Path(sys.base_prefix) / "bin" / f"python{sysconfig.get_python_version()}"
    return base if base.exists() else Path(sys.executable).resolve()


def prepare(private_dir: Path, sandbox_kind: str) -> Toolbox:
    """Write the launchers under ``private_dir/toolbox/bin``; the Docker image brings its own toolbox."""
    if sandbox_kind == "docker":
        return Toolbox()
    site, files = _duckdb_files()
    python = interpreter()
    bin_dir = private_dir / "toolbox" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    env = {"PYTHONPATH": str(site), "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
           BIN_ENV: str(bin_dir)}
    launchers = {
        "python3": f'exec {shlex.quote(str(python))} "$@"',
        "duckdb": f'exec {shlex.quote(str(python))} {shlex.quote(str(SHELL_SCRIPT))} "$@"',
    }
    launchers["python"] = launchers["python3"]
    for name, body in launchers.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        path.chmod(0o755)
    prefix = Path(sys.base_prefix).resolve()
    ro = [bin_dir, SHELL_SCRIPT, *files]
    if not str(prefix).startswith(("/usr", "/opt")):  # those are mounted in every sandbox already
        ro.append(prefix)
    return Toolbox(ro_paths=ro, bin_dir=bin_dir, env=env)


BIN_ENV = "CLINBENCH_TOOLBOX_BIN"
# A login shell (Codex runs every command as `bash -lc`) resets PATH in /etc/profile; the
# private HOME's profile puts the toolbox first again.
_PROFILE = 'case ":$PATH:" in *":$%s:"*) ;; *) PATH="$%s:$PATH" ;; esac; export PATH' % (BIN_ENV, BIN_ENV)


def with_profile(argv: list[str], box: Toolbox) -> list[str]:
    """``argv`` started after the HOME's ``.profile`` and ``.bashrc`` put the toolbox on PATH."""
    if box.bin_dir is None:
        return list(argv)
    script = ('mkdir -p "$HOME" && for f in .profile .bashrc; do printf "%s\\n" "$0" >> "$HOME/$f"; done && exec "$@"')
    return ["/bin/sh", "-c", script, _PROFILE, *argv]


def note(database: Path | None, root: Path) -> str:
    """The prompt paragraph that tells an external agent which tools it has."""
    db = database.relative_to(root).as_posix() if database is not None else "database.duckdb"
    return TOOLBOX_NOTE.format(db=db)


PREFLIGHT_SCRIPT = (
    'duckdb probe.duckdb -csv -noheader -c "SELECT sum(x) FROM t" && '
    "python3 -c \"import duckdb; print(duckdb.connect('probe.duckdb', read_only=True).execute('SELECT count(*) FROM t').fetchall()[0][0])\""
)


def preflight(sandbox, *, timeout: float = 60.0) -> str:
    """Run both toolbox commands in ``sandbox`` on a scratch database; return what they printed.

    Raises ``SandboxError`` naming the command that failed and what it printed.
    """
    import duckdb

    with tempfile.TemporaryDirectory(prefix="cb-pre-") as tmp:
        tmp_path = Path(tmp)
        ws = tmp_path / "ws"
        ws.mkdir()
        con = duckdb.connect(str(ws / "probe.duckdb"))
        con.execute("CREATE TABLE t AS SELECT range AS x FROM range(4)")
        con.close()
        box = prepare(tmp_path, sandbox.kind)
        env = {"PATH": f"{box.bin_dir}:/usr/local/bin:/usr/bin:/bin" if box.bin_dir else "/usr/local/bin:/usr/bin:/bin",
               "HOME": sandbox.home_for(tmp_path), "LANG": "C.UTF-8", **box.env}
        argv, host_env = sandbox.wrap(["/bin/sh", "-c", PREFLIGHT_SCRIPT], ws, env, ro_paths=box.ro_paths)
        if not sandbox.isolated:
            host_env = {**os.environ, **env}
        try:
            done = subprocess.run(argv, env=host_env, cwd=str(ws), capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxError(f"toolbox preflight in the {sandbox.kind} sandbox did not run: {exc}") from exc
    if done.returncode != 0 or done.stdout.split() != ["6", "4"]:
        lines = (done.stderr or done.stdout).strip().splitlines()
        said = " ".join(lines[-1].split())[:300] if lines else "no output"
        raise SandboxError(
            f"toolbox preflight failed in the {sandbox.kind} sandbox (duckdb CLI and python3 -c 'import duckdb' "
            f"must both read a scratch database; exit {done.returncode}): {said}"
            + ("; rebuild the agent image: docker build -t clinbench-agent:latest ." if sandbox.kind == "docker" else "")
        )
    return done.stdout
