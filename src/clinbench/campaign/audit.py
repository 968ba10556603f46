"""Audit a campaign: flag runs whose result should not be published, with the reason.

A run is flagged when
* what the agent wrote (commands, SQL, messages; not tool results or skill text it was
  shown) names the reference database, the evaluator, the campaign store, another run's
  folder, or a hidden reference table (``target_*``);
* it is an external agent run without isolation and its output.csv is byte-identical to another run's
  of the same task (any other agent sees its own workspace alone, and a correct answer written by
  DuckDB's COPY is the same bytes every time; builtin baselines excepted, which are deterministic);
* its commands write to an absolute path outside the workspace, or its egress log shows a
  refused request;
* its evidence no longer matches its manifest (a file changed, removed or added);
* its output.csv was refused (a symlink, FIFO, folder, hard link or over the size cap);
* the shared workspace database it read no longer had the sha256 it was sealed with after the run;
* the harness kept only part of its stdout or stderr (past the log cap), so the transcript
  this audit reads is incomplete;
* it is an external agent that ran without isolation;
* it is a no-skill run that opened a benchmark skill (``skill_use``; with-skill runs that opened
  none of theirs are counted, not flagged).

Flagged runs get ``publishable = false`` and ``flag_reason``. A run flagged for its agent's own conduct
(what it wrote or read, its writes, egress, refused output, flooded logs, bytes that broke the audit) is
also ``flag_charged``: statistics count it as reward 0, so an agent cannot take a run it
would fail out of the numbers by misbehaving in it. Statistics leave the other flagged runs out (evidence
changed after the run, a workspace database changed, a run not isolated, an unisolated run's output
byte-identical to another's: two honest runs write the same right answer).
"""

from __future__ import annotations

import bisect
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from clinbench import untrusted
from clinbench.agents.factory import BUILTIN_AGENTS
from clinbench.campaign import evidence, skill_use
from clinbench.campaign.execute import database_changed
from clinbench.records.store import Store

EXTERNAL_AGENTS = ("codex", "claude", "gemini", "command")
EVALUATOR_MARKERS = ("derive/score", "clinbench.derive.score", "concepts/targets", "results.duckdb", "score.json",
                     "manifest.json", ".partial/", "/runs/")
ALLOWED_WRITE_PREFIXES = ("/workspace", "/tmp", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd")
_HIDDEN_QUALIFIED = re.compile(r"\b(?:mimiciv_derived|eicu_derived)\.(?:target|variant)_\w+")
_WRITE_PATTERNS = [
    re.compile(r">>?\s*['\"]?(/[^\s'\";|&)]+)"),
    re.compile(r"\btee\s+(?:-a\s+)?['\"]?(/[^\s'\";|&)]+)"),
    re.compile(r"\b(?:cp|mv|install)\s+(?:-\w+\s+)*\S+\s+['\"]?(/[^\s'\";|&)]+)"),
    re.compile(r"\b(?:touch|mkdir|rm|truncate)\s+(?:-\w+\s+)*['\"]?(/[^\s'\";|&)]+)"),
    re.compile(r"open\(\s*['\"](/[^'\"]+)['\"]\s*,\s*['\"][wax]"),
]
# SQL's COPY ... TO '/path': found target first, then a COPY before it (after the previous target), in one pass.
# As one pattern (COPY, anything, TO) each COPY scanned the rest of the text: 140 kB of "COPY x " took 27 s
_COPY_WORD = re.compile(r"\bCOPY\b", re.IGNORECASE)
_COPY_TARGET = re.compile(r"\bTO\s+'(/[^']+)'", re.IGNORECASE)


@dataclass
class Verdict:
    run_id: str
    reasons: list[str]
    condition: str = ""
    skill_use: skill_use.SkillUse | None = None
    charged: bool = False  # a reason is the agent's own conduct: the run counts as reward 0

    @property
    def publishable(self) -> bool:
        return not self.reasons


def agent_authored_text(transcript: Path) -> str:
    """What the agent itself wrote, from any of the supported transcript formats."""
    if not transcript.is_file():
        return ""
    parts: list[str] = []
    for line in transcript.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = untrusted.loads(line)
        except json.JSONDecodeError:
            parts.append(line)
            continue
        if not isinstance(event, dict):
            continue
        try:
            kind = event.get("type")
            if kind == "assistant":  # llm agent and Claude Code
                if "message" in event:
                    for block in (event["message"] or {}).get("content") or []:
                        if block.get("type") == "text":
                            parts.append(block.get("text", ""))
                        elif block.get("type") == "tool_use":
                            parts.append(json.dumps(block.get("input"), ensure_ascii=False))
                else:
                    parts.append(event.get("text") or "")
                    parts.extend(json.dumps(c.get("arguments"), ensure_ascii=False) for c in event.get("tool_calls") or [])
            elif kind in ("item.started", "item.completed"):  # Codex
                item = event.get("item") or {}
                if item.get("type") == "command_execution":
                    parts.append(item.get("command", ""))
                elif item.get("type") == "agent_message":
                    parts.append(item.get("text", ""))
            elif kind == "tool_use":  # Gemini CLI
                parts.append(json.dumps(event.get("parameters"), ensure_ascii=False))
            elif kind == "message" and event.get("role") == "assistant":  # Gemini CLI
                parts.append(str(event.get("content") or ""))
            elif kind == "stdout":  # command agent
                parts.append(event.get("line", ""))
        except (AttributeError, TypeError):  # an event of an unexpected shape is read as text
            parts.append(line)
    # JSON-escaped text (\" and \\n) is read as the agent meant it
    text = "\n".join(p if isinstance(p, str) else json.dumps(p, ensure_ascii=False, default=str) for p in parts)
    return text.replace('\\"', '"').replace("\\n", "\n")


def hidden_names() -> list[str]:
    """The reference tables' names. A task's dropped public concepts (``sofa``, ``meld``, …) are
    not listed: they are ordinary words in any transcript about that score, and public knowledge."""
    from clinbench.derive.catalogue import load_catalogue

    return sorted({f"target_{spec.reference.replace('-', '_')}" for spec in load_catalogue().values()})


def outside_writes(text: str) -> list[str]:
    found = []
    paths = [m.group(1) for pattern in _WRITE_PATTERNS for m in pattern.finditer(text)] + _copy_targets(text)
    for path in paths:
        if not path.startswith(ALLOWED_WRITE_PREFIXES) and path not in found:
            found.append(path)
    return found


def _copy_targets(text: str) -> list[str]:
    """The paths of ``COPY ... TO '/path'``: each target with a COPY between the previous target and it."""
    copies = [m.end() for m in _COPY_WORD.finditer(text)]
    targets, since = [], 0
    for match in _COPY_TARGET.finditer(text):
        first = bisect.bisect_left(copies, since)
        if first < len(copies) and copies[first] < match.start():
            targets.append(match.group(1))
            since = match.end()
    return targets


def _sandbox_refused_a_write(folder: Path) -> bool:
    """Inside the sandbox everything but the workspace and /tmp is read-only: EROFS means an attempt."""
    for name in ("transcript.jsonl", "agent_stderr.txt", "agent_stdout.txt"):
        path = folder / name
        if path.is_file() and "read-only file system" in path.read_text(encoding="utf-8", errors="replace").lower():
            return True
    return False


def _dropped_log_bytes(folder: Path) -> int:
    record = folder / "sandbox.json"
    if not record.is_file():
        return 0
    try:
        return sum(int(v) for v in (json.loads(record.read_text(encoding="utf-8")).get("bytes_dropped") or {}).values())
    except (ValueError, TypeError, AttributeError):
        return 0


def _audit_run(run: dict, folder: Path, out: Path, hidden: dict, known_skills, mine: list[str], conduct: list[str],
               uses: dict[str, skill_use.SkillUse]) -> tuple[str, str] | None:
    """Add the reasons to flag one run to ``mine``, those that are its agent's own conduct to ``conduct`` too;
    return (task, sha256 of its output.csv) when its output counts towards the byte-identical check."""

    def charge(reason: str) -> None:
        mine.append(reason)
        conduct.append(reason)

    if not (folder / evidence.MANIFEST).is_file():
        mine.append("evidence folder or manifest missing")
        return None
    manifest = json.loads((folder / evidence.MANIFEST).read_text(encoding="utf-8"))
    if bad := evidence.verify_manifest(folder):
        mine.append(f"evidence changed since the run: {', '.join(bad)}")
    # an unisolated run saw its workspace at its host path: read that as /workspace
    own_workspace = re.compile(re.escape(str(out)) + r"/\.work/[^/\s'\"]+")
    text = own_workspace.sub("/workspace", agent_authored_text(folder / "transcript.jsonl"))
    lowered = text.lower()
    markers = [m for m in (manifest.get("db"), Path(manifest.get("db") or "x").name, str(out)) if m]
    mentioned = [m for m in markers if m.lower() in lowered and m != "database.duckdb"]
    mentioned += [m for m in EVALUATOR_MARKERS if m in lowered]
    mentioned += [n for n, pattern in hidden.items() if pattern.search(lowered)]
    mentioned += [m.group(0).split(".", 1)[1] for m in _HIDDEN_QUALIFIED.finditer(lowered)]
    if mentioned:
        charge(f"transcript mentions {', '.join(sorted(set(mentioned)))}")
    if run.get("benchmark", "derive") == "derive":
        uses[run["run_id"]] = skill_use.skill_use(folder, text, known_skills)
        if why := skill_use.flag_reason(run["condition"], uses[run["run_id"]]):
            charge(why)
    if writes := outside_writes(text):
        charge(f"writes outside the workspace: {', '.join(writes[:5])}")
    elif _sandbox_refused_a_write(folder):
        charge("writes outside the workspace: the sandbox refused a write (read-only file system)")
    egress_log = folder / "egress.jsonl"
    if egress_log.is_file():
        refused = [json.loads(line)["target"] for line in egress_log.read_text().splitlines()
                   if line.strip() and not json.loads(line).get("allowed", True)]
        if refused:
            charge(f"refused egress to {', '.join(sorted(set(refused))[:5])}")
    if manifest.get("output_refused"):
        charge(manifest["output_refused"])
    if changed := database_changed(manifest.get("database_sha256")):
        mine.append(changed)
    if dropped := _dropped_log_bytes(folder):
        charge(f"transcript incomplete: {dropped} bytes of agent output past the log cap were not kept")
    if run["agent"] in EXTERNAL_AGENTS and not run["isolated"]:
        mine.append("not isolated (--unsafe-no-isolation)")
    output = folder / "output.csv"
    if run["agent"] not in BUILTIN_AGENTS and output.is_file() and output.stat().st_size > 0:
        return run["task"], evidence.sha256_file(output)
    return None


def audit_campaign(out: str | Path) -> list[Verdict]:
    """Flag runs of the campaign in ``out`` and store each verdict; return every verdict."""
    out = Path(out).resolve()
    store = Store.open(out)
    runs = store.runs()
    reasons: dict[str, list[str]] = {r["run_id"]: [] for r in runs}
    conduct: dict[str, list[str]] = {r["run_id"]: [] for r in runs}
    by_output: dict[tuple[str, str], list[str]] = defaultdict(list)
    hidden = {n: re.compile(rf"\b{re.escape(n)}\b") for n in hidden_names()}
    known_skills = skill_use.known_skills()
    uses: dict[str, skill_use.SkillUse] = {}
    for run in runs:
        rid = run["run_id"]
        folder = out / (run["evidence_dir"] or f"{evidence.RUNS_DIR}/{rid}")
        try:  # each run on its own: one the audit cannot read is flagged, the others are still audited
            output_key = _audit_run(run, folder, out, hidden, known_skills, reasons[rid], conduct[rid], uses)
        except Exception as exc:  # anything in a run's evidence (agent bytes included) that breaks a check
            failed = f"audit failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
            reasons[rid].append(failed)
            conduct[rid].append(failed)  # its own bytes, most likely: never a way out of the statistics
            continue
        if output_key is not None:
            by_output[output_key].append(rid)
    # byte-identical outputs are copying only by a run that could read another's files: an external program run
    # without isolation. The others see their own workspace alone, and a correct answer written by DuckDB's COPY is
    # the same bytes every time: the earlier run it matches is never flagged for it
    could_copy = {r["run_id"] for r in runs if r["agent"] in EXTERNAL_AGENTS and not r["isolated"]}
    for ids in by_output.values():
        if len(ids) > 1:
            for rid in (i for i in ids if i in could_copy):
                others = [o for o in ids if o != rid]
                # left out, not charged: which of two unisolated runs copied, if either did, cannot be told
                reasons[rid].append(f"output.csv byte-identical to {', '.join(others[:3])}" + (" …" if len(others) > 3 else ""))
    condition = {r["run_id"]: r["condition"] for r in runs}
    verdicts = [Verdict(rid, rs, condition[rid], uses.get(rid), bool(conduct[rid])) for rid, rs in reasons.items()]
    for v in verdicts:
        store.set_verdict(v.run_id, v.publishable, "; ".join(v.reasons) or None, charged=v.charged)
    return verdicts
