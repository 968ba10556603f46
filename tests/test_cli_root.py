import os
import re
import pytest
import subprocess
import sys

from clinbench import __version__


def test_console_script_prints_version():
    out = subprocess.run([sys.executable, "-m", "clinbench", "version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == __version__


def test_unknown_command_exits_2_with_hint():
    out = subprocess.run([sys.executable, "-m", "clinbench", "nope"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "No such command" in out.stderr


def test_ctrl_c_inside_a_duckdb_query_prints_interrupted_not_a_traceback():
    # DuckDB turns Ctrl-C during a scan of Python data into RuntimeError('Query interrupted')
    # (seen on `data synth` of 20,000 patients), not KeyboardInterrupt.
    script = ("import clinbench.cli as cli\n"
              "def interrupted(**kwargs):\n    raise RuntimeError('Query interrupted')\n"
              "cli.app = interrupted\ncli.main()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 130
    assert out.stderr.strip() == "interrupted"


def test_duckdb_running_out_of_memory_in_a_step_without_its_own_handling_is_one_line():
    # a real OutOfMemoryException: a DuckDB given 1 MB and no spill directory sorting 100,000 rows
    script = ("import clinbench.cli as cli\n"
              "from clinbench.duck import duckdb\n"
              "def starved(**kwargs):\n"
              "    con = duckdb.connect()\n"
              "    con.execute(\"SET memory_limit = '1MB'\")\n"
              "    con.execute(\"SET temp_directory = ''\")\n"
              "    con.execute('SELECT range, md5(range::VARCHAR) AS m FROM range(100000) ORDER BY m').fetchall()\n"
              "cli.app = starved\ncli.main()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, "COLUMNS": "400"})
    assert out.returncode == 2, out.stderr
    assert re.fullmatch(r"error: DuckDB ran out of memory \(.+\): close other programs, or use a machine with more "
                        r"memory, and run the same command again", out.stderr.strip()), out.stderr


def test_other_runtime_errors_still_surface():
    script = ("import clinbench.cli as cli\n"
              "def broken(**kwargs):\n    raise RuntimeError('something else')\n"
              "cli.app = broken\ncli.main()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 1
    assert "RuntimeError: something else" in out.stderr


def _commands(group, path=()):
    for name in sorted(group.list_commands(None)):  # the root loads its areas on demand
        cmd = group.get_command(None, name)
        yield from _commands(cmd, path + (name,)) if hasattr(cmd, "commands") else [(path + (name,), cmd)]


def test_every_command_documents_every_argument_and_option():
    import typer

    from clinbench.cli import app

    undocumented = [f"clinbench {' '.join(path)} {p.name}" for path, cmd in _commands(typer.main.get_command(app))
                    for p in cmd.params if p.name != "help" and not (getattr(p, "help", None) or "").strip()]
    assert undocumented == []


@pytest.mark.slow
def test_a_database_held_open_elsewhere_is_a_one_line_error(tmp_path):
    import duckdb

    db = tmp_path / "held.duckdb"
    duckdb.connect(str(db)).close()
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb, sys, time; c = duckdb.connect({str(db)!r}); "
                               "print('open', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        # it waits for the holder to let go (CLINBENCH_LOCK_WAIT seconds, said once a second has passed), then stops
        out = subprocess.run([sys.executable, "-m", "clinbench", "tasks", "reference", "mimic-sofa-24h", "--db", str(db),
                              "--out", str(tmp_path / "s.csv")], capture_output=True, text=True,
                             env={**os.environ, "CLINBENCH_LOCK_WAIT": "1.5", "CLINBENCH_CACHE": str(tmp_path / "cache")})
    finally:
        holder.kill()
        holder.wait()
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"{db} is held by another process (")
    assert f"PID {holder.pid}); waiting for it to let go (1 s so far, up to 1.5 s; Ctrl-C to stop)" in lines[0]
    assert re.fullmatch(rf"error: {re.escape(str(db))} is held by another process \(\S+, PID {holder.pid}\) for "
                        r"the whole 1\.5 s wait: close that program, or set CLINBENCH_LOCK_WAIT to wait longer "
                        r"\(seconds\), and retry", lines[1]), lines[1]
    assert not (tmp_path / "s.csv").exists()
