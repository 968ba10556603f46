"""The disk watchdog sees every byte of the workspace, wherever an agent hides it (found by a review of 043fcd5).

Before: the walk opened folders by absolute name and skipped any it could not open, so data under a path
longer than PATH_MAX (relative mkdir/chdir, as any agent can) or in a folder made unreadable was not counted:
96 MiB passed a 16 MiB limit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clinbench.agents.limits import MiB, Limits
from clinbench.agents.process import MAX_DEPTH, UNCOUNTABLE, run_process, workspace_usage

DEEP_WRITER = r'''
import os, sys, time
os.chdir(sys.argv[1])
for _ in range(20):  # 20 names of 250 bytes: a path of about 5,000 bytes, past PATH_MAX (4,096)
    os.mkdir("d" * 250)
    os.chdir("d" * 250)
with open("fill.bin", "wb") as fh:
    for _ in range(24):
        fh.write(os.urandom(1 << 20))
print(len(os.getcwd()), flush=True)
time.sleep(20)  # the watchdog ends the run before this
'''


def test_bytes_past_path_max_are_counted_and_stop_the_run(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "agent.py").write_text(DEEP_WRITER)
    try:
        res = run_process([sys.executable, str(tmp_path / "agent.py"), str(ws)], dict(os.environ), cwd=ws,
                          stdout_path=tmp_path / "out", stderr_path=tmp_path / "err", timeout=60,
                          limits=Limits(disk_bytes=16 * MiB), workspace=ws)
        assert int((tmp_path / "out").read_text()) > 4096  # the file really was past PATH_MAX
        assert res.limit == "disk" and res.elapsed < 15
    finally:
        shutil.rmtree(ws)  # by folder descriptors: the session's own checks walk tmp by name


def test_the_count_is_what_the_files_hold_and_a_tree_too_deep_to_walk_is_over_every_limit(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.bin").write_bytes(b"x" * 100_000)
    with open(tmp_path / "holes.bin", "wb") as fh:
        fh.truncate(3 * MiB)  # no blocks: counts at its size
    os.link(tmp_path / "a" / "x.bin", tmp_path / "same.bin")  # a second name counts as an entry, not as bytes
    used, entries = workspace_usage(tmp_path)
    assert entries == 4 and 3 * MiB + 100_000 <= used < 3 * MiB + 100_000 + 64 * 1024
    deep = tmp_path / "deep"
    deep.mkdir()
    os.chdir(deep)  # relative names: the tree's own path stays short to make
    try:
        for _ in range(MAX_DEPTH + 1):
            os.mkdir("d")
            os.chdir("d")
    finally:
        os.chdir(tmp_path)
    assert workspace_usage(tmp_path) == (UNCOUNTABLE, UNCOUNTABLE)
    shutil.rmtree(deep)
    assert workspace_usage(tmp_path) == (used, entries)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv (util-linux) to run the walk as an unprivileged user")
def test_a_folder_made_unreadable_is_over_every_limit():
    # the harness runs as the agent's user: a folder the agent set to mode 000 cannot be opened
    base = Path(tempfile.mkdtemp(prefix="cb-watchdog-"))  # pytest's own folders are closed to other users
    try:
        os.chmod(base, 0o755)
        tree = base / "ws"
        (tree / "hidden").mkdir(parents=True)
        (tree / "hidden" / "fill.bin").write_bytes(b"x" * MiB)
        for path in (tree, tree / "hidden", tree / "hidden" / "fill.bin"):
            os.chown(path, 65534, 65534)
        src = str(Path(__file__).resolve().parents[2] / "src")
        code = f"import sys; sys.path.insert(0, {src!r}); from clinbench.agents.process import workspace_usage; " \
               f"print(workspace_usage({str(tree)!r})[0] >= {MiB})"
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code]
        seen = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert seen.stdout.strip() == "True", seen.stderr  # readable: its megabyte is counted
        os.chmod(tree / "hidden", 0)
        code = code.replace(f"[0] >= {MiB}", "")
        hidden = subprocess.run(argv[:-1] + [code], capture_output=True, text=True, timeout=60)
        assert hidden.stdout.strip() == str((UNCOUNTABLE, UNCOUNTABLE)), hidden.stderr
    finally:
        os.chmod(base / "ws" / "hidden", 0o755)
        shutil.rmtree(base)
