"""One hostile campaign for the whole suite: an honest baseline run, then one run per attack.

Each attack is a run of the `command` agent inside the real bubblewrap sandbox, through the
real campaign (workspace, egress proxy, limits, evidence, score, store), then the real
audit. Tests read the outcome a user relies on: the stored reward and publishable flag,
the audit's reason, the evidence folder's contents.
"""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from clinbench import untrusted
from clinbench.agents import sandbox as sb
from clinbench.agents.factory import AgentOptions
from clinbench.agents.limits import KiB, MiB, Limits, RunCgroup
from clinbench.campaign.audit import audit_campaign
from clinbench.campaign.campaign import CampaignSummary, run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records.store import Store

from campaign.campaign_fixtures import SOFA_COLUMNS, SOFA_ROWS, build_tiny_db
from hostile_agent import write_hostile_agent
from tests.conftest import made_once

TASK = "mimic-sofa-24h"
ATTACKS = [
    "honest", "symlink-earlier-run", "symlink-relative", "symlink-proc-environ", "symlink-source-db",
    "symlink-results-store", "fifo-output", "dir-output", "hardlink-outside", "hardlink-inside", "sparse-huge",
    "over-cap", "user-folder", "rewrite-transcript", "fd-inheritance", "proc-probe", "cleanup-trap", "fork-bomb",
    "memory-hog", "disk-fill", "sparse-fill", "tmp-fill", "stdout-flood", "dns", "raw-sockets", "abstract-socket", "proxy-smuggling",
    "deep-json", "huge-int-json", "terminal-escape", "wide-header", "resource-words",
    "egress-flood", "connection-flood", "inode-fill", "tmp-inode-fill",
]
LIMITS = Limits(memory_bytes=128 * MiB, processes=64, file_size_bytes=8 * MiB, disk_bytes=16 * MiB,
                tmp_bytes=8 * MiB, output_bytes=1 * MiB, log_bytes=64 * KiB, inodes=5000, connections=16)
CORRECT = SOFA_COLUMNS + "\n" + "".join(",".join(map(str, r)) + "\n" for r in SOFA_ROWS)

needs_bwrap = pytest.mark.skipif(not sb.bwrap_available(), reason="bubblewrap cannot create namespaces here (.ci/run installs it)")


class Listener:
    """A host socket that counts connections (and keeps what it received)."""

    def __init__(self, family: int, address, kind: int = socket.SOCK_STREAM, reply: bytes | None = None):
        self.sock = socket.socket(family, kind)
        self.sock.bind(address)
        self.address = self.sock.getsockname()
        self.connections = 0
        self.received = b""
        self.reply = reply
        if kind == socket.SOCK_STREAM:
            self.sock.listen(16)
        threading.Thread(target=self._serve, args=(kind,), daemon=True).start()

    def _serve(self, kind: int) -> None:
        while True:
            try:
                if kind == socket.SOCK_DGRAM:
                    data, _ = self.sock.recvfrom(65536)
                    self.connections += 1
                    self.received += data
                    continue
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            data = conn.recv(65536)
            self.received += data
            if self.reply is not None:
                conn.sendall(self.reply)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.sock.close()

    def heard(self) -> "Heard":
        return Heard(self.address, self.connections, self.received)


@dataclass(frozen=True)
class Heard:
    """What a listener had received when the campaign ended (what the tests read; it pickles)."""
    address: object
    connections: int
    received: bytes


@dataclass
class Hostile:
    out: Path
    source_db: Path
    tools: Path
    victim: Path
    canary: str
    earlier_run: str
    rows: dict[str, dict] = field(default_factory=dict)  # attack -> stored run
    reasons: dict[str, list[str]] = field(default_factory=dict)  # attack -> audit reasons
    listeners: dict[str, Heard] = field(default_factory=dict)
    leftover_processes: list[str] = field(default_factory=list)
    cgroup_available: bool = False
    summary: CampaignSummary | None = None  # what `clinbench run` prints its summary from

    def folder(self, attack: str) -> Path:
        return self.out / self.rows[attack]["evidence_dir"]

    def seen(self, attack: str) -> dict:
        """The last JSON report the agent printed (its stdout, as the harness kept it)."""
        text = (self.folder(attack) / "agent_stdout.txt").read_text(errors="replace")
        reports = []
        for line in text.splitlines():
            try:
                event = untrusted.loads(line)
            except json.JSONDecodeError:  # a line of the agent's own (too deep, not JSON)
                continue
            if isinstance(event, dict) and "attack" in event:
                reports.append(event)
        assert reports, f"{attack}: the agent printed no report; stderr: {(self.folder(attack) / 'agent_stderr.txt').read_text()[-500:]}"
        return reports[-1]

    def score(self, attack: str) -> dict:
        return json.loads((self.folder(attack) / "score.json").read_text())

    def sandbox_record(self, attack: str) -> dict:
        return json.loads((self.folder(attack) / "sandbox.json").read_text())

    def evidence_bytes(self, attack: str) -> bytes:
        return b"".join(p.read_bytes() for p in sorted(self.folder(attack).rglob("*")) if p.is_file())


@pytest.fixture(scope="session")
def hostile(tmp_path_factory) -> Hostile:
    """Made once per test session, whichever xdist worker asks first (each of the security files may
    run on a different worker); the others read what it recorded."""
    if not sb.bwrap_available():
        pytest.skip("bubblewrap cannot create namespaces here (.ci/run installs it)")
    return made_once(tmp_path_factory, "hostile-campaign", _run_hostile_campaign)


def _run_hostile_campaign(tmp: Path) -> Hostile:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CLINBENCH_CACHE", str(tmp / "cache"))
        canary = f"canary-{secrets.token_hex(8)}"
        mp.setenv("CLINBENCH_SECURITY_CANARY", canary)  # a harness secret the agent must never see
        source_db = build_tiny_db(tmp / "source.duckdb")
        out = tmp / "camp"
        run_campaign([RunSpec(TASK, "no-skill", "native", "reference", "-", 0)],
                     CampaignConfig(db=str(source_db), out=str(out)))
        earlier = Store.open(out).runs()[0]
        tools = tmp / "user-tools"  # a folder of the user's holding the agent program and much else
        (tools / "older-campaign" / "runs" / "old").mkdir(parents=True)
        shutil.copyfile(out / earlier["evidence_dir"] / "output.csv", tools / "older-campaign" / "runs" / "old" / "output.csv")
        (tools / "secret.txt").write_text("user secret\n")
        victim = tmp / "victim"
        victim.mkdir()
        (victim / "keep.txt").write_text("must survive cleanup\n")
        listeners = {
            "user_socket": Listener(socket.AF_UNIX, str(tools / "agent.sock")),
            "tcp": Listener(socket.AF_INET, ("127.0.0.1", 0)),
            "udp": Listener(socket.AF_INET, ("127.0.0.1", 0), socket.SOCK_DGRAM),
            "abstract": Listener(socket.AF_UNIX, "\0" + f"clinbench-sec-{secrets.token_hex(4)}"),
            "evil": Listener(socket.AF_INET, ("127.0.0.1", 0)),
            "endpoint": Listener(socket.AF_INET, ("127.0.0.1", 0),
                                 reply=b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"),
        }
        cfg = {
            "correct_output": CORRECT,
            "earlier_output": str(out / earlier["evidence_dir"] / "output.csv"),
            "earlier_output_relative": f"../../{earlier['evidence_dir']}/output.csv",  # from <out>/.work/<run>/
            "source_db": str(source_db),
            "results_store": str(out / "results.duckdb"),
            "older_campaign_output": str(tools / "older-campaign" / "runs" / "old" / "output.csv"),
            "victim": str(victim),
            "over_cap_bytes": 4 * MiB,
            "fork_cap": 300,
            "memory_hog_bytes": 400 * MiB,
            "disk_fill_files": 10,
            "flood_bytes": 8 * MiB,
            "udp_port": listeners["udp"].address[1],
            "tcp_port": listeners["tcp"].address[1],
            "abstract_name": listeners["abstract"].address[1:].decode() if isinstance(listeners["abstract"].address, bytes)
            else listeners["abstract"].address[1:],
            "evil_port": listeners["evil"].address[1],
            "egress_flood_requests": 1500,  # ~200 bytes of log each: 4.5 times the 64 KiB log limit
            "connection_flood": 24,  # the bridge inside holds two threads each: within the 64-process limit
            "inode_fill_files": 20000,  # 4 times the inode limit
        }
        program = write_hostile_agent(tools, cfg)
        options = AgentOptions(agent_command=f"{program} {{model}} {{workspace}}", sandbox="bwrap", sandbox_limits=LIMITS,
                               base_url=f"http://127.0.0.1:{listeners['endpoint'].address[1]}/v1")
        probe = RunCgroup.create(LIMITS)
        if probe is not None:
            probe.close()
        summary = run_campaign([RunSpec(TASK, "no-skill", "native", "command", attack, 0) for attack in ATTACKS],
                     CampaignConfig(db=str(source_db), out=str(out), options=options, timeout_seconds=60), jobs=2)
        time.sleep(0.2)
        leftovers = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                if str(program) in cmdline:
                    leftovers.append(cmdline)
        verdicts = {v.run_id: v.reasons for v in audit_campaign(out)}
    for listener in listeners.values():
        listener.close()
    result = Hostile(out=out, source_db=source_db, tools=tools, victim=victim, canary=canary,
                     earlier_run=earlier["run_id"], listeners={k: v.heard() for k, v in listeners.items()},
                     leftover_processes=leftovers, cgroup_available=probe is not None, summary=summary)
    for row in Store.open(out).runs():
        key = row["model"] if row["agent"] == "command" else row["agent"]
        result.rows[key] = row
        result.reasons[key] = verdicts[row["run_id"]]
    return result


def assert_refused(h: Hostile, attack: str, why: str) -> None:
    """What a user relies on for an output the harness must not take: reward 0, a recorded
    failure naming the reason, no output.csv in evidence, flagged and not publishable."""
    row, score = h.rows[attack], h.score(attack)
    assert row["reward"] == 0.0 and row["status"] == "agent-failed", (attack, row["status"], row["reward"])
    assert why in score["output_refused"] and why in score["run_error"]
    assert not (h.folder(attack) / "output.csv").exists()
    assert row["publishable"] is False and any(why in r for r in h.reasons[attack]), h.reasons[attack]
    manifest = json.loads((h.folder(attack) / "manifest.json").read_text())
    assert why in manifest["output_refused"] and "output.csv" not in manifest["files"]
