"""Where a report's numbers come from: the data, the software, the agents, the command.

* Data: each database the runs' manifests name, with whether it still exists, its size, a
  fingerprint and whether it is synthetic. The fingerprint is one digest of the reference
  fingerprints the campaign is bound to (the store's ``data_binding``) when it has them; otherwise the database's catalogue
  fingerprint (``clinbench.derive.workspace.read_catalog``: file size, mtime, every
  relation's name, row estimate and column types), read now. Synthetic: the database
  carries clinbench's synthesis record (``clinbench_meta.synthesis``, written by
  ``data synth``); a database without one is reported as "no synthesis record".
* Software: the campaign's ``versions.json`` (clinbench, Python, DuckDB and the SDKs it ran
  with, recorded by ``run``) and the versions making the report.
* Agents and models: the runs' ``agent/model`` labels and any agent version recorded.
* Reference profile: the profile (``name@version``) each run was scored against, with what it
  reproduces (``clinbench.concepts.profiles``).
* Command: ``campaign.json`` beside the store (``commands``), written by ``record_command``.
"""

from __future__ import annotations

import json
import platform
import shlex
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinbench.atomic import write_json_atomic
from clinbench.records import STORE_FILE

CAMPAIGN_FILE = "campaign.json"
SYNTH_TABLE = "clinbench_meta.synthesis"


@dataclass
class DataSource:
    path: str
    exists: bool
    bytes: int | None
    fingerprint: str  # "" when it cannot be read
    fingerprint_kind: str  # "campaign binding" | "catalogue (read now)" | ""
    synthetic: str  # "yes (…)" | "no synthesis record" | "unknown (database absent)"


@dataclass
class Provenance:
    source: str
    data: list[DataSource] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    agents: dict[str, int] = field(default_factory=dict)  # label -> runs
    agent_versions: dict[str, str] = field(default_factory=dict)  # agent -> its program version(s)
    served_models: dict[str, str] = field(default_factory=dict)  # "agent model" -> model(s) that answered
    profiles: dict[str, str] = field(default_factory=dict)  # reference profile name@version -> what it reproduces
    command: str = ""


def software_versions() -> dict[str, str]:
    """clinbench, DuckDB and Python versions of this process (a run's manifest records them)."""
    from clinbench.duck import duckdb

    from clinbench import __version__

    return {"clinbench": __version__, "duckdb": duckdb.__version__, "python": platform.python_version()}


def record_command(campaign_dir: str | Path, argv: list[str] | None = None) -> Path:
    """Record in ``campaign.json`` the command line that ran the campaign: ``commands`` lists every
    distinct one in order (a campaign may be extended or resumed by another)."""
    directory = Path(campaign_dir)
    path = directory / CAMPAIGN_FILE
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
    argv = list(sys.argv if argv is None else argv)
    if argv and Path(argv[0]).name in ("__main__.py", "clinbench"):
        argv[0] = "clinbench"
    command = shlex.join(argv)
    commands = [c for c in data.get("commands", []) if isinstance(c, str) and c != command]
    data["commands"] = [*commands, command]
    directory.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, data, indent=1)
    return path


def _synthetic(db: Path) -> str:
    from clinbench.duck import duckdb

    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:
        return "unknown (database cannot be opened now)"
    try:
        schema, table = SYNTH_TABLE.split(".")
        found = con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?",
                            [schema, table]).fetchone()[0]
        if not found:
            return "no synthesis record (loaded or real data)"
        row = con.execute(f"SELECT * FROM {SYNTH_TABLE} LIMIT 1").fetchone()
        names = [d[0] for d in con.description]
        info = dict(zip(names, row))
        return "yes (" + ", ".join(f"{k} {v}" for k, v in info.items() if v is not None) + ")"
    finally:
        con.close()


def _data_source(db: str, bound: dict[str, str]) -> DataSource:
    path = Path(db)
    if not path.is_file():
        return DataSource(db, False, None, bound.get(db, ""), "campaign binding" if db in bound else "",
                          "unknown (database absent)")
    fingerprint, kind = bound.get(db, ""), "campaign binding" if db in bound else ""
    if not fingerprint:
        try:
            from clinbench.derive.workspace import read_catalog

            fingerprint, kind = read_catalog(path)[0], "catalogue (read now)"
        except Exception:  # a database that cannot be read has no fingerprint; the report says so
            fingerprint, kind = "", ""
    return DataSource(db, True, path.stat().st_size, fingerprint, kind, _synthetic(path))


def _store_binding(directory: Path) -> dict[str, str]:
    """database path -> one digest of every reference fingerprint the campaign is bound to
    (``data_binding``: reference table, fingerprint, database), with how many there are."""
    import hashlib

    from clinbench.errors import ClinbenchError
    from clinbench.records.store import Store

    if not (directory / STORE_FILE).is_file():
        return {}
    try:
        bound = Store(directory / STORE_FILE).binding()
    except (ClinbenchError, OSError, AttributeError):
        return {}
    by_db: dict[str, list[str]] = {}
    for table, (fingerprint, db) in sorted(bound.items()):
        by_db.setdefault(str(db), []).append(f"{table}={fingerprint}")
    return {db: f"{hashlib.sha256(chr(10).join(parts).encode()).hexdigest()} over {len(parts)} references"
            for db, parts in by_db.items()}


def _campaign_versions(directory: Path) -> dict[str, str]:
    """The software the campaign ran with (its ``versions.json``, latest entry)."""
    try:
        history = json.loads((directory / "versions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(history, list) or not history:
        return {}
    last = history[-1]
    flat = {"clinbench": last.get("clinbench"), "python": last.get("python"),
            **{k: v for k, v in (last.get("packages") or {}).items() if v}}
    return {k: str(v) for k, v in flat.items() if v}


def _profile_source(recorded: str) -> str:
    from clinbench.concepts.profiles import PROFILES

    profile = PROFILES.get(recorded.split("@", 1)[0])
    if profile is None or recorded != f"{profile.name}@{profile.version}":
        return "not a profile of this clinbench"
    return profile.source


def gather(source: str | Path, runs: Any) -> Provenance:
    """Provenance of ``source`` (campaign folder or per-run CSV) and its analysed ``runs``."""
    src = Path(source)
    prov = Provenance(source=str(src.resolve()))
    prov.versions = software_versions()
    prov.agents = dict(sorted(Counter(runs.labels.tolist()).items()))
    if not src.is_dir():
        return prov
    dbs: Counter[str] = Counter()
    versions: dict[str, set[str]] = {}
    served: dict[str, set[str]] = {}
    profiles: set[str] = set()
    for ev in runs.evidence_dir:
        if not ev:
            continue
        try:
            manifest = json.loads((Path(ev) / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if manifest.get("db"):
            dbs[str(manifest["db"])] += 1
        record = manifest.get("record") or {}
        agent = str(record.get("agent") or (manifest.get("run") or {}).get("agent", "agent"))
        if record.get("agent_version"):
            versions.setdefault(agent, set()).add(str(record["agent_version"]))
        if record.get("profile"):
            profiles.add(str(record["profile"]))
        if record.get("served_model"):
            served.setdefault(f"{agent} {record.get('model') or '-'}", set()).update(str(record["served_model"]).split(","))
    # more than one version (or served model) is what a comparison must not pool: shown joined by "and"
    prov.agent_versions = {a: " and ".join(sorted(v)) for a, v in sorted(versions.items())}
    prov.served_models = {k: " and ".join(sorted(v)) for k, v in sorted(served.items())}
    prov.profiles = {p: _profile_source(p) for p in sorted(profiles)}
    now = prov.versions
    ran_with = _campaign_versions(src)
    prov.versions = {**ran_with, **{k: v for k, v in now.items() if k not in ran_with}}
    for k, v in now.items():
        if k in ran_with and ran_with[k] != v:
            prov.versions[k] = f"{ran_with[k]} (this report: {v})"
    bound = _store_binding(src)
    prov.data = [_data_source(db, bound) for db in sorted(dbs)]
    try:
        recorded = json.loads((src / CAMPAIGN_FILE).read_text(encoding="utf-8"))
        commands = recorded.get("commands") or ([recorded["command"]] if recorded.get("command") else [])
        prov.command = " ; ".join(str(c) for c in commands)
    except (OSError, ValueError, AttributeError):
        prov.command = ""
    return prov
