"""Synthetic MIMIC-IV cohort: patients, admissions, ICU stays and each stay's latent clinical course.

The course (sepsis, ventilation, vasopressors, AKI, CRRT, liver disease, quirks) is drawn once
here from the prevalence knobs; the table writers in ``mimic_hosp`` and ``mimic_icu`` derive
every event from it, so a stay's vitals, labs, devices and drugs tell one consistent story.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa

from clinbench.ehr.synth.frames import DAY, HOUR, expand, insert
from clinbench.ehr.synth.knobs import Knobs

HOSP = "mimiciv_hosp"
ICU = "mimiciv_icu"
MINUTE = 60

ADMISSION_TYPES = ("EW EMER.", "URGENT", "DIRECT EMER.", "ELECTIVE", "SURGICAL SAME DAY ADMISSION",
                   "OBSERVATION ADMIT", "EU OBSERVATION")
ADMISSION_P = (0.46, 0.12, 0.06, 0.08, 0.10, 0.10, 0.08)
VIA_ED = np.array([1, 0, 0, 0, 0, 1, 1], dtype=bool)
ELECTIVE = np.array([0, 0, 0, 1, 1, 0, 0], dtype=bool)
ADMISSION_LOCATION = ("EMERGENCY ROOM", "TRANSFER FROM HOSPITAL", "PHYSICIAN REFERRAL", "PHYSICIAN REFERRAL",
                      "PROCEDURE SITE", "EMERGENCY ROOM", "EMERGENCY ROOM")
ICU_UNITS = ("Medical Intensive Care Unit (MICU)", "Surgical Intensive Care Unit (SICU)",
             "Cardiac Vascular Intensive Care Unit (CVICU)", "Medical/Surgical Intensive Care Unit (MICU/SICU)",
             "Trauma SICU (TSICU)", "Coronary Care Unit (CCU)", "Neuro Surgical Intensive Care Unit (Neuro SICU)")
ICU_UNIT_P = (0.22, 0.2, 0.17, 0.17, 0.11, 0.1, 0.03)


class MimicCohort:
    """The cohort and its latent courses, plus the random helpers every table writer shares.

    Arrays are indexed by patient (``p``), admission (``a``) or ICU stay (``s``); times are epoch
    seconds rounded to the minute.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, patients: int, seed: int, knobs: Knobs) -> None:
        self.con = con
        self.n = patients
        self.k = knobs
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 4]))
        self.counts: dict[str, int] = {}
        self.fio2_base: np.ndarray | None = None  # set by the ventilator charting, read by blood gases

    # -- helpers ------------------------------------------------------------------------
    def r(self, n: int) -> np.ndarray:
        return self.rng.random(n)

    def u(self, lo: float, hi: float, n: int) -> np.ndarray:
        return self.rng.uniform(lo, hi, n)

    def minutes(self, t: np.ndarray) -> np.ndarray:
        return (np.asarray(t, dtype=np.int64) // MINUTE) * MINUTE

    def put(self, table: str, data: pa.Table | dict, select: str = "s.*", joins: str = "") -> None:
        self.counts[table] = self.counts.get(table, 0) + insert(self.con, table, data, select, joins)

    def caregivers(self, n: int) -> np.ndarray:
        """Caregiver ids from a staff pool that grows with the cohort."""
        return 10_000 + self.rng.integers(0, 20 + self.n // 2, n)

    def quirk(self, n: int, scale: float = 1.0) -> np.ndarray:
        return self.r(n) < self.k.quirks * scale

    # -- cohort -------------------------------------------------------------------------
    def cohort(self) -> None:
        n, rng = self.n, self.rng
        self.subject_id = 10_000_001 + np.arange(n, dtype=np.int64) * 3
        self.male = self.r(n) < 0.56
        age = np.clip(rng.normal(63, 16, n), 18, 95).astype(np.int64)
        self.anchor_age = np.where(age > 89, 91, age)  # MIMIC-IV groups everyone over 89 at 91
        self.anchor_year = 2110 + rng.integers(0, 90, n)
        year_start = (self.anchor_year - 1970).astype("datetime64[Y]").astype("datetime64[s]").astype(np.int64)
        self.weight_p = np.round(np.clip(rng.normal(np.where(self.male, 84, 72), 17), 40, 180), 1)
        self.height_p = np.round(np.clip(rng.normal(np.where(self.male, 176, 162), 7), 140, 205))
        self.ckd_p = self.r(n) < 0.15
        self.liver_p = self.r(n) < self.k.liver
        self.diabetic_p = self.r(n) < 0.22

        n_adm = rng.choice([1, 2, 3], size=n, p=[0.7, 0.2, 0.1])
        a_pat, a_seq = expand(n_adm)
        A = len(a_pat)
        self.a_pat = a_pat
        last = np.r_[a_pat[1:] != a_pat[:-1], True]
        has_icu = self.r(A) < np.where(a_seq == 0, 0.92, 0.5)
        two_icu = has_icu & (self.r(A) < 0.08)
        a_type = rng.choice(len(ADMISSION_TYPES), size=A, p=ADMISSION_P)
        via_ed = VIA_ED[a_type]
        elective = ELECTIVE[a_type]
        direct = via_ed & (self.r(A) < 0.5)
        pre = np.where(elective, self.u(2, 8, A), np.where(direct, self.u(0.5, 4, A), self.u(6, 72, A))) * HOUR
        # the extremes of pre-ICU time: ICU admission within minutes of hospital admission, or weeks later
        extreme = self.r(A)
        pre = np.where(extreme < 0.06, self.u(0, 9, A) * MINUTE, pre)
        pre = np.where(extreme > 0.97, self.u(13, 30, A) * DAY, pre)
        icu1 = np.clip(rng.lognormal(np.log(50), 0.75, A), 14, 480) * HOUR
        gap2 = np.where(two_icu, self.u(24, 120, A), 0) * HOUR
        icu2 = np.where(two_icu, np.clip(rng.lognormal(np.log(36), 0.6, A), 10, 240), 0) * HOUR
        died = has_icu & last & (self.r(A) < 0.1)
        post = np.where(died, 0, self.u(12, 150, A) * HOUR)
        hosp = np.where(has_icu, pre + icu1 + gap2 + icu2 + post, self.u(24, 200, A) * HOUR)
        gap = self.u(20, 400, A) * DAY
        span = hosp + gap
        before = np.cumsum(span) - span
        first_idx = np.flatnonzero(a_seq == 0)
        before = before - np.repeat(before[first_idx], n_adm)
        base = year_start + self.u(0, 300, n).astype(np.int64) * DAY + rng.integers(0, 24 * 60, n) * MINUTE
        admit = self.minutes(base[a_pat] + before)
        disch = self.minutes(admit + hosp)
        self.hadm_id = 20_000_001 + np.arange(A, dtype=np.int64) * 7
        self.admit, self.disch, self.a_type, self.via_ed, self.elective = admit, disch, a_type, via_ed, elective
        self.edreg = self.minutes(admit - self.u(2, 8, A) * HOUR)
        self.died = died
        self.has_icu = has_icu
        self.a_year_icd10 = self.r(A) < 0.45

        # ICU stays: first and (for some admissions) second
        in1 = self.minutes(admit + pre)
        out1 = self.minutes(in1 + icu1)
        in2 = self.minutes(out1 + gap2)
        out2 = self.minutes(in2 + icu2)
        out1 = np.where(died & ~two_icu, disch, out1)
        out2 = np.where(died & two_icu, disch, out2)
        s_adm = np.r_[np.flatnonzero(has_icu), np.flatnonzero(two_icu)]
        s_in = np.r_[in1[has_icu], in2[two_icu]]
        s_out = np.r_[out1[has_icu], out2[two_icu]]
        order = np.lexsort((s_in, s_adm))
        self.s_adm, self.s_in, self.s_out = s_adm[order], s_in[order], s_out[order]
        S = len(self.s_adm)
        self.S = S
        self.s_pat = a_pat[self.s_adm]
        self.stay_id = 30_000_001 + np.arange(S, dtype=np.int64) * 5
        self.s_unit = rng.choice(len(ICU_UNITS), size=S, p=ICU_UNIT_P)

        k = self.k
        self.sev = rng.beta(2, 3, S)
        self.sepsis = self.r(S) < k.septic
        self.vent = self.r(S) < k.ventilated
        self.pressor = self.r(S) < np.clip(k.pressors * np.where(self.sepsis, 1.4, 0.8), 0, 1)
        self.aki = self.r(S) < np.clip(k.aki * np.where(self.sepsis | self.pressor, 1.3, 0.85), 0, 1)
        self.crrt = self.aki & (self.r(S) < (k.crrt / k.aki if k.aki > 0 else 0))
        self.liver = self.liver_p[self.s_pat]
        self.artline = self.vent | self.pressor | (self.r(S) < 0.25)
        self.threshold = self.r(S) < 0.04  # weight 80 kg and urine at exactly 0.5 or 0.3 mL/kg/h
        self.threshold_half = self.r(S) < 0.5
        self.no_hr = self.quirk(S, 0.5)  # no heart-rate charting: no hourly grid for this stay
        self.late = self.quirk(S, 3)  # charting continues up to 2 h after outtime
        self.weight = np.where(self.threshold, 80.0, np.round(self.weight_p[self.s_pat] * (1 + rng.normal(0, 0.02, S)), 1))

        # ventilation timeline
        pre_icu = self.r(S) < 0.35
        vs = np.where(pre_icu, self.s_in + self.u(0, 20, S) * MINUTE, self.s_in + self.u(1, 12, S) * HOUR)
        vs = self.minutes(np.minimum(vs, self.s_out - 3 * HOUR))
        vdur = np.clip(rng.lognormal(np.log(36), 0.8, S), 6, None) * HOUR
        ve = self.minutes(np.minimum(vs + vdur, self.s_out - 30 * MINUTE))
        self.vent &= ve - vs >= 4 * HOUR
        self.vs, self.ve = vs, ve
        has_gap = self.vent & (self.r(S) < 0.25)
        gap_len = rng.choice([8.0, 13.5, 15.0, 24.0], size=S) * HOUR
        self.gs = np.where(has_gap, self.minutes(vs + self.u(0.3, 0.6, S) * (ve - vs)), 0)
        self.ge = np.where(has_gap, self.gs + gap_len, 0)
        self.trach = self.vent & (ve - vs > 72 * HOUR) & (self.r(S) < 0.5)  # tracheostomy after 48 h

        # CRRT and AKI timing
        self.cs = self.minutes(self.s_in + self.u(6, 30, S) * HOUR)
        self.ce = self.minutes(np.minimum(self.cs + self.u(24, 96, S) * HOUR, self.s_out - HOUR))
        self.crrt &= self.ce - self.cs >= 6 * HOUR
        self.low_start = self.minutes(self.s_in + self.u(4, 30, S) * HOUR)
        self.low_len = self.u(6, 26, S) * HOUR

    def first_admit(self) -> np.ndarray:
        first = np.full(self.n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, self.a_pat, self.admit)
        return first

    def in_vent(self, g: np.ndarray, t: np.ndarray) -> np.ndarray:
        return self.vent[g] & (t >= self.vs[g]) & (t <= self.ve[g]) & ~((t >= self.gs[g]) & (t < self.ge[g]))

    # -- hosp core ----------------------------------------------------------------------
