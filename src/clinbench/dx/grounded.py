"""A gatekeeper grounded in a MIMIC-IV database: lab orders get the admission's real values.

Beyond the paper. When the user gives a MIMIC-IV DuckDB database (``--mimic-db``, schema
``mimiciv_hosp``) and a case carries its ``hadm_id`` (or a ``mimic_note_id`` such as
``10000032-DS-21`` that ``mimiciv_note.discharge`` maps to one), a laboratory order is
answered from ``labevents`` of that admission: for each analyte of the order, the first
result charted at or after ED arrival (``admissions.edregtime``, else ``admittime``), with
its unit and reference range. Analytes are found by the order's name: its concept in the
synonym table (``dx/testnames.py``: "TSH", "calcium", a panel's components) among the
d_labitems labels' concepts, else the panels below (d_labitems labels), else the labels by name
(expanded, stemmed, fuzzy). A panel also gets what the laboratory reported on the same
specimen (a CBC's differential drawn in its tube). Values are served as charted (``value``). An order with no such result, and every question and
non-laboratory order, goes to the wrapped gatekeeper; replies keep the "Name: value." shape
and pass the same leak guard.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from pathlib import Path

from clinbench.duck import duckdb
from clinbench.dx.cases import Case
from clinbench.dx.gatekeeper import REAL, SYNTHETIC, Gatekeeper, Reply, guard_reply
from clinbench.dx.leakguard import LeakGuard
from clinbench.dx.matching import best_match
from clinbench.dx.testnames import concept_of_label, concept_of_order, concepts
from clinbench.errors import DataError

HOSP = "mimiciv_hosp"


def _fmt(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:g}"


# A panel whose tube the laboratory reports more of: a CBC's specimen carries its differential. Nothing
# else on a specimen is served with a panel: in MIMIC-IV one chemistry specimen holds dozens of analytes
# (a BMP's also its LFTs, lipase, troponin), which would be tests nobody ordered or paid for.
REPORTED_WITH = {"complete blood count": "complete blood count with differential"}


class GroundedGatekeeper:
    """Lab orders from the admission's labevents; everything else from ``inner``."""

    def __init__(self, case: Case, inner: Gatekeeper, db: str | Path) -> None:
        self.case, self.inner = case, inner
        self.db = Path(db)
        if not self.db.is_file():
            raise DataError(f"no MIMIC-IV database at {self.db}: pass --mimic-db PATH.duckdb")
        self.guard = LeakGuard(case)
        # one connection for the admission, its arrival and its first blood results (a gatekeeper
        # answers many orders; a connection per order cost more than the answers)
        with duckdb.connect(str(self.db), read_only=True) as con:
            self.hadm_id = case.hadm_id if case.hadm_id is not None else self._hadm_from_note(con)
            self.arrival = self._arrival(con) if self.hadm_id is not None else None
            self.first = self._first_results(con) if self.arrival is not None else {}

    def _query(self, sql: str, params: list, con: duckdb.DuckDBPyConnection | None = None) -> list[tuple]:
        if con is None:
            with duckdb.connect(str(self.db), read_only=True) as own:
                return self._query(sql, params, own)
        try:
            return con.execute(sql, params).fetchall()
        except duckdb.CatalogException:
            return []

    def _hadm_from_note(self, con) -> int | None:
        rows = self._query("SELECT hadm_id FROM mimiciv_note.discharge WHERE note_id = ?", [self.case.mimic_note_id],
                           con)
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def _arrival(self, con):
        rows = self._query(f"SELECT coalesce(edregtime, admittime) FROM {HOSP}.admissions WHERE hadm_id = ?",
                           [self.hadm_id], con)
        return rows[0][0] if rows else None

    def _first_results(self, con) -> dict[str, tuple]:
        """d_labitems label -> the admission's first blood result of it charted at or after arrival."""
        rows = self._query(
            f"""SELECT d.label, l.value, l.valuenum, l.valueuom, l.ref_range_lower, l.ref_range_upper, l.flag,
                       l.specimen_id
                FROM {HOSP}.labevents l JOIN {HOSP}.d_labitems d USING (itemid)
                WHERE l.hadm_id = ? AND l.charttime >= ? AND coalesce(d.fluid, 'Blood') ILIKE 'blood'
                QUALIFY row_number() OVER (PARTITION BY d.label ORDER BY l.charttime, l.labevent_id) = 1
                ORDER BY l.labevent_id""",
            [self.hadm_id, self.arrival], con)
        return {r[0]: r for r in rows}

    def _labels(self, order: str) -> tuple[str, list[str]]:
        """(display name, d_labitems labels) of an order; no labels when it is not a lab order.
        The synonym table's concept of the order first ("TSH", "calcium", "cbc": the labels of that
        concept, a panel's of its components), then the labels by name."""
        labels = _all_labels(str(self.db))
        concept = concept_of_order(order)
        if concept is not None:
            info = concepts()[concept]
            members = info.components if info.kind == "panel" else (concept,)
            hits = [lab for m in members for lab in labels if concept_of_label(lab, "blood") == m]
            if hits:
                return (info.display if info.kind == "panel" else order.strip()), hits
        hit, _ = best_match(order, [(lab, lab) for lab in labels], 88.0)
        return (order.strip(), [hit]) if hit is not None else (order.strip(), [])

    def lab_result(self, order: str) -> Reply | None:
        if self.hadm_id is None or self.arrival is None:
            return None
        name, labels = self._labels(order)
        rows = [self.first[lab] for lab in labels if lab in self.first]
        if not rows:
            return None
        order_of = {lab: i for i, lab in enumerate(labels)}
        rows = sorted(rows, key=lambda r: order_of[r[0]])
        panel = _is_panel(order)
        also = REPORTED_WITH.get(concept_of_order(order) or "")
        if panel and also:  # what the laboratory reports on the same tube ("with 89% neutrophils"), nothing else
            tubes = {r[7] for r in rows if r[7] is not None}
            extra = set(concepts()[also].components)
            rows += [r for lab, r in self.first.items()
                     if lab not in order_of and r[7] in tubes and concept_of_label(lab, "blood") in extra]
        single = len(rows) == 1 and not panel  # "Neutrophils: 84 %", not "Neutrophils: Neutrophils 84 %"
        return Reply(_render(rows[0][0] if single else name, [r[:7] for r in rows], single), REAL,
                     matched="labevents")

    def ordinary(self, order: str) -> Reply | None:
        """A result in range for every analyte of the order, in the shape of a real one
        (units and reference range; drawn inside the range, seeded by case and order)."""
        if self.hadm_id is None or self.arrival is None:
            return None
        name, labels = self._labels(order)
        rows = self._query(
            f"""SELECT d.label, any_value(l.valueuom), min(l.ref_range_lower), max(l.ref_range_upper)
                FROM {HOSP}.labevents l JOIN {HOSP}.d_labitems d USING (itemid)
                WHERE d.label IN ({", ".join("?" * len(labels))}) GROUP BY d.label""", labels) if labels else []
        if not rows:
            return None
        rng = random.Random(hashlib.sha256(f"{self.case.case_id}|{order}".encode()).hexdigest())
        order_of = {lab: i for i, lab in enumerate(labels)}
        drawn = []
        for label, uom, lo, hi in sorted(rows, key=lambda r: order_of[r[0]]):
            value = "negative" if lo is None or hi is None else float(f"{rng.uniform(lo, hi):.3g}")
            drawn.append((label, value, value if isinstance(value, float) else None, uom, lo, hi, None))
        return Reply(_render(labels[0] if len(labels) == 1 else name, drawn, len(labels) == 1), SYNTHETIC,
                     matched="labevents")

    def answer(self, kind: str, content: str) -> Reply:
        if kind == "test":
            reply = self.lab_result(content)
            if reply is not None:
                guarded = guard_reply(self.guard, kind, content, reply, getattr(self.inner, "offline", self.inner))
                if guarded.blocked:
                    # a blocked lab reply reads like any other lab reply: units and reference range
                    same = self.ordinary(content)
                    if same is not None and not self.guard.clean(same.text, allow=content).blocked:
                        return Reply(same.text, SYNTHETIC, True, same.matched)
                return guarded
        return self.inner.answer(kind, content)


def _is_panel(order: str) -> bool:
    concept = concept_of_order(order)
    return concept is not None and concepts()[concept].kind == "panel"


def _render(name: str, rows, single: bool) -> str:
    parts = []
    for label, value, num, uom, lo, hi, flag in rows:
        shown = value if isinstance(value, str) and value.strip() else _fmt(num)  # "1.0" as charted, not "1"
        text = f"{'' if single else label + ' '}{shown}{' ' + uom if uom else ''}"
        if lo is not None and hi is not None:
            text += f" (reference {_fmt(lo)}-{_fmt(hi)})"
        if flag:
            text += f" {flag}"
        parts.append(text)
    return f"{name}: {', '.join(parts)}."


@functools.lru_cache(maxsize=8)
def _all_labels(db: str) -> tuple[str, ...]:
    with duckdb.connect(db, read_only=True) as con:
        try:
            return tuple(r[0] for r in con.execute(
                f"SELECT DISTINCT label FROM {HOSP}.d_labitems WHERE coalesce(fluid, 'Blood') ILIKE 'blood' "
                "AND label IS NOT NULL").fetchall())
        except duckdb.CatalogException:
            return ()
