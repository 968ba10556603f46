"""Memory, process, file-size, disk and log limits inside the sandbox: each stops a run, named."""

from __future__ import annotations

import json
import os

import pytest

from clinbench.agents.limits import GiB, MiB, Limits, parse_limits
from clinbench.errors import SandboxError

from hostile_campaign import LIMITS


def _stopped_by(hostile, attack: str, limit: str, shown: str) -> None:
    row, record = hostile.rows[attack], hostile.sandbox_record(attack)
    assert row["status"] == "agent-failed" and row["reward"] == 0.0, (row["status"], hostile.score(attack))
    assert record["limit_exceeded"] == limit
    assert f"limit exceeded: {limit} ({shown}" in hostile.score(attack)["run_error"]
    manifest = json.loads((hostile.folder(attack) / "manifest.json").read_text())
    assert manifest["limit_hit"] == limit and manifest["sandbox_limits"] == record["limits"]


@pytest.mark.slow
def test_fork_bomb_stays_within_the_process_limit(hostile):
    if not hostile.cgroup_available and os.geteuid() == 0:
        pytest.skip("no cgroup can be created here and RLIMIT_NPROC does not bind root: no process limit to test")
    seen = hostile.seen("fork-bomb")
    assert seen["forks"] < LIMITS.processes and seen["fork_error"] == "Resource temporarily unavailable"
    _stopped_by(hostile, "fork-bomb", "processes", "64")
    assert hostile.leftover_processes == []  # every forked child died with the run


@pytest.mark.slow
def test_memory_hog_is_stopped_by_the_memory_limit(hostile):
    # before: 4 GiB RSS succeeded under bubblewrap
    _stopped_by(hostile, "memory-hog", "memory", "128 MiB")
    assert "allocated" not in hostile.seen("memory-hog")


@pytest.mark.slow
def test_filling_the_workspace_is_stopped_by_the_disk_limit(hostile):
    # before: 2 GiB files succeeded
    _stopped_by(hostile, "disk-fill", "disk", "16 MiB")


@pytest.mark.slow
def test_files_of_holes_count_at_their_size(hostile):
    # before: ten 4 MiB sparse files (no blocks allocated) passed the 16 MiB watchdog; a sparse output.csv
    # under a larger --limit output became that many real bytes of evidence when copied
    _stopped_by(hostile, "sparse-fill", "disk", "16 MiB")


@pytest.mark.slow
def test_filling_tmp_is_stopped_by_its_size(hostile):
    _stopped_by(hostile, "tmp-fill", "tmp", "8 MiB")


@pytest.mark.slow
def test_a_flood_on_stdout_is_capped_and_the_audit_says_the_transcript_is_incomplete(hostile):
    # before: a 500 MB stdout made the harness hold 3.4 GB
    folder = hostile.folder("stdout-flood")
    assert (folder / "agent_stdout.txt").stat().st_size == LIMITS.log_bytes
    dropped = hostile.sandbox_record("stdout-flood")["bytes_dropped"]["stdout"]
    assert 0 <= dropped - (8 * MiB - LIMITS.log_bytes) < 100  # all but the kept 64 KiB (and its last report line)
    assert f"transcript incomplete: {dropped} bytes" in " ".join(hostile.reasons["stdout-flood"])
    assert hostile.rows["stdout-flood"]["publishable"] is False


def test_limits_are_read_from_key_value_pairs_and_bad_ones_say_what_to_write():
    limits = parse_limits(["memory=2g", "processes=64", "output=512m", "disk=1.5GiB"])
    assert (limits.memory_bytes, limits.processes, limits.output_bytes, limits.disk_bytes) == (2 * GiB, 64, 512 * MiB, int(1.5 * GiB))
    assert limits.file_size_bytes == Limits().file_size_bytes  # untouched keys keep their defaults
    with pytest.raises(SandboxError, match="KEY one of memory, processes"):
        parse_limits(["ram=2g"])
    with pytest.raises(SandboxError, match="write e.g. 512m"):
        parse_limits(["memory=lots"])


def test_the_default_output_cap_is_well_above_the_largest_reference():
    # the largest demo reference (urine-output-rate) is 0.64 MB for 100 patients; full MIMIC-IV has ~3000x the stays
    assert Limits().output_bytes >= 2 * GiB and Limits().file_size_bytes > Limits().output_bytes
