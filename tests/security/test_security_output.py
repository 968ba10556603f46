"""output.csv is taken only if it is a regular, unlinked file of the workspace under the size cap."""

from __future__ import annotations

import os
from pathlib import Path

from clinbench.campaign.evidence import take_output

from hostile_campaign import CORRECT, LIMITS, assert_refused
import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def test_symlink_to_an_earlier_runs_output_scores_nothing(hostile):
    # before: the harness followed the link on the host and the copy scored 1.0, publishable
    earlier = (hostile.out / hostile.rows["reference"]["evidence_dir"] / "output.csv").read_bytes()
    for attack in ("symlink-earlier-run", "symlink-relative"):
        assert_refused(hostile, attack, "symbolic link")
        assert earlier not in hostile.evidence_bytes(attack)


def test_symlink_to_proc_environ_leaks_no_harness_secret(hostile):
    # before: /proc/self/environ of the harness (its secrets) landed in the evidence folder
    assert_refused(hostile, "symlink-proc-environ", "symbolic link")
    # the harness's workers are forks of this process: their /proc/self/environ is this one's
    harness_env = [e for e in Path("/proc/self/environ").read_bytes().split(b"\0") if len(e) >= 24]
    evidence = hostile.evidence_bytes("symlink-proc-environ")
    assert harness_env and not [e for e in harness_env if e in evidence]


def test_symlink_to_the_source_database_or_results_store_copies_neither(hostile):
    for attack, secret in (("symlink-source-db", hostile.source_db), ("symlink-results-store", hostile.out / "results.duckdb")):
        assert_refused(hostile, attack, "symbolic link")
        head = secret.read_bytes()[:4096]
        assert head not in hostile.evidence_bytes(attack)


def test_fifo_as_output_is_refused_without_hanging_the_harness(hostile):
    # the campaign finished at all: opening the FIFO did not block the harness
    assert_refused(hostile, "fifo-output", "FIFO")


def test_directory_as_output_is_refused(hostile):
    assert_refused(hostile, "dir-output", "folder")


def test_hard_link_to_a_file_outside_the_workspace_cannot_be_made_in_the_sandbox(hostile):
    seen = hostile.seen("hardlink-outside")
    assert seen["link_passwd"] == "OSError" and seen["link_python"] == "OSError"  # EXDEV across the sandbox's mounts
    assert hostile.rows["hardlink-outside"]["reward"] == 0.0
    assert not (hostile.folder("hardlink-outside") / "output.csv").exists()


def test_hard_linked_output_is_refused(hostile, tmp_path):
    # inside the sandbox: a second name for a workspace file
    assert_refused(hostile, "hardlink-inside", "hard-linked")
    # a run without the sandbox could link a host file: the harness checks the link count itself
    outside = tmp_path / "reference.csv"
    outside.write_text(CORRECT)
    ws = tmp_path / "ws"
    ws.mkdir()
    os.link(outside, ws / "output.csv")
    reason = take_output(ws / "output.csv", tmp_path / "copy.csv", LIMITS.output_bytes)
    assert "hard-linked (2 names)" in reason and not (tmp_path / "copy.csv").exists()


def test_sparse_huge_output_is_stopped_by_the_file_size_limit(hostile):
    # before: a 3 GiB sparse output.csv was copied in full
    row, record = hostile.rows["sparse-huge"], hostile.sandbox_record("sparse-huge")
    assert row["status"] == "agent-failed" and row["reward"] == 0.0
    assert record["limit_exceeded"] == "file-size"
    assert "limit exceeded: file-size (8 MiB" in hostile.score("sparse-huge")["run_error"]
    copied = hostile.folder("sparse-huge") / "output.csv"
    assert not copied.exists() or copied.stat().st_size <= LIMITS.output_bytes


def test_output_over_the_size_cap_is_refused_not_copied(hostile):
    assert_refused(hostile, "over-cap", "over the 1048576-byte output cap")


def test_a_header_of_120000_columns_scores_0_without_being_read(hostile):
    # before: DuckDB's reader and the scoring query, growing faster than the columns, held the campaign's scorer
    # (100,000 columns: 4.5 s and 0.45 GB; 330,000 under a larger cap: over 300 s and 1.8 GB) for the right rows
    row, score = hostile.rows["wide-header"], hostile.score("wide-header")
    assert row["reward"] == 0.0 and row["status"] == "ok"  # the agent ran; its output is what fails
    assert score["reason"].startswith("output's header names more than 1,000 columns")
    assert (hostile.folder("wide-header") / "output.csv").stat().st_size < LIMITS.output_bytes  # taken, under the cap


def test_an_output_quoting_duckdbs_resource_errors_is_scored_not_made_a_harness_error(hostile):
    # as 0605d87 first had it, a full disk for DuckDB's spill files was told by the error's text, which
    # quotes the agent's line: "No space left on device" in an unreadable output made its run a harness error,
    # left out of every statistic, in place of its 0
    row, score = hostile.rows["resource-words"], hostile.score("resource-words")
    assert (row["status"], row["reward"]) == ("ok", 0.0)
    assert score["reason"].startswith("output is not a readable CSV")


def test_take_output_copies_a_plain_file_and_ignores_a_missing_one(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert take_output(ws / "output.csv", tmp_path / "copy.csv", 100) is None and not (tmp_path / "copy.csv").exists()
    (ws / "output.csv").write_text(CORRECT)
    assert take_output(ws / "output.csv", tmp_path / "copy.csv", 1000) is None
    assert (tmp_path / "copy.csv").read_text() == CORRECT


def test_take_output_refuses_a_workspace_that_is_itself_a_symlink(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "output.csv").write_text(CORRECT)
    (tmp_path / "ws").symlink_to(real)
    reason = take_output(tmp_path / "ws" / "output.csv", tmp_path / "copy.csv", 1000)
    assert "workspace folder cannot be opened" in reason and not (tmp_path / "copy.csv").exists()
