"""Fixtures for concept tests: empty official-schema databases, the demo and the synthetic database.

Full builds are done once per session; hand-made patients go into small fresh databases.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clinbench.ehr.schema import create_empty
from tests.conftest import built_once


@pytest.fixture(scope="session")
def demo_db(mimic_demo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real MIMIC-IV demo with every concept of the mimic-code profile built (once per session)."""
    from clinbench.concepts.build import build_concepts

    from clinbench.ehr.load import load_mimic_iv

    def build(out: Path) -> None:
        load_mimic_iv(mimic_demo_dir, out)
        build_concepts(out, profile="mimic-code")

    return built_once(tmp_path_factory, "mimic_demo.duckdb", build)


@pytest.fixture(scope="session")
def demo_m4bench_db(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo with the m4bench profile built: a copy of ``demo_db`` rebuilt (only what differs is rebuilt)."""
    import shutil

    from clinbench.concepts.build import build_concepts

    def build(out: Path) -> None:
        shutil.copy(demo_db, out)
        build_concepts(out, profile="m4bench")

    return built_once(tmp_path_factory, "mimic_demo_m4bench.duckdb", build)


@pytest.fixture(autouse=True, scope="module")
def _mimic_code_values():
    """The hand-computed values of this directory are the mimic-code profile's, so its tests name it:
    the default profile here is mimic-code (the m4bench tests pass their profile explicitly). Module
    scope, so the module fixtures that build databases (they run after it) see it too."""
    from clinbench.concepts import profiles

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(profiles, "DEFAULT_PROFILE", "mimic-code")
        yield


@pytest.fixture(scope="session")
def synth_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 200-patient synthetic MIMIC-IV database with every concept of the mimic-code profile built (once per session)."""
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_mimic_iv as synth

    def build(out: Path) -> None:
        synth(out, patients=200, seed=0)
        build_concepts(out, profile="mimic-code")

    return built_once(tmp_path_factory, "mimic_synth.duckdb", build)


@pytest.fixture()
def empty_db(tmp_path: Path) -> Path:
    """A fresh database with every official MIMIC-IV table, empty."""
    path = tmp_path / "hand.duckdb"
    con = duckdb.connect(str(path))
    create_empty(con, "mimic-iv")
    con.close()
    return path


class HandDb:
    """A small official-schema database for hand-made patients: insert rows, build, query."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def insert(self, table: str, *rows: dict) -> None:
        con = duckdb.connect(str(self.path))
        try:
            for row in rows:
                names = ", ".join(f'"{k}"' for k in row)
                marks = ", ".join("?" for _ in row)
                con.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(row.values()))
        finally:
            con.close()

    def build(self, *names: str, profile: str = "mimic-code"):
        """Build ``names`` (and what they need) with ``profile``; the hand-computed values of these tests are
        mimic-code's, so that is the default here."""
        from clinbench.concepts.build import build_concepts

        return build_concepts(self.path, only=list(names) or None, targets=False, profile=profile)

    def both(self, table: str, order: str, *, a: str = "mimic-code", b: str = "mimic-code-next") -> tuple[list, list]:
        """The rows of ``table`` under profile ``a``, then under ``b`` (on a copy of these rows: a build of some
        tables is never of another profile than the layer's), sorted by ``order``."""
        import shutil

        other = HandDb(self.path.with_name(f"{self.path.stem}-{b}.duckdb"))
        shutil.copyfile(self.path, other.path)
        first = (self.build(table, profile=a), self.rows(f"SELECT * FROM mimiciv_derived.{table} ORDER BY {order}"))[1]
        second = (other.build(table, profile=b), other.rows(f"SELECT * FROM mimiciv_derived.{table} ORDER BY {order}"))[1]
        return first, second

    def rows(self, sql: str, params: list | None = None) -> list[dict]:
        con = duckdb.connect(str(self.path), read_only=True)
        try:
            cur = con.execute(sql, params or [])
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]
        finally:
            con.close()

    def one(self, sql: str, params: list | None = None) -> dict:
        found = self.rows(sql, params)
        assert len(found) == 1, f"expected one row, got {len(found)}: {found}"
        return found[0]


@pytest.fixture()
def hand(empty_db: Path) -> HandDb:
    return HandDb(empty_db)


INTIME = "2150-01-01 10:00:00"
OUTTIME = "2150-01-05 10:00:00"


def add_stay(hand: HandDb, subject: int = 1, hadm: int = 10, stay: int = 100, intime: str = INTIME, outtime: str = OUTTIME,
             gender: str = "M", anchor_age: int = 60, anchor_year: int = 2150) -> None:
    """A patient with one admission (from 4 h before ICU to 10 days after) and one ICU stay."""
    hand.insert("mimiciv_hosp.patients", dict(subject_id=subject, gender=gender, anchor_age=anchor_age, anchor_year=anchor_year))
    hand.insert(
        "mimiciv_hosp.admissions",
        dict(subject_id=subject, hadm_id=hadm, admittime="2150-01-01 06:00:00", dischtime="2150-01-11 12:00:00", admission_type="EW EMER.", race="WHITE", hospital_expire_flag=0),
    )
    hand.insert("mimiciv_icu.icustays", dict(subject_id=subject, hadm_id=hadm, stay_id=stay, intime=intime, outtime=outtime, los=4.0))


def chart(hand: HandDb, itemid: int, charttime: str, valuenum: float | None = None, value: str | None = None,
          subject: int = 1, hadm: int = 10, stay: int = 100) -> None:
    if value is None and valuenum is not None:
        value = f"{valuenum:g}"
    hand.insert(
        "mimiciv_icu.chartevents",
        dict(subject_id=subject, hadm_id=hadm, stay_id=stay, charttime=charttime, storetime=charttime, itemid=itemid, value=value, valuenum=valuenum),
    )


_lab_id = iter(range(1, 10**6))


def lab(hand: HandDb, specimen: int, itemid: int, charttime: str, valuenum: float | None, value: str | None = None,
        subject: int = 1, hadm: int | None = 10) -> None:
    hand.insert(
        "mimiciv_hosp.labevents",
        dict(labevent_id=next(_lab_id), subject_id=subject, hadm_id=hadm, specimen_id=specimen, itemid=itemid, charttime=charttime,
             value=value if value is not None else (None if valuenum is None else f"{valuenum:g}"), valuenum=valuenum),
    )


# tests reach the helpers through the `hand` fixture: hand.add_stay(...), hand.chart(...), hand.lab(...)
HandDb.add_stay = add_stay
HandDb.chart = chart
HandDb.lab = lab
