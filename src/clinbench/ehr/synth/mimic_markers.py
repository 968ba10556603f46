"""Synthetic MIMIC-IV cardiac markers and C-reactive protein: the rarely ordered labs.

Unlike the daily panels these are ordered for a minority of admissions, for a reason:
- troponin T (51003, ng/mL) with CK-MB (50911, ng/mL) and total CK (50910, IU/L) in the same
  tube, drawn serially every 6-8 h; more often for myocardial infarction or heart failure coded
  patients, coronary and cardiac-surgery ICU stays and sepsis. Most results are below the
  assay's 0.01 ng/mL limit and, as in MIMIC-IV, then carry no value, only a "<0.01" comment;
  mild chronic elevations (renal disease, heart failure, sepsis) and an acute rise and fall
  (peak ~0.6 ng/mL, up to 20) for acute coronary events make up the rest. CK-MB below 1 ng/mL
  is likewise a "<1." comment.
- NT-proBNP (50963, pg/mL), log-normal, a median near 4,500 with heart failure and 350
  without, higher with chronic kidney disease; above the 70,000 reporting limit it is a
  comment without a value.
- CRP (50889, mg/L), around 100 mg/L with sepsis and 10 mg/L otherwise.

These are drawn after every other table (from the same seeded generator), so adding them left
the earlier tables' draws unchanged. NT-proBNP and CK carry no reference range: MIMIC-IV's vary
with age, sex and ancestry.
"""

from __future__ import annotations

import numpy as np

from clinbench.ehr.synth.frames import HOUR, Events, expand
from clinbench.ehr.synth.mimic_cohort import HOSP, MimicCohort

TROPONIN_T, CK_MB, CK, NT_PROBNP, CRP = 51003, 50911, 50910, 50963, 50889
CARDIAC_UNITS = (2, 5)  # CVICU and CCU in ICU_UNITS
# relative troponin T (and CK-MB excess) of an acute coronary event at each serial draw: rise, peak, fall
ACUTE_CURVE = np.array([0.25, 0.7, 1.0, 0.8, 0.55])
TROPONIN_LIMIT = 0.01  # ng/mL, lowest reported troponin T
CK_MB_LIMIT = 1.0  # ng/mL
NT_PROBNP_LIMIT = 70_000.0  # pg/mL, highest reported NT-proBNP
TROPONIN_NOTE = "cTropnT > 0.10 ng/mL suggests Acute MI."


class MarkerLabs(MimicCohort):
    """Writer of the cardiac-marker and CRP rows of mimiciv_hosp.labevents (needs codes() first)."""

    def marker_labs(self) -> None:
        rng, A = self.rng, len(self.a_pat)
        first_stay = np.full(A, -1)
        fs = np.r_[True, self.s_adm[1:] != self.s_adm[:-1]]
        first_stay[self.s_adm[fs]] = np.flatnonzero(fs)
        icu = first_stay >= 0
        st = np.maximum(first_stay, 0)
        cardiac_unit = icu & np.isin(self.s_unit[st], CARDIAC_UNITS)
        sepsis = icu & self.sepsis[st]
        mi = self.comorbid_p["myocardial_infarct"][self.a_pat]
        chf = self.comorbid_p["congestive_heart_failure"][self.a_pat]
        ckd = self.ckd_p[self.a_pat]
        # the first draw: with the admission bloods, or later for a new reason (ICU admission, ward event)
        adm_draw = np.where(self.via_ed, self.edreg + HOUR, self.admit + HOUR)
        later = np.where(icu, self.s_in[st] + self.u(0.5, 3, A) * HOUR, self.admit + self.u(6, 48, A) * HOUR)
        start = np.where(self.r(A) < 0.7, adm_draw, later)
        # one tube per draw, numbered after every specimen already written
        written = self.con.execute(f"SELECT coalesce(max(specimen_id), 0) FROM {HOSP}.labevents").fetchall()
        spec_base = 1 + int(written[0][0])
        ev = Events()
        draws_a: list[np.ndarray] = []
        draws_t: list[np.ndarray] = []

        def serial(tested: np.ndarray, k: np.ndarray, lo_h: float, hi_h: float):
            """``k`` draws ``lo_h``-``hi_h`` hours apart per tested admission, before discharge:
            (row of each draw in the labevents draws, its admission, its serial number)."""
            adm = np.flatnonzero(tested)
            g, pos = expand(k[adm])
            a = adm[g]
            gap = self.u(lo_h, hi_h, len(adm))[g] * HOUR
            t = self.minutes(start[a] + pos * gap + self.rng.integers(0, 20, len(a)) * 60)
            inside = t <= self.disch[a]
            a, pos, t = a[inside], pos[inside], t[inside]
            d = sum(len(x) for x in draws_a) + np.arange(len(a))
            draws_a.append(a)
            draws_t.append(t)
            return d, a, pos

        # troponin T
        tested = self.r(A) < np.clip(0.15 + 0.5 * mi + 0.3 * (chf | cardiac_unit) + 0.1 * sepsis, 0, 0.9)
        acute = tested & ((mi & (self.r(A) < 0.6)) | (cardiac_unit & (self.r(A) < 0.15)))
        chronic = ckd | chf | sepsis
        elevated = ~acute & (self.r(A) < np.where(chronic, 0.55, 0.15))
        peak = np.where(acute, np.clip(rng.lognormal(np.log(0.6), 1.1, A), 0.05, 20),
                        np.where(elevated, rng.lognormal(np.log(np.where(chronic, 0.04, 0.03)), 0.7, A), 0.004))
        k = np.where(acute, rng.integers(3, 5, A), rng.choice([1, 2, 3], size=A, p=[0.35, 0.4, 0.25]))
        d, a, pos = serial(tested, k, 6, 8)
        m = len(d)
        curve = np.where(acute[a], ACUTE_CURVE[np.minimum(pos, len(ACUTE_CURVE) - 1)], np.exp(rng.normal(0, 0.2, m)))
        trop = peak[a] * curve
        below = trop < TROPONIN_LIMIT
        spec = spec_base + d
        ev.add(d=d, itemid=TROPONIN_T, valuenum=np.where(below, np.nan, trop),
               specimen=spec, comment=np.where(below, f"<0.01.  {TROPONIN_NOTE}", TROPONIN_NOTE))
        # CK-MB and CK in most troponin tubes (always during an acute event): a baseline plus the infarct's release
        with_ck = acute[a] | (self.r(m) < 0.6)
        mb_excess = np.where(acute[a], 25 * (peak[a] / 0.6) ** 0.7 * curve, 0)
        ck_mb = rng.lognormal(np.log(2.5), 0.7, A)[a] * np.exp(rng.normal(0, 0.2, m)) + mb_excess
        ck = rng.lognormal(np.log(110), 0.8, A)[a] * np.exp(rng.normal(0, 0.15, m)) + 9 * mb_excess
        i = np.flatnonzero(with_ck)
        mb_below = ck_mb[i] < CK_MB_LIMIT
        ev.add(d=d[i], itemid=CK_MB, valuenum=np.where(mb_below, np.nan, np.round(ck_mb[i])), specimen=spec[i],
               comment=np.where(mb_below, "<1.", None))
        ev.add(d=d[i], itemid=CK, valuenum=np.round(np.clip(ck[i], 10, 60_000)), specimen=spec[i])

        # NT-proBNP: with the admission (or ICU admission) bloods, repeated a day or more later for some
        tested = self.r(A) < np.clip(0.04 + 0.45 * chf + 0.15 * cardiac_unit, 0, 0.9)
        level = np.where(chf, rng.lognormal(np.log(4500), 1.0, A), rng.lognormal(np.log(350), 1.2, A))
        level = level * np.where(ckd, 2.5, 1)
        d, a, _ = serial(tested, rng.choice([1, 2], size=A, p=[0.7, 0.3]), 24, 72)
        bnp = np.round(np.maximum(level[a] * np.exp(rng.normal(0, 0.25, len(d))), 5))
        over = bnp > NT_PROBNP_LIMIT
        ev.add(d=d, itemid=NT_PROBNP, valuenum=np.where(over, np.nan, bnp), specimen=spec_base + d,
               comment=np.where(over, "GREATER THAN 70000.", None))

        # CRP: mostly for suspected infection, repeated every one to two days
        tested = self.r(A) < np.clip(0.04 + 0.12 * sepsis + 0.04 * self.liver_p[self.a_pat], 0, 0.9)
        level = np.where(sepsis, rng.lognormal(np.log(100), 0.5, A), rng.lognormal(np.log(10), 1.1, A))
        d, a, _ = serial(tested, rng.choice([1, 2, 3], size=A, p=[0.6, 0.3, 0.1]), 24, 48)
        crp = np.maximum(level[a] * np.exp(rng.normal(0, 0.25, len(d))), 0.3)
        ev.add(d=d, itemid=CRP, valuenum=crp, specimen=spec_base + d)

        d_adm, d_t = np.concatenate(draws_a), np.concatenate(draws_t)
        self._lab_rows(ev, self.a_pat[d_adm], d_adm, d_t)
