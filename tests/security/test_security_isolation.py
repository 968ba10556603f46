"""What the agent can see and reach from inside the bubblewrap sandbox, and what it can leave behind."""

from __future__ import annotations

import json
from pathlib import Path

from hostile_campaign import LIMITS
import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def test_the_honest_control_run_scores_and_is_publishable(hostile):
    # the suite's attacks fail for their own reasons, not because every run fails
    row = hostile.rows["honest"]
    assert row["status"] == "ok" and row["reward"] == 1.0 and row["publishable"] is True, hostile.reasons["honest"]
    assert row["isolated"] is True


def test_the_agents_own_folder_is_not_shown_only_its_program(hostile):
    # before: the whole folder holding the agent program was visible; an agent copied an older
    # campaign's reference output from it (1.0, publishable) and connected to a socket there
    seen = hostile.seen("user-folder")
    assert seen["listing"] == ["hostile.py"]
    assert seen["secret"] == "FileNotFoundError" and seen["older_output"] == "FileNotFoundError"
    assert seen["user_socket"] == "FileNotFoundError" and hostile.listeners["user_socket"].connections == 0
    assert hostile.rows["user-folder"]["reward"] == 0.0
    mounts = [Path(m) for m in hostile.sandbox_record("user-folder")["mounts"]]
    assert hostile.tools / "hostile.py" in mounts
    assert not any(hostile.tools.is_relative_to(m) for m in mounts)  # neither its folder nor a parent of it


def test_proc_shows_only_the_sandbox_and_no_harness_environment(hostile):
    seen = hostile.seen("proc-probe")
    assert seen["pids"] < 10  # its own pid namespace: bwrap's init, the agent, the egress bridge
    harness = Path("/proc/self/cmdline").read_bytes().replace(b"\0", b" ").decode()
    assert harness not in seen["cmdlines"] and not any("-m pytest" in c or "multiprocessing" in c for c in seen["cmdlines"])
    assert hostile.canary not in seen["environ"] and "CLINBENCH_SECURITY_CANARY" not in seen["environ"]
    assert "camp" not in " ".join(seen["host_root"]) and "workspace" in seen["host_root"]  # /proc/1/root is the sandbox's root
    assert seen["kcore"] in ("FileNotFoundError", "PermissionError")


def test_no_descriptor_of_an_evidence_file_reaches_the_sandbox(hostile):
    fds = hostile.seen("fd-inheritance")["fds"]
    targets = set(fds.values())
    assert not any(t.startswith("/") and t != "/dev/null" for t in targets), targets
    assert any(t.startswith("pipe:") for t in targets)  # stdout and stderr are pipes the harness reads


def test_a_grandchild_cannot_rewrite_the_transcript(hostile):
    # before: writing to /proc/1/fd/1 replaced the transcript file and the audit came out clean
    transcript = (hostile.folder("rewrite-transcript") / "transcript.jsonl").read_text()
    assert f"cat {hostile.out / 'results.duckdb'}" in transcript
    assert "results.duckdb" in " ".join(hostile.reasons["rewrite-transcript"])
    assert hostile.rows["rewrite-transcript"]["publishable"] is False


def test_symlinks_planted_in_the_workspace_do_not_trap_cleanup(hostile):
    assert (hostile.victim / "keep.txt").read_text() == "must survive cleanup\n"
    assert sorted(p.name for p in hostile.victim.iterdir()) == ["keep.txt"]
    work = hostile.out / ".work"
    assert not work.exists() or not any(work.iterdir())  # every workspace (links and all) was removed
    assert hostile.rows["cleanup-trap"]["reward"] == 0.0 and not (hostile.folder("cleanup-trap") / "output.csv").exists()


def test_dns_resolves_nothing_and_udp_reaches_no_host_service(hostile):
    seen = hostile.seen("dns")
    assert seen["resolve"] == "gaierror" and seen["resolv_conf"] is False
    assert hostile.listeners["udp"].connections == 0  # the datagram went to the sandbox's own loopback


def test_raw_and_packet_sockets_are_refused(hostile):
    seen = hostile.seen("raw-sockets")
    assert seen["raw_inet"] == "PermissionError" and seen["packet"] == "PermissionError"


def test_abstract_unix_sockets_and_host_loopback_are_out_of_reach(hostile):
    seen = hostile.seen("abstract-socket")
    assert seen["abstract"] == "ConnectionRefusedError" and hostile.listeners["abstract"].connections == 0
    assert seen["host_tcp"] == "ConnectionRefusedError" and hostile.listeners["tcp"].connections == 0


def test_every_sandboxed_run_records_how_it_was_confined(hostile):
    record = hostile.sandbox_record("honest")
    assert record["kind"] == "bwrap" and record["isolated"] is True
    assert record["limits"] == {"memory": 128 << 20, "processes": 64, "file-size": 8 << 20, "disk": 16 << 20,
                                "tmp": 8 << 20, "output": 1 << 20, "log": 64 << 10,
                                "inodes": LIMITS.inodes, "connections": LIMITS.connections}
    assert set(record["enforced_by"]) == set(record["limits"])
    manifest = json.loads((hostile.folder("honest") / "manifest.json").read_text())
    assert manifest["sandbox_limits"] == record["limits"] and "sandbox.json" in manifest["files"]
