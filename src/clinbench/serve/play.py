"""Clinician mode: a person plays a diagnosis case in the browser, recorded like an agent's encounter.

A session holds the case and the clinician's turns so far, each in the tag format an agent
writes (``<question>…</question>``, ``<test>…</test>``); it is a small JSON file under the
play store's ``.play-sessions/``, so a case can be left and resumed later, even after the app
restarts. What the clinician sees after each turn comes from replaying those turns through
the encounter loop of ``clinbench dx run`` (``dx.run._play``: the same gatekeeper, offline or
LLM, and the same price table): the observation an agent would get is the gatekeeper's reply,
and the encounter's running cost is the one it reports to agents (``note_cost``). Only the
vignette and those replies are shown: the case's title and final diagnosis are never read into
a page before the diagnosis is committed.

Committing plays the whole encounter once more through ``dx.run.run_one`` with the clinician's
turns and diagnosis: the judge scores it and its evidence and store row are written exactly as
an agent's, under agent ``human:<name>``, so ``clinbench dx stats`` and the report compare
clinicians with agents on the same cases.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinbench.atomic import write_json_atomic
from clinbench.errors import ClinbenchError

SESSIONS = ".play-sessions"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
_SESSION_ID = re.compile(r"^[0-9a-f]{16}$")
_lock = threading.Lock()


class PlayError(ClinbenchError):
    """A request the clinician mode cannot serve (unknown case, bad name, finished session)."""


class _Waiting(Exception):
    """The replayed turns ran out: the encounter waits for the clinician."""


class _Clinician:
    """A DxAgent playing the clinician's recorded turns; ``strict`` raises ``_Waiting`` when they run out."""

    name = "human"
    model = ""

    def __init__(self, turns: list[str], *, strict: bool) -> None:
        self.turns = turns
        self.strict = strict
        self.i = 0
        self.replies: list[str] = []  # the observation after each played turn
        self.costs: list[tuple[float, float, float]] = []  # (total, visits, tests) before each turn
        self.forced = False

    def start(self, case_summary: str, instructions: str) -> None:
        self.i = 0

    def note_cost(self, total: float, visits: float, tests: float) -> None:
        self.costs.append((total, visits, tests))

    def turn(self, observation: str) -> str:
        if self.i > 0:
            self.replies.append(observation)
        if self.i >= len(self.turns):
            self.forced = observation.startswith("Turn limit reached")
            if self.strict:
                raise _Waiting
            return ""
        self.i += 1
        return self.turns[self.i - 1]


def turn_text(kind: str, items: list[str]) -> str:
    """One turn in the tag format; angle brackets in the clinician's words are dropped so no tag can be forged."""
    clean = [" ".join(re.sub(r"[<>]", " ", i).split()) for i in items]
    clean = [c for c in clean if c]
    if kind not in ("question", "test", "diagnosis"):
        raise PlayError(f"unknown action {kind!r}: ask questions, order tests or give a diagnosis")
    if not clean:
        raise PlayError(f"write at least one {kind} (one a line)")
    if kind == "diagnosis":
        return f"<diagnosis>{' '.join(clean)}</diagnosis>"
    return "".join(f"<{kind}>{c}</{kind}>" for c in clean)


@dataclass
class Step:
    action: str  # the turn in the tag format it was played in
    reply: str  # what the encounter answered
    cost_after: float

    @property
    def asked(self) -> tuple[str, list[str]]:
        """("asked" | "ordered", the questions or tests) of the turn."""
        from clinbench.dx.encounter import parse_turn

        turn = parse_turn(self.action)
        return ("ordered", turn.tests) if turn.tests else ("asked", turn.questions)


@dataclass
class View:
    session: dict[str, Any]
    vignette: str
    steps: list[Step] = field(default_factory=list)
    cost: float = 0.0
    visits: float = 0.0
    tests: float = 0.0
    forced: bool = False


class Play:
    """The clinician mode of one app: where cases come from, which gatekeeper and judge, the dx store."""

    def __init__(self, store_dir: Path, cases: str = "demo", *, gatekeeper: str = "offline", judge: str = "offline",
                 roles: dict | None = None, cache_dir: Path | None = None) -> None:
        from clinbench.dx.run import DxConfig

        self.store_dir = Path(store_dir)
        self.cases_source = cases
        self.config = dict(gatekeeper=gatekeeper, judge=judge, roles=roles or {}, cache_dir=cache_dir)
        DxConfig(agent="human:check", **self.config).check()
        self._cases: dict[str, list] = {}
        self._warming = False

    def warm(self) -> None:
        """Build a gatekeeper and judge once in the background (first call only), so the first case does not wait
        for their one-time loading (the leak guard's ICD-10 tables, the judge's embedding model: seconds each);
        called when the case list is shown."""
        if self._warming:
            return
        self._warming = True

        def build() -> None:
            from clinbench.dx.gatekeeper import make_gatekeeper
            from clinbench.dx.judge import make_judge

            cases = self.cases(None)
            if cases and self.config["gatekeeper"] == "offline":
                make_gatekeeper("offline", cases[0])
            if self.config["judge"] == "offline":  # its embedding model loads on first use
                make_judge("offline").score("community-acquired pneumonia", "pneumonia")

        threading.Thread(target=build, name="play-warm", daemon=True).start()

    # -- cases -------------------------------------------------------------------------
    def cases(self, split: str | None) -> list:
        from clinbench.dx.cases import load_cases

        key = split or ""
        if key not in self._cases:
            self._cases[key] = load_cases(self.cases_source, split=split or None)
        return self._cases[key]

    def case(self, case_id: int):
        case = next((c for c in self.cases(None) if c.case_id == case_id), None)
        if case is None:
            raise PlayError(f"no case {case_id} in {self.cases_source}")
        return case

    # -- sessions ----------------------------------------------------------------------
    def _path(self, sid: str) -> Path:
        if not _SESSION_ID.match(sid or ""):
            raise PlayError("no such session")
        return self.store_dir / SESSIONS / f"{sid}.json"

    def load(self, sid: str) -> dict[str, Any]:
        try:
            session = json.loads(self._path(sid).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise PlayError("no such session") from exc
        if session.get("cases") != self.cases_source:  # its case ids mean other cases here
            raise PlayError(f"this session plays a case of --cases {session.get('cases')}; "
                            f"restart `clinbench serve` with --cases {session.get('cases')} to resume it")
        return session

    def _save(self, session: dict[str, Any]) -> None:
        (self.store_dir / SESSIONS).mkdir(parents=True, exist_ok=True)
        session["updated"] = time.time()
        write_json_atomic(self._path(session["id"]), session, indent=1)

    def sessions(self) -> list[dict[str, Any]]:
        folder = self.store_dir / SESSIONS
        out = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                session = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(session, dict) and session.get("cases") == self.cases_source:
                out.append(session)
        return sorted(out, key=lambda s: -s.get("updated", 0))

    def start(self, player: str, case_id: int, split: str | None) -> dict[str, Any]:
        if not NAME.match(player or ""):
            raise PlayError("give your name: letters, digits, '.', '_' or '-' (up to 40), e.g. dr-lee")
        if split and split not in ("train", "validation", "test"):
            raise PlayError(f"unknown split {split!r}: use train, validation or test")
        self.case(case_id)
        session = {"id": secrets.token_hex(8), "player": player, "case_id": case_id, "split": split or "",
                   "cases": self.cases_source, "turns": [], "run_id": None, "created": time.time()}
        with _lock:
            self._save(session)
        return session

    def _dx_config(self, player: str):
        from clinbench.dx.run import DxConfig

        cfg = DxConfig(agent=f"human:{player}", **self.config)
        cfg.check()
        return cfg

    def _models(self, cfg):
        from clinbench.dx.run import _models

        return _models(cfg)

    def view(self, sid: str) -> View:
        """Replay the session's turns: the vignette, each turn with its reply, the running cost."""
        from clinbench.dx.costs import PriceTable
        from clinbench.dx.run import _play

        session = self.load(sid)
        case = self.case(int(session["case_id"]))
        cfg = self._dx_config(session["player"])
        agent = _Clinician(list(session["turns"]), strict=True)
        try:
            _play(case, cfg, self._models(cfg), PriceTable.bundled(), agent)
        except _Waiting:
            pass
        total, visits, tests = agent.costs[-1] if agent.costs else (0.0, 0.0, 0.0)
        steps = []
        for i, action in enumerate(session["turns"]):
            reply = agent.replies[i] if i < len(agent.replies) else ""
            after = agent.costs[i + 1][0] if i + 1 < len(agent.costs) else total
            steps.append(Step(action, reply, after))
        return View(session, case.case_summary, steps, total, visits, tests, agent.forced)

    def act(self, sid: str, kind: str, items: list[str]) -> dict[str, Any]:
        """Add a turn (questions or tests); a diagnosis commits the encounter instead."""
        text = turn_text(kind, items)
        with _lock:
            session = self.load(sid)
            if session.get("run_id"):
                raise PlayError("this case is finished: its diagnosis was committed")
            if kind == "diagnosis":
                return self._commit(session, text)
            session["turns"].append(text)
            self._save(session)
            return session

    def _commit(self, session: dict[str, Any], diagnosis: str) -> dict[str, Any]:
        from clinbench.records.store import Store
        from clinbench.dx.costs import PriceTable
        from clinbench.dx.run import run_one

        from clinbench.serve.sources import STORE_LOCK

        case = self.case(int(session["case_id"]))
        cfg = self._dx_config(session["player"])
        agent_name = f"human:{session['player']}"
        with STORE_LOCK:
            store = Store.create(self.store_dir)
            trial = 1 + sum(1 for r in store.runs(benchmark="dx")
                            if r["agent"] == agent_name and r["task"] == str(case.case_id))
            agent = _Clinician([*session["turns"], diagnosis], strict=False)
            record = run_one(case, cfg, trial, self.store_dir, PriceTable.bundled(), agent=agent)
            store.record(record)
        session["turns"].append(diagnosis)
        session["run_id"] = record.run_id
        self._save(session)
        return session


def default_cache() -> Path:
    from clinbench.cache import cache_root

    return cache_root() / "dx-play-models"
