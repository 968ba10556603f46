"""What a workup costs: physician visits and test prices.

Visits follow the SDBench paper: $300 per physician visit, where a run of consecutive
question turns is one visit and a test order ends it (``count_visits``). Tests are priced
from ``data/prices.csv``: one row per orderable test with its CPT code(s) ("71260+74177"
for a study billed as two codes), a price, the price's source and the names clinicians
use for it. The bundled prices are estimates written for clinbench (each row says so), not
a published fee schedule; ``PriceTable.load(user_csv)`` overlays a user's own file
(columns code, description, price[, source]): its prices replace ours code by code and its
descriptions become extra names to match. An organ named by another of its words is priced by a row
billed by that organ ("MRI heart" as the cardiac MRI); a CT, MRI or radiograph of an organ no row names is
priced as its region's study ("CT lungs" as the chest CT); a greyscale ultrasound of an abdominal organ or quadrant,
a joint or a limb no row names as the limited abdominal, complete joint or limited extremity ultrasound
(``ultrasound_study``); a CT or MR angiogram only as an angiogram of its scanner (``scanners``). An order that matches
no row is charged
``DEFAULT_UNMATCHED_PRICE`` and counted, so every run reports its price coverage. An order
that names no priced test of its own and is answered with a recorded test's full result is
charged at least that test's price (``PriceTable.charge``); one that names its test pays
that test's price.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from clinbench.dx.matching import (FILLER, SITES, best_match, contrast_phase, is_angiogram, is_doppler, modalities,
                                   name_tokens, phases_differ, region_study, site_names, sites_of)
from clinbench.dx.text import tokens
from clinbench.errors import DataError

VISIT_FEE = 300.0
DEFAULT_UNMATCHED_PRICE = 100.0
MATCH_THRESHOLD = 85.0

# One study named by two words: the price table says "CT angiography, chest" and "CT pulmonary angiogram" alike ("CT
# angiogram abdomen and pelvis" was the $800 CT abdomen and pelvis, not the $1,000 CT angiography of its alias).
_SPELLINGS = {tokens(a)[0]: tokens(b)[0] for a, b in (
    ("angiography", "angiogram"), ("venography", "venogram"), ("arteriography", "arteriogram"),
    ("aortography", "aortogram"))}


@functools.lru_cache(maxsize=20000)
def price_tokens(name: str) -> tuple[str, ...]:
    """A name's words as the price table matches them: ``name_tokens`` with each study's two spellings as one."""
    return tuple(_SPELLINGS.get(t, t) for t in name_tokens(name))


def scanners(toks: tuple[str, ...]) -> frozenset[str]:
    """The cross-sectional scanners a name names: "ct", "mr" (an MRI, an MR angiogram or venogram); none for a
    catheter angiogram or any other test."""
    mods = modalities(toks)
    return frozenset(({"ct"} if "ct" in mods else set()) | ({"mr"} if "mri" in mods or "mr" in toks else set()))


# The words of a study of vessels: an ultrasound that says none of them (nor Doppler or duplex) is a greyscale study.
_VESSEL_WORDS = frozenset(tokens("vascular arterial artery arteries venous vein veins"))
# Limb sites, and the joints among their words: a joint's ultrasound is the complete joint study (76881), another
# limb's the limited extremity study (76882).
_LIMBS = frozenset({"arm", "leg", "hip", "knee", "ankle", "foot"})
_JOINTS = frozenset(tokens("joint joints shoulder elbow wrist hip hips knee knees ankle"))


def _vascular(toks: tuple[str, ...]) -> bool:
    """Whether a name is of a study of vessels: it says Doppler, duplex or a vessel's word."""
    return is_doppler(toks) or bool(_VESSEL_WORDS.intersection(toks))


def ultrasound_study(toks: tuple[str, ...]) -> tuple[str, ...] | None:
    """The study a greyscale ultrasound of organs or limbs no row names is billed as, as a name's words: of abdominal
    organs or a quadrant, the limited abdominal ultrasound (76705, "one organ or quadrant": "LUQ ultrasound",
    "pancreas ultrasound", "appendix ultrasound" were the $100 of an unmatched order); of a joint, the complete joint
    ultrasound (76881: "hip ultrasound", "shoulder ultrasound"); of another part of a limb, the limited extremity
    ultrasound (76882: "arm ultrasound" was the $400 arm venous duplex, a vascular study). None for an ultrasound
    with Doppler or of vessels, of another site, or of no site."""
    if modalities(toks) != {"ultrasound"} or _vascular(toks):
        return None
    sites = [SITES[t] for t in toks if t in SITES]
    if not sites:
        return None
    if all(within == {site, "abdomen"} for site, within in sites):
        return price_tokens("limited abdominal ultrasound")
    if all(site in _LIMBS for site, _ in sites):
        return price_tokens("joint ultrasound" if _JOINTS.intersection(toks) else "extremity ultrasound")
    return None


@dataclass(frozen=True)
class PriceRow:
    code: str
    description: str
    price: float
    source: str
    aliases: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        return (self.description, *self.aliases)


@dataclass(frozen=True)
class PricedOrder:
    order: str
    price: float
    code: str | None  # None when unmatched
    description: str | None
    by_region: bool = False  # priced as its region's study: no row names the organ ordered (``PriceTable._row``)

    @property
    def matched(self) -> bool:
        return self.code is not None


def _read_csv(path: Path | str) -> list[dict]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = {"code", "description", "price"} - set(reader.fieldnames or [])
            if missing:
                raise DataError(f"price file {path} lacks column(s) {', '.join(sorted(missing))}: "
                                "it needs code, description, price")
            rows = list(reader)
    except FileNotFoundError as exc:
        raise DataError(f"no price file at {path}") from exc
    for i, r in enumerate(rows, start=2):
        try:
            r["price"] = float(r["price"])
        except (TypeError, ValueError) as exc:
            raise DataError(f"price file {path} line {i}: price {r.get('price')!r} is not a number") from exc
        if r["price"] < 0:
            raise DataError(f"price file {path} line {i}: negative price")
    return rows


class PriceTable:
    def __init__(self, rows: list[PriceRow], label: str = "bundled estimates") -> None:
        self.rows = rows
        self.label = label
        self._names = [(n, r) for r in rows for n in r.names()]
        # a row's contrast phase is its description's: "CT chest abdomen pelvis without contrast"
        # is not the aortic CT angiogram, whose alias "CT chest abdomen pelvis" it matches
        self._tokens = [(price_tokens(n), r) for n, r in self._names]
        self._phases = [contrast_phase(price_tokens(r.description)) for r in rows for _ in r.names()]
        # a CT or MR order is not a study of another scanner or a catheter's ("mesenteric CT angiography" was the
        # $3,500 catheter mesenteric angiogram, "MRA brain" the CT angiogram of the head), nor an angiogram a row
        # that is none: each name's scanners and whether its row is an angiogram
        self._scanners = [scanners(t) for t, _ in self._tokens]
        self._angiograms = [is_angiogram(price_tokens(r.description)) for r in rows for _ in r.names()]
        # a name of a study of vessels ("upper extremity venous duplex", "leg doppler") is not a greyscale
        # ultrasound's ("arm ultrasound" was the $400 arm venous duplex), nor a greyscale ultrasound's name a
        # Doppler study's ("aorta Doppler" is not the $200 aorta ultrasound): (vascular, an ultrasound) of each name
        self._vascular = [(_vascular(toks), "ultrasound" in modalities(toks))
                          for toks, _ in self._tokens]
        self._cache: dict[str, tuple[PriceRow | None, tuple[str, ...]]] = {}

    @classmethod
    def bundled(cls) -> "PriceTable":
        return _bundled()

    @classmethod
    def load(cls, user_csv: str | Path | None = None) -> "PriceTable":
        base = _bundled()
        if user_csv is None:
            return base
        user = _read_csv(user_csv)
        by_code = {str(r["code"]).strip(): r for r in user}
        src = f"user price file {Path(user_csv).name}"

        def overlay(row: PriceRow) -> PriceRow:
            parts = row.code.split("+")
            if all(p in by_code for p in parts):
                price = sum(by_code[p]["price"] for p in parts)
                return PriceRow(row.code, row.description, price, (by_code[parts[0]].get("source") or src), row.aliases)
            return row

        rows = [overlay(r) for r in base.rows]
        known = {r.code for r in rows}
        rows += [PriceRow(str(r["code"]).strip(), r["description"], r["price"], r.get("source") or src)
                 for r in user if str(r["code"]).strip() not in known]
        return cls(rows, label=f"{src} over bundled estimates")

    def _row(self, order: str) -> tuple[PriceRow | None, tuple[str, ...]]:
        """The row an order is priced as and the words it matched by: its own, else the row of a study of the organ
        it names under another of the organ's words (``_organ_row``), else, for a CT, MRI or radiograph of organs no
        row names, its region's study (``region_study``: "CT lungs" is the $650 chest CT, not the $2,200 CT-guided
        lung biopsy; "lung radiograph" the chest radiograph, not the tibia's; "CT kidneys" the CT abdomen, not the
        $100 of an unmatched order); for an ultrasound of organs or limbs no row names, the study it is billed as
        (``ultrasound_study``: "LUQ ultrasound" is the $220 limited abdominal ultrasound, "arm ultrasound" the $180
        limited extremity ultrasound). An ultrasound that says neither Doppler, duplex nor a vessel is not priced
        by a name of a study of vessels, nor one that says it by a name of a greyscale ultrasound."""
        key = order.strip().lower()
        if key not in self._cache:  # the matched row, so each order keeps its own spelling
            toks = price_tokens(order)
            phase = contrast_phase(toks)
            ultrasound, vascular = "ultrasound" in modalities(toks), _vascular(toks)
            scanned, angiogram = scanners(toks), is_angiogram(toks)
            names, greyscale = [], []
            for pair, p, (name_vascular, name_ultrasound), scanned_by, row_angiogram in zip(
                    self._tokens, self._phases, self._vascular, self._scanners, self._angiograms):
                if (phases_differ(phase, p) or ultrasound and name_vascular and not vascular
                        or scanned and not scanned & scanned_by or angiogram and not row_angiogram):
                    continue
                # a Doppler order is priced by a greyscale ultrasound's name only where no study of vessels is its
                # ("thyroid Doppler" is the thyroid ultrasound; "aorta Doppler" the aortic duplex)
                (greyscale if ultrasound and vascular and name_ultrasound and not name_vascular else names).append(pair)
            row = best_match(toks, names, MATCH_THRESHOLD)[0] or self._organ_row(toks, names)
            if row is None and greyscale:
                names += greyscale
                row = best_match(toks, names, MATCH_THRESHOLD)[0] or self._organ_row(toks, names)
            region = (region_study(toks) or ultrasound_study(toks)) if row is None else None
            if region is not None:
                row, toks = best_match(region, names, MATCH_THRESHOLD)[0], region
            self._cache[key] = (row, toks)
        return self._cache[key]

    @staticmethod
    def _organ_row(toks: tuple[str, ...], names: list[tuple[tuple[str, ...], PriceRow]]) -> PriceRow | None:
        """The row of a study billed by an organ an order names by another of its words: a row whose description
        names the organ, matched with each site's words as one ("MRI heart" is the $1,500 cardiac MRI, not the
        $1,000 MRI chest of its region; "head radiograph" the $110 skull radiograph, not the $100 of an unmatched
        order). A row billed by its region or by more sites is not the organ's ("CT KUB" is the CT abdomen and
        pelvis without contrast, so "CT kidneys" stays the CT abdomen; "ultrasound brain" is not the ultrasound of
        head and neck, case 27's thyroid)."""
        ordered = sites_of(toks)
        if not ordered:
            return None
        own = [(site_names(n), r) for n, r in names
               if (billed := sites_of(price_tokens(r.description))) and billed <= ordered]
        return best_match(site_names(toks), own, MATCH_THRESHOLD)[0]

    def price(self, order: str) -> PricedOrder:
        row, toks = self._row(order)
        return (PricedOrder(order, row.price, row.code, row.description, toks != price_tokens(order)) if row is not None
                else PricedOrder(order, DEFAULT_UNMATCHED_PRICE, None, None))

    def names_its_test(self, order: str) -> bool:
        """Whether an order names a priced test of its own: it matches a row and every word
        of it (besides filler: "with", "contrast", "please") is in one of that row's names
        ("Chest CT", "Ultrasound RUQ", "Glucose"). Findings words ("filling defects") match
        no row; a row's name with findings words added ("troponin CT filling defects lobe")
        is not that row's test."""
        row, toks = self._row(order)
        if row is None:
            return False
        words = set(toks) - FILLER
        # filler alone ("with contrast") names nothing: the empty set is in every name
        return bool(words) and any(words <= set(price_tokens(n)) for n in row.names())

    def charge(self, order: str, served: str = "") -> PricedOrder:
        """What an answered order costs. An order that names a test of its own
        (``names_its_test``) costs that test's price, whatever recorded result it was
        served ("CT chest" that gets the recorded chest CT angiogram is a $650 chest CT).
        An order that names none, answered with a recorded test's full result under another
        name (``served``, that test's name in the record), costs that test's price if it is
        higher: findings words never fetch a study for less than ordering it by name."""
        own = self.price(order)
        if served and not self.names_its_test(order):
            study = self.price(served)
            if study.price > own.price:
                return PricedOrder(order, study.price, study.code, study.description)
        return own


@functools.lru_cache(maxsize=1)
def _bundled() -> PriceTable:
    path = resources.files("clinbench.dx") / "data" / "prices.csv"
    rows = [PriceRow(r["code"], r["description"], r["price"], r["source"],
                     tuple(a for a in (r.get("aliases") or "").split("|") if a))
            for r in _read_csv(str(path))]
    return PriceTable(rows)


def count_visits(kinds: list[str]) -> int:
    """Physician visits for a sequence of turn kinds ('question', 'test', anything else).

    A run of consecutive question turns is one visit; a test turn ends the run. Turns of
    other kinds (a malformed turn, the diagnosis) neither start nor end a visit; ``end``
    (between the encounters of an ensemble) ends one.
    """
    visits, in_visit = 0, False
    for k in kinds:
        if k == "question":
            if not in_visit:
                visits += 1
                in_visit = True
        elif k in ("test", "end"):
            in_visit = False
    return visits


@dataclass
class CostLedger:
    """Charges of one encounter."""

    turn_kinds: list[str] = field(default_factory=list)
    tests: list[PricedOrder] = field(default_factory=list)

    @property
    def visits(self) -> int:
        return count_visits(self.turn_kinds)

    @property
    def visit_cost(self) -> float:
        return self.visits * VISIT_FEE

    @property
    def test_cost(self) -> float:
        return sum(t.price for t in self.tests)

    @property
    def total(self) -> float:
        return self.visit_cost + self.test_cost

    @property
    def unmatched(self) -> int:
        return sum(not t.matched for t in self.tests)

    @property
    def coverage(self) -> float | None:
        return None if not self.tests else 1.0 - self.unmatched / len(self.tests)

    def summary(self) -> dict:
        return {
            "visits": self.visits, "visit_fee": VISIT_FEE, "visit_cost": self.visit_cost,
            "test_cost": self.test_cost, "total": self.total, "tests_ordered": len(self.tests),
            "tests_unmatched": self.unmatched, "price_coverage": self.coverage,
            "unmatched_price": DEFAULT_UNMATCHED_PRICE,
            "tests": [{"order": t.order, "code": t.code, "description": t.description, "price": t.price}
                      for t in self.tests],
        }
