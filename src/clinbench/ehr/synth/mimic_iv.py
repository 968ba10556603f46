"""Synthetic MIMIC-IV (hosp + icu) with the shape and clinical texture of the real database.

Patients get one to three admissions (ED -> ward -> ICU paths, some with two ICU stays), and
each ICU stay a latent course (sepsis, ventilation, vasopressors, AKI, CRRT, liver disease)
drawn from the prevalence knobs. Every table is then generated from those latents with numpy
(one array element per event, no per-event Python) and written through the shared table
declarations, so names and types match the PhysioNet loader exactly.

Texture that the public concepts and the 28 tasks depend on is deliberate: vitals hourly with
°F and °C temperature items, GCS every 1-4 h with "No Response-ETT" while intubated, real O2
device and ventilator-mode texts with episode gaps around the 14 h rule, creatinine bumps
rounded to 0.1 mg/dL (so +0.3 and 1.5x edges occur), hourly urine output with the GU
irrigant item and stays at exactly 0.5 mL/kg/h, vasopressor ladders that include
norepinephrine 0.1 mcg/kg/min exactly, dopamine 5 and 15, vasopressin in units/hour,
antibiotics by route (including the topical, eye and ear routes conventions exclude),
cultures with and without organisms, some with only a chart date, and every Charlson
component. Quirks (duplicates, 999999 error values, charting past the stay) occur at the
``quirks`` rate, and never when it is 0.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from clinbench.ehr.mimic_iv_tables import CORE_SCHEMAS, MIMIC_IV_TABLES
from clinbench.ehr.schema import create_empty
from clinbench.ehr.synth import icd
from clinbench.ehr.synth.frames import (
    DAY, HOUR, Events, atomic_database, ceil_hour, expand, floor_day, grid, group_cumsum, insert, pick, ts,
)
from clinbench.ehr.synth.items import D_ITEMS, D_LABITEMS, LAB_REFERENCE, LAB_UNITS
from clinbench.ehr.synth.knobs import Knobs, check_size

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
WARDS = ("Medicine", "Med/Surg", "Medicine/Cardiology", "Neurology", "Cardiac Surgery", "Hematology/Oncology",
         "Transplant", "Emergency Department Observation")
MED_SERVICES = ("MED", "CMED", "OMED", "NMED")
SURG_SERVICES = ("SURG", "CSURG", "NSURG", "VSURG", "TRAUM", "ORTHO")
DISCHARGE_LOCATIONS = ("HOME", "HOME HEALTH CARE", "SKILLED NURSING FACILITY", "REHAB",
                       "CHRONIC/LONG TERM ACUTE CARE", "HOSPICE")
YEAR_GROUPS = ("2008 - 2010", "2011 - 2013", "2014 - 2016", "2017 - 2019", "2020 - 2022")

EYES = (None, "None", "To Pain", "To Speech", "Spontaneously")
VERBAL = (None, "No Response", "Incomprehensible sounds", "Inappropriate Words", "Confused", "Oriented")
MOTOR = (None, "No response", "Abnormal extension", "Abnormal Flexion", "Flex-withdraws", "Localizes Pain",
         "Obeys Commands")
VENT_MODES = ("CMV/ASSIST/AutoFlow", "CMV/ASSIST", "SIMV/PSV/AutoFlow", "PRVC/AC", "CPAP/PSV")
HAMILTON_MODES = ("APV (cmv)", "(S) CMV", "P-SIMV", "ASV")
TEMP_SITES = ("Oral", "Axillary", "Blood", "Rectal", "Temporal")

# vasoactive infusions: itemid, rate unit, amount unit, dose ladder (rates actually charted)
PRESSORS = {
    "norepinephrine": (221906, "mcg/kg/min", "mg", (0.02, 0.03, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)),
    "epinephrine": (221289, "mcg/kg/min", "mg", (0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2)),
    "phenylephrine": (221749, "mcg/kg/min", "mg", (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0)),
    "dopamine": (221662, "mcg/kg/min", "mg", (2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0)),
    "vasopressin": (222315, "units/hour", "units", (1.2, 1.8, 2.4, 2.4, 2.4, 3.6)),
    "dobutamine": (221653, "mcg/kg/min", "mg", (2.5, 5.0, 7.5, 10.0)),
    "milrinone": (221986, "mcg/kg/min", "mg", (0.125, 0.25, 0.375, 0.5)),
    "angiotensin_ii": (229709, "ng/kg/min", "mg", (5.0, 10.0, 20.0, 40.0)),
}

# antibiotics given for suspected infection: (drug, route, doses a day)
SYSTEMIC_ANTIBIOTICS = (
    ("Vancomycin", "IV", 2), ("Piperacillin-Tazobactam", "IV", 3), ("CefePIME", "IV", 2),
    ("CeftriaXONE", "IV", 1), ("MetRONIDAZOLE (FLagyl)", "IV", 3), ("Meropenem", "IV", 3),
    ("Levofloxacin", "PO/NG", 1), ("Azithromycin", "PO/NG", 1), ("Ciprofloxacin HCl", "PO/NG", 2),
    ("Sulfameth/Trimethoprim DS", "PO/NG", 2), ("Vancomycin Oral Liquid", "PO/NG", 4), ("CefazoLIN", "IV", 3),
)
# other antibiotic products: (drug, route, share of admissions). Eye, ear and topical routes
# and cream/gel/ophthalmic products are excluded by the suspicion-of-infection convention;
# nasal (NU) mupirocin is not.
LOCAL_ANTIBIOTICS = (
    ("Mupirocin Nasal Ointment 2%", "NU", 0.06), ("Erythromycin 0.5% Ophth Oint", "BOTH EYES", 0.05),
    ("Ciprofloxacin 0.3% Ophth Soln", "LEFT EYE", 0.02), ("Ofloxacin 0.3% Otic Soln", "LEFT EAR", 0.02),
    ("Mupirocin Ointment 2%", "TP", 0.03), ("Clindamycin 1% Gel", "TP", 0.02),
    ("Gentamicin 0.3% Ophth Soln", "OU", 0.01),
)
COMMON_DRUGS = (
    ("Heparin", "SC", 0.6), ("Pantoprazole", "IV", 0.4), ("Acetaminophen", "PO/NG", 0.6), ("Insulin", "SC", 0.3),
    ("Furosemide", "IV", 0.2), ("Potassium Chloride", "IV", 0.3), ("Docusate Sodium", "PO", 0.3),
)

# cultures: spec_itemid, spec_type_desc, test_itemid, test_name, share positive
CULTURES = (
    (70012, "BLOOD CULTURE", 90201, "Blood Culture, Routine", 0.3),
    (70079, "URINE", 90039, "URINE CULTURE", 0.45),
    (70062, "SPUTUM", 90055, "RESPIRATORY CULTURE", 0.4),
    (70091, "MRSA SCREEN", 90189, "MRSA SCREEN", 0.1),
)
ORGANISMS = ((80002, "ESCHERICHIA COLI"), (80023, "STAPH AUREUS COAG +"), (80004, "KLEBSIELLA PNEUMONIAE"),
             (80026, "PSEUDOMONAS AERUGINOSA"), (80053, "ENTEROCOCCUS SP."), (80075, "YEAST"))
SUSCEPTIBILITY = ((90012, "GENTAMICIN"), (90008, "TRIMETHOPRIM/SULFA"), (90028, "CEFEPIME"), (90019, "CIPROFLOXACIN"),
                  (90029, "MEROPENEM"), (90026, "PIPERACILLIN/TAZO"))

# lab panels: a panel is one tube (one specimen_id) of several items
CHEM = (50971, 50983, 50912, 50902, 51006, 50882, 50868, 50931, 50893)
LYTES = (50960, 50970)
CBC = (51221, 51222, 51301, 51265, 51279, 51250, 51248, 51249, 51277)
COAG = (51237, 51274, 51275)
LFT = (50885, 50861, 50878, 50863, 50862)
DIFF = (51256, 51244, 51254, 51200, 51146, 51144)
DECIMALS = {50912: 1, 50885: 1, 51237: 1, 50971: 1, 50893: 1, 50960: 1, 50970: 1, 51221: 1, 51222: 1, 51301: 1,
            51279: 2, 51248: 1, 51249: 1, 51277: 1, 51274: 1, 51275: 1, 50862: 1, 51256: 1, 51244: 1, 51254: 1,
            51200: 1, 51146: 1, 51144: 0, 50820: 2, 50813: 1, 50808: 2, 50822: 1}


class _Mimic:
    def __init__(self, con: duckdb.DuckDBPyConnection, patients: int, seed: int, knobs: Knobs) -> None:
        self.con = con
        self.n = patients
        self.k = knobs
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 4]))
        self.counts: dict[str, int] = {}

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
        self.trach = self.vent & (ve - vs > 96 * HOUR) & (self.r(S) < 0.4)

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
    def hosp_core(self) -> None:
        rng, n, A = self.rng, self.n, len(self.a_pat)
        # patients: death date in hospital, or later for some
        last_disch = np.zeros(n, dtype=np.int64)
        np.maximum.at(last_disch, self.a_pat, self.disch)
        died_in = np.zeros(n, dtype=bool)
        died_in[self.a_pat[self.died]] = True
        later = ~died_in & (self.r(n) < 0.15)
        dod = np.where(died_in, last_disch, last_disch + self.u(5, 365, n).astype(np.int64) * DAY)
        group = np.clip((self.anchor_year - 2110) // 18, 0, 4)
        self.put(f"{HOSP}.patients", {
            "subject_id": self.subject_id, "gender": pick(["F", "M"], self.male.astype(int)),
            "anchor_age": self.anchor_age, "anchor_year": self.anchor_year,
            "anchor_year_group": pick(YEAR_GROUPS, group),
            "dod": ts(floor_day(dod), died_in | later).cast(pa.date32()),
        })
        discharge = np.where(self.died, len(DISCHARGE_LOCATIONS), rng.choice(len(DISCHARGE_LOCATIONS), size=A,
                                                                              p=[0.35, 0.3, 0.18, 0.08, 0.05, 0.04]))
        self.put(f"{HOSP}.admissions", {
            "subject_id": self.subject_id[self.a_pat], "hadm_id": self.hadm_id,
            "admittime": ts(self.admit), "dischtime": ts(self.disch), "deathtime": ts(self.disch, self.died),
            "admission_type": pick(ADMISSION_TYPES, self.a_type),
            "admission_location": pick(ADMISSION_LOCATION, self.a_type),
            "discharge_location": pick(DISCHARGE_LOCATIONS + ("DIED",), discharge),
            "insurance": pick(("Medicare", "Medicaid", "Other"), rng.choice(3, size=A, p=[0.5, 0.15, 0.35])),
            "language": pick(("ENGLISH", "?"), (self.r(A) < 0.08).astype(int)),
            "marital_status": pick(("MARRIED", "SINGLE", "WIDOWED", "DIVORCED"), rng.integers(0, 4, A)),
            "race": pick(("WHITE", "BLACK/AFRICAN AMERICAN", "HISPANIC/LATINO - PUERTO RICAN", "ASIAN", "UNKNOWN"),
                         rng.choice(5, size=A, p=[0.65, 0.15, 0.07, 0.05, 0.08])),
            "edregtime": ts(self.edreg, self.via_ed), "edouttime": ts(self.admit, self.via_ed),
            "hospital_expire_flag": self.died.astype(np.int16),
        })
        self.put(f"{ICU}.icustays", {
            "subject_id": self.subject_id[self.s_pat], "hadm_id": self.hadm_id[self.s_adm], "stay_id": self.stay_id,
            "first_careunit": pick(ICU_UNITS, self.s_unit), "last_careunit": pick(ICU_UNITS, self.s_unit),
            "intime": ts(self.s_in), "outtime": ts(self.s_out),
            "los": (self.s_out - self.s_in) / DAY,
        })
        # transfers: ED, admit ward, ICU stays with ward time between and after, discharge
        surg = self.elective | (self.r(A) < 0.15)
        ward = rng.integers(0, len(WARDS), A)
        ev = Events()
        ed = np.flatnonzero(self.via_ed)
        ev.add(a=ed, type="ED", unit=pick(("Emergency Department",), np.zeros(len(ed), int)),
               tin=self.edreg[ed], tout=self.admit[ed])
        first_in = np.full(A, -1, dtype=np.int64)
        first_stay = np.r_[True, self.s_adm[1:] != self.s_adm[:-1]]
        first_in[self.s_adm[first_stay]] = self.s_in[first_stay]
        end_admit = np.where(first_in >= 0, first_in, self.disch)
        ev.add(a=np.arange(A), type="admit", unit=pick(WARDS, ward), tin=self.admit, tout=end_admit)
        ev.add(a=self.s_adm, type="transfer", unit=pick(ICU_UNITS, self.s_unit), tin=self.s_in, tout=self.s_out)
        nxt = np.r_[self.s_in[1:], 0]
        same_next = np.r_[self.s_adm[1:] == self.s_adm[:-1], False]
        ward_end = np.where(same_next, nxt, self.disch[self.s_adm])
        w = ward_end > self.s_out
        ev.add(a=self.s_adm[w], type="transfer", unit=pick(WARDS, ward[self.s_adm[w]]), tin=self.s_out[w],
               tout=ward_end[w])
        ev.add(a=np.arange(A), type="discharge", unit=pa.nulls(A, pa.string()), tin=self.disch,
               tout=np.zeros(A, dtype=np.int64), no_out=np.ones(A, dtype=bool))
        t = ev.table({"a": pa.int64(), "type": pa.string(), "unit": pa.string(), "tin": pa.int64(),
                      "tout": pa.int64(), "no_out": pa.bool_()})
        a = t["a"].to_numpy()
        order = np.lexsort((t["tin"].to_numpy(), a))
        t = t.take(pa.array(order))
        a = t["a"].to_numpy()
        no_out = t["no_out"].fill_null(False).to_numpy(zero_copy_only=False)
        self.put(f"{HOSP}.transfers", {
            "subject_id": self.subject_id[self.a_pat[a]], "hadm_id": self.hadm_id[a],
            "transfer_id": 31_000_001 + np.arange(len(a), dtype=np.int64) * 3,
            "eventtype": t["type"], "careunit": t["unit"], "intime": ts(t["tin"].to_numpy()),
            "outtime": ts(t["tout"].to_numpy(), ~no_out),
        })
        # services: one on admission, a second on ICU transfer for some
        svc = np.where(surg, rng.integers(0, len(SURG_SERVICES), A), rng.integers(0, len(MED_SERVICES), A))
        names = np.where(surg, svc, svc + len(SURG_SERVICES))
        all_services = SURG_SERVICES + MED_SERVICES
        self.surgical = surg
        second = first_in >= 0
        second &= self.r(A) < 0.15
        s2 = rng.integers(0, len(all_services), A)
        self.put(f"{HOSP}.services", {
            "subject_id": self.subject_id[self.a_pat], "hadm_id": self.hadm_id, "transfertime": ts(self.admit),
            "prev_service": pa.nulls(A, pa.string()), "curr_service": pick(all_services, names)})
        idx = np.flatnonzero(second)
        self.put(f"{HOSP}.services", {
            "subject_id": self.subject_id[self.a_pat[idx]], "hadm_id": self.hadm_id[idx],
            "transfertime": ts(first_in[idx]), "prev_service": pick(all_services, names[idx]),
            "curr_service": pick(all_services, s2[idx])})

    # -- chart events -------------------------------------------------------------------
    def chart(self, ev: Events) -> None:
        t = ev.table({"g": pa.int64(), "t": pa.int64(), "itemid": pa.int32(), "valuenum": pa.float64(),
                      "value": pa.string()})
        if t.num_rows == 0:
            return
        t = pa.concat_tables([t, t.filter(pa.array(self.quirk(t.num_rows, 0.5)))])  # duplicate charting
        g = t["g"].to_numpy()
        tt = t["t"].to_numpy()
        n = len(g)
        data = pa.table({
            "subject_id": self.subject_id[self.s_pat[g]], "hadm_id": self.hadm_id[self.s_adm[g]],
            "stay_id": self.stay_id[g], "caregiver_id": self.caregivers(n),
            "charttime": ts(tt), "storetime": ts(tt + self.rng.integers(1, 40, n) * MINUTE),
            "itemid": t["itemid"], "value": t["value"], "valuenum": t["valuenum"],
            "warning": np.zeros(n, dtype=np.int16),
        })
        self.put(f"{ICU}.chartevents", data, select=(
            "s.* EXCLUDE (value), COALESCE(s.value, CASE WHEN s.valuenum = round(s.valuenum) AND abs(s.valuenum) < 1e12 "
            "THEN CAST(CAST(s.valuenum AS BIGINT) AS VARCHAR) ELSE CAST(s.valuenum AS VARCHAR) END) AS value, "
            "CASE WHEN s.valuenum IS NULL THEN NULL ELSE d.unitname END AS valueuom"),
            joins=f"LEFT JOIN {ICU}.d_items AS d USING (itemid)")

    def wave(self, g: np.ndarray, hours: np.ndarray, amp: float, period: float) -> np.ndarray:
        phase = self.stay_phase[g]
        return amp * np.sin(2 * np.pi * hours / period + phase)

    def vitals(self) -> None:
        rng, S = self.rng, self.S
        self.stay_phase = self.u(0, 2 * np.pi, S)
        end = np.where(self.late, self.s_out + 2 * HOUR, self.s_out)
        g, k, t = grid(ceil_hour(self.s_in), end, HOUR)
        n = len(g)
        hours = (t - self.s_in[g]) / HOUR
        ev = Events()
        hr_base = rng.normal(84, 12, S) + 8 * self.sepsis + 6 * self.pressor
        hr = np.clip(np.round(hr_base[g] + self.wave(g, hours, 6, 24) + rng.normal(0, 4, n)), 30, 190)
        hr = np.where(self.quirk(n, 0.05), 999999.0, hr)
        keep = ~self.no_hr[g]
        ev.add(g=g[keep], t=t[keep], itemid=220045, valuenum=hr[keep])
        rr_base = rng.normal(18.5, 3, S) + 2 * self.sev
        rr = np.clip(np.round(rr_base[g] + self.wave(g, hours, 2, 12) + rng.normal(0, 2.5, n)), 6, 50)
        ev.add(g=g, t=t, itemid=220210, valuenum=rr)
        spo2 = np.clip(np.round(100 - rng.gamma(1.6, 1.6, n)), 80, 100)
        ev.add(g=g, t=t, itemid=220277, valuenum=spo2)
        sbp_base = rng.normal(118, 14, S) - 8 * self.pressor
        sbp = np.clip(sbp_base[g] + self.wave(g, hours, 8, 24) + rng.normal(0, 8, n), 60, 220)
        dbp = np.clip(sbp * 0.54 + rng.normal(0, 6, n), 25, 130)
        mbp = (sbp + 2 * dbp) / 3
        nbp = ~self.artline[g] | (k % 4 == 0)
        for item, v in ((220179, sbp), (220180, dbp), (220181, mbp)):
            ev.add(g=g[nbp], t=t[nbp], itemid=item, valuenum=np.round(v[nbp]))
        art = self.artline[g]
        for item, v in ((220050, sbp - 2), (220051, dbp * 0.95), (220052, mbp + 1)):
            ev.add(g=g[art], t=t[art], itemid=item, valuenum=np.round(v[art]))
        # temperature every 4 h: mostly °F, some °C, a few both; quirks: °C typed into °F, 999999
        tsel = k % 4 == 0
        tg, tt, th = g[tsel], t[tsel], hours[tsel]
        m = len(tg)
        fever = self.sepsis[tg] * 1.3 * np.clip(np.sin(2 * np.pi * th / 30 + self.stay_phase[tg]), 0, None)
        temp_c = np.round(np.clip(36.8 + rng.normal(0, 0.25, S)[tg] + fever + rng.normal(0, 0.3, m), 33, 41.5), 1)
        temp_f = np.round(temp_c * 1.8 + 32, 1)
        unit = self.r(m)
        as_f = unit < 0.8
        as_c = (unit >= 0.8) | (unit < 0.05)
        wrong = self.quirk(m, 0.5)
        temp_f = np.where(wrong, temp_c, temp_f)
        temp_f = np.where(self.quirk(m, 0.1), 999999.0, temp_f)
        ev.add(g=tg[as_f], t=tt[as_f], itemid=223761, valuenum=temp_f[as_f])
        ev.add(g=tg[as_c], t=tt[as_c], itemid=223762, valuenum=temp_c[as_c])
        ev.add(g=tg, t=tt, itemid=224642, value=pick(TEMP_SITES, rng.choice(5, size=m, p=[0.6, 0.15, 0.1, 0.05, 0.1])))
        # fingerstick glucose every 6 h
        gsel = k % 6 == 3
        gg = g[gsel]
        glucose = np.round(rng.lognormal(np.log(140), 0.3, len(gg)) + 35 * self.diabetic_p[self.s_pat[gg]])
        ev.add(g=gg, t=t[gsel], itemid=225664, valuenum=glucose)
        self.chart(ev)

    def gcs(self) -> None:
        rng, S = self.rng, self.S
        step = rng.choice([1, 2, 3, 4], size=S, p=[0.1, 0.25, 0.3, 0.35]) * HOUR
        g, _, t = grid(ceil_hour(self.s_in) + 15 * MINUTE, self.s_out, step)
        n = len(g)
        vented = self.in_vent(g, t)
        normal = self.r(n) < (0.9 - 0.6 * self.sev[g])
        eyes = np.where(normal, 4, rng.choice([1, 2, 3, 4], size=n, p=[0.15, 0.2, 0.35, 0.3]))
        verbal = np.where(normal, 5, rng.choice([1, 2, 3, 4, 5], size=n, p=[0.1, 0.1, 0.15, 0.45, 0.2]))
        motor = np.where(normal, 6, rng.choice([1, 3, 4, 5, 6], size=n, p=[0.05, 0.05, 0.15, 0.25, 0.5]))
        eyes = np.where(vented, rng.choice([1, 2, 3, 4], size=n, p=[0.35, 0.25, 0.2, 0.2]), eyes)
        motor = np.where(vented, rng.choice([1, 3, 4, 5, 6], size=n, p=[0.15, 0.1, 0.15, 0.2, 0.4]), motor)
        verbal_text = pick(VERBAL + ("No Response-ETT",), np.where(vented, 6, verbal))
        verbal_num = np.where(vented, 1, verbal).astype(float)
        ev = Events()
        ev.add(g=g, t=t, itemid=220739, valuenum=eyes.astype(float), value=pick(EYES, eyes))
        has_verbal = vented | ~self.quirk(n, 3)
        ev.add(g=g[has_verbal], t=t[has_verbal], itemid=223900, valuenum=verbal_num[has_verbal],
               value=verbal_text.filter(pa.array(has_verbal)))
        ev.add(g=g, t=t, itemid=223901, valuenum=motor.astype(float), value=pick(MOTOR, motor))
        self.chart(ev)

    def respiratory(self) -> None:
        rng, S = self.rng, self.S
        ev = Events()
        vstep = rng.choice([1, 2, 4], size=S, p=[0.3, 0.4, 0.3]) * HOUR
        vidx = np.flatnonzero(self.vent)
        g0, k, t = grid(self.vs[vidx], self.ve[vidx] + 1, vstep[vidx])
        g = vidx[g0]
        keep = self.in_vent(g, t)
        g, k, t = g[keep], k[keep], t[keep]
        n = len(g)
        frac = (t - self.vs[g]) / np.maximum(self.ve[g] - self.vs[g], 1)
        hamilton = (self.r(S) < 0.15)[g]
        mode = np.where(frac > 0.8, 4, rng.integers(0, 4, S)[g])
        ev.add(g=g[~hamilton], t=t[~hamilton], itemid=223849, value=pick(VENT_MODES, mode[~hamilton]))
        ev.add(g=g[hamilton], t=t[hamilton], itemid=229314,
               value=pick(HAMILTON_MODES, rng.integers(0, 4, S)[g][hamilton]))
        fio2_base = rng.choice([40, 50, 60, 80], size=S, p=[0.4, 0.3, 0.2, 0.1])
        fio2 = np.clip(np.round((fio2_base[g] - 15 * frac + rng.normal(0, 6, n)) / 5) * 5, 30, 100)
        fio2 = np.where(self.quirk(n, 2), fio2 / 100, fio2)  # charted as a fraction
        self.fio2_base = fio2_base
        ev.add(g=g, t=t, itemid=223835, valuenum=fio2)
        peep = rng.choice([5.0, 5.0, 5.0, 8.0, 10.0, 12.0, 14.0], size=S)
        ev.add(g=g, t=t, itemid=220339, valuenum=peep[g])
        tv = np.round(rng.normal(460, 70, n))
        rr_total = np.clip(np.round(rng.normal(20, 4, n)), 8, 40)
        ev.add(g=g, t=t, itemid=224685, valuenum=tv)
        ev.add(g=g, t=t, itemid=224690, valuenum=rr_total)
        ev.add(g=g, t=t, itemid=224687, valuenum=np.round(tv * rr_total / 1000, 1))
        ev.add(g=g, t=t, itemid=224695, valuenum=np.round(rng.normal(20, 5, n)))
        ev.add(g=g, t=t, itemid=224689, valuenum=np.clip(np.round(rng.normal(3, 4, n)), 0, 30))
        dev = k % 2 == 0
        trach = self.trach[g] & (t > self.vs[g] + 72 * HOUR)
        ett = dev & ~trach
        ev.add(g=g[ett], t=t[ett], itemid=226732, value=pick(("Endotracheal tube",), np.zeros(ett.sum(), int)))
        ev.add(g=g[trach], t=t[trach], itemid=226732, value=pick(("Tracheostomy tube",), np.zeros(trach.sum(), int)))
        ev.add(g=g[trach], t=t[trach], itemid=223834, valuenum=np.full(trach.sum(), 10.0))

        # after extubation: high-flow for some, then nasal cannula
        post = vidx[~self.trach[vidx]]
        hf = self.r(len(post)) < 0.25
        p_start = self.ve[post] + 15 * MINUTE
        hf_end = np.where(hf, p_start + self.u(4, 12, len(post)) * HOUR, p_start)
        nc_end = np.minimum(hf_end + self.u(12, 48, len(post)) * HOUR, self.s_out[post])
        self._o2(ev, post, p_start, np.minimum(hf_end, self.s_out[post]), 2 * HOUR, "High flow nasal cannula", 40, 60)
        self._o2(ev, post, hf_end, nc_end, 4 * HOUR, "Nasal cannula", 2, 4)
        # never intubated: nasal cannula for many, BiPAP for some, device 'None' rows for others
        other = np.flatnonzero(~self.vent)
        m = len(other)
        use = self.r(m)
        nc = other[use < 0.45]
        st = self.s_in[nc] + self.u(0, 12, len(nc)) * HOUR
        self._o2(ev, nc, st, np.minimum(st + self.u(6, 48, len(nc)) * HOUR, self.s_out[nc]), 4 * HOUR,
                 "Nasal cannula", 2, 4)
        bipap = other[(use >= 0.45) & (use < 0.53)]
        st = self.s_in[bipap] + self.u(0, 8, len(bipap)) * HOUR
        self._o2(ev, bipap, st, np.minimum(st + self.u(4, 16, len(bipap)) * HOUR, self.s_out[bipap]), HOUR,
                 "Bipap mask ", 8, 15, flow_item=227582)
        none = other[(use >= 0.53) & (use < 0.7)]
        st = self.minutes(self.s_in[none] + self.u(1, 6, len(none)) * HOUR)
        ev.add(g=none, t=st, itemid=226732, value=pick(("None",), np.zeros(len(none), int)))
        self.chart(ev)

    def _o2(self, ev: Events, stays: np.ndarray, start: np.ndarray, end: np.ndarray, step: int, device: str,
            lo: float, hi: float, flow_item: int = 223834) -> None:
        g0, _, t = grid(self.minutes(start), end, step)
        g = stays[g0]
        n = len(g)
        ev.add(g=g, t=t, itemid=226732, value=pick((device,), np.zeros(n, int)))
        with_flow = ~(self.r(n) < 0.1)  # device-only rows: dropped by the public O2 convention
        flow = np.round(self.u(lo, hi, n))
        ev.add(g=g[with_flow], t=t[with_flow], itemid=flow_item, valuenum=flow[with_flow])
        if device == "High flow nasal cannula":
            ev.add(g=g, t=t, itemid=223835, valuenum=np.round(self.u(40, 80, n) / 5) * 5)
            second = self.r(n) < 0.15  # a second device charted in the same minute
            ev.add(g=g[second], t=t[second], itemid=226732, value=pick(("Nasal cannula",), np.zeros(second.sum(), int)))

    def crrt_and_body(self) -> None:
        rng, S = self.rng, self.S
        ev = Events()
        idx = np.flatnonzero(self.crrt)
        g0, k, t = grid(self.cs[idx], self.ce[idx], HOUR)
        g = idx[g0]
        n = len(g)
        for item, lo, hi, rnd in ((224144, 150, 250, 10), (224154, 800, 1200, 100), (224153, 1000, 1500, 100),
                                  (224191, 0, 150, 10), (224149, -150, -50, 5), (224150, 100, 250, 5),
                                  (224151, 50, 150, 5), (224152, 80, 150, 5)):
            ev.add(g=g, t=t, itemid=item, valuenum=np.round(self.u(lo, hi, n) / rnd) * rnd)
        q = k % 4 == 0
        mode = rng.choice(3, size=S, p=[0.7, 0.2, 0.1])[g[q]]
        ev.add(g=g[q], t=t[q], itemid=227290, value=pick(("CVVHDF", "CVVHD", "CVVH"), mode))
        ev.add(g=g[q], t=t[q], itemid=224146, value=pick(("Active",), np.zeros(q.sum(), int)))
        ev.add(g=g[q], t=t[q], itemid=225183, valuenum=np.round(self.u(0, 150, q.sum()) / 10) * 10)
        # weights: admission weight once, daily weights for half the stays; heights
        aw = self.minutes(self.s_in + self.u(20, 120, S) * MINUTE)
        ev.add(g=np.arange(S), t=aw, itemid=226512, valuenum=self.weight)
        daily = np.flatnonzero((self.r(S) < 0.5) & ~self.threshold)
        g0, _, t = grid(floor_day(self.s_in[daily]) + DAY + 4 * HOUR, self.s_out[daily], DAY)
        g = daily[g0]
        ev.add(g=g, t=t, itemid=224639, valuenum=np.round(self.weight[g] * (1 + rng.normal(0, 0.015, len(g))), 1))
        h = self.r(S)
        hcm = np.flatnonzero(h < 0.6)
        ev.add(g=hcm, t=self.minutes(self.s_in[hcm] + self.u(30, 180, len(hcm)) * MINUTE), itemid=226730,
               valuenum=self.height_p[self.s_pat[hcm]])
        hin = np.flatnonzero((h >= 0.6) & (h < 0.75))
        ev.add(g=hin, t=self.minutes(self.s_in[hin] + self.u(30, 180, len(hin)) * MINUTE), itemid=226707,
               valuenum=np.round(self.height_p[self.s_pat[hin]] / 2.54))
        self.chart(ev)

    # -- icu: inputs, outputs, procedures -----------------------------------------------
    def infusions(self) -> None:
        rng, S = self.rng, self.S
        ev = Events()
        pressor = self.pressor
        choice = self.r(S)
        nore = pressor & (choice < 0.88)
        phen_only = pressor & (choice >= 0.88) & (choice < 0.96)
        vaso_only = pressor & (choice >= 0.96)
        plan = {
            "norepinephrine": nore,
            "vasopressin": (nore & (self.r(S) < 0.3)) | vaso_only,
            "phenylephrine": (nore & (self.r(S) < 0.2)) | phen_only,
            "epinephrine": nore & (self.r(S) < 0.1),
            "dopamine": pressor & (self.r(S) < 0.12),
            "dobutamine": (pressor & (self.r(S) < 0.08)) | (~pressor & (self.r(S) < 0.03)),
            "milrinone": (pressor & (self.r(S) < 0.04)) | (~pressor & (self.r(S) < 0.01)),
            "angiotensin_ii": nore & (self.r(S) < 0.04),
        }
        first = self.minutes(self.s_in + self.u(0.2, 24, S) * HOUR)
        order_base = 1_000_000
        for name, on in plan.items():
            itemid, rate_uom, amount_uom, ladder = PRESSORS[name]
            idx = np.flatnonzero(on & (first < self.s_out - 2 * HOUR))
            if len(idx) == 0:
                continue
            nseg = rng.integers(1, 13, len(idx))
            gi, pos = expand(nseg)
            g = idx[gi]
            m = len(g)
            dur = np.round(self.u(0.5, 6, m) * 60) * MINUTE
            pause = np.where((pos > 0) & (self.r(m) < 0.1), self.u(15, 60, m).astype(np.int64) * MINUTE, 0)
            offset = first[g] + (self.u(0, 4, len(idx)) * HOUR).astype(np.int64)[gi] // MINUTE * MINUTE
            steps = dur + pause
            cum = np.cumsum(steps) - steps
            cum -= np.repeat(cum[np.flatnonzero(pos == 0)], nseg)
            start = offset + cum + pause
            end = start + dur
            ok = end <= self.s_out[g]
            level0 = rng.integers(0, max(2, len(ladder) // 2), len(idx))
            walk = np.where(pos == 0, 0, rng.choice([-1, 0, 1], size=m, p=[0.3, 0.3, 0.4]))
            level = np.clip(level0[gi] + group_cumsum(walk, gi), 0, len(ladder) - 1)
            rate = np.asarray(ladder)[level]
            weight = self.weight[g]
            minutes = dur / MINUTE
            uom = np.full(m, rate_uom, dtype=object)
            if name == "vasopressin":
                amount = rate * minutes / 60
                per_min = self.quirk(m, 2)
                rate = np.where(per_min, rate / 60, rate)
                uom[per_min] = "units/min"
            elif name == "angiotensin_ii":
                amount = rate * weight * minutes / 1e6
            else:
                amount = rate * weight * minutes / 1000
            if name == "phenylephrine":
                per_min = self.r(m) < 0.05
                rate = np.where(per_min, rate * weight, rate)
                uom[per_min] = "mcg/min"
            last = np.r_[gi[1:] != gi[:-1], True]
            ev.add(g=g[ok], start=start[ok], end=end[ok], itemid=itemid, amount=np.round(amount, 4)[ok],
                   amountuom=amount_uom, rate=rate[ok], rateuom=pa.array(uom[ok], pa.string()),
                   link=(order_base + gi)[ok], weight=weight[ok],
                   status=pick(("ChangeDose/Rate", "FinishedRunning"), last[ok].astype(int)),
                   category="01-Drips", description="Continuous Med")
            order_base += 1_000_000
        # CRRT additives
        idx = np.flatnonzero(self.crrt)
        g0, _, t = grid(self.cs[idx], self.ce[idx] - HOUR, 12 * HOUR)
        g = idx[g0]
        for itemid, amount, unit in ((227536, 4.0, "mEq."), (227525, 2.0, "grams")):
            ev.add(g=g, start=t, end=t + HOUR, itemid=itemid, amount=np.full(len(g), amount), amountuom=unit,
                   link=order_base + np.arange(len(g)), weight=self.weight[g], status="FinishedRunning",
                   category="02-Fluids (Crystalloids)", description="Continuous IV")
            order_base += 1_000_000
        t = ev.table({"g": pa.int64(), "start": pa.int64(), "end": pa.int64(), "itemid": pa.int32(),
                      "amount": pa.float64(), "amountuom": pa.string(), "rate": pa.float64(), "rateuom": pa.string(),
                      "link": pa.int64(), "weight": pa.float64(), "status": pa.string(), "category": pa.string(),
                      "description": pa.string()})
        g = t["g"].to_numpy()
        n = len(g)
        start = t["start"].to_numpy()
        self.put(f"{ICU}.inputevents", {
            "subject_id": self.subject_id[self.s_pat[g]], "hadm_id": self.hadm_id[self.s_adm[g]],
            "stay_id": self.stay_id[g], "caregiver_id": self.caregivers(n),
            "starttime": ts(start), "endtime": ts(t["end"].to_numpy()),
            "storetime": ts(start + self.rng.integers(1, 60, n) * MINUTE), "itemid": t["itemid"],
            "amount": t["amount"], "amountuom": t["amountuom"], "rate": t["rate"], "rateuom": t["rateuom"],
            "orderid": 9_000_000 + np.arange(n), "linkorderid": t["link"], "ordercategoryname": t["category"],
            "ordercomponenttypedescription": pa.array(np.full(n, "Main order parameter")),
            "ordercategorydescription": t["description"], "patientweight": t["weight"],
            "isopenbag": np.zeros(n, np.int16), "continueinnextdept": np.zeros(n, np.int16),
            "statusdescription": t["status"], "originalamount": t["amount"], "originalrate": t["rate"],
        })

    def outputs(self) -> None:
        rng, S = self.rng, self.S
        end = np.where(self.late, self.s_out + 2 * HOUR, self.s_out)
        foley = self.vent | self.pressor | self.threshold | (self.r(S) < 0.7)
        base_rate = np.where(self.threshold, 1.0, np.clip(rng.lognormal(np.log(1.0), 0.35, S), 0.3, 4))
        ev = Events()
        fidx = np.flatnonzero(foley)
        g0, _, t = grid(ceil_hour(self.s_in[fidx]) + HOUR, end[fidx], HOUR)
        g = fidx[g0]
        rate = self._uo_rate(g, t, base_rate)
        value = np.round(rate * self.weight[g] / 5) * 5
        # threshold stays (80 kg): 40 mL/h for 8 h is exactly 0.5 mL/kg/h; 24 mL/h for 26 h exactly 0.3
        since = t - self.s_in[g]
        half = self.threshold_half[g]
        value = np.where(self.threshold[g] & half & (since >= 8 * HOUR) & (since < 16 * HOUR), 40.0, value)
        value = np.where(self.threshold[g] & ~half & (since >= 8 * HOUR) & (since < 34 * HOUR), 24.0, value)
        irrigant = (self.r(S) < 0.03)[g] & ~self.threshold[g]
        flush = np.round(self.u(100, 300, len(g)) / 10) * 10
        ev.add(g=g[~irrigant], t=t[~irrigant], itemid=226559, value=value[~irrigant])
        ev.add(g=g[irrigant], t=t[irrigant], itemid=227489, value=(value + flush)[irrigant])
        ev.add(g=g[irrigant], t=t[irrigant], itemid=227488, value=flush[irrigant])
        vidx = np.flatnonzero(~foley)
        step = rng.integers(4, 7, len(vidx)) * HOUR
        g0, _, t = grid(self.minutes(self.s_in[vidx] + self.u(1, 4, len(vidx)) * HOUR), end[vidx], step)
        g = vidx[g0]
        rate = self._uo_rate(g, t, base_rate)
        ev.add(g=g, t=t, itemid=226560, value=np.round(rate * self.weight[g] * step[g0] / HOUR / 5) * 5)
        t = ev.table({"g": pa.int64(), "t": pa.int64(), "itemid": pa.int32(), "value": pa.float64()})
        dup = self.quirk(t.num_rows)
        t = pa.concat_tables([t, t.filter(pa.array(dup))])
        g = t["g"].to_numpy()
        tt = t["t"].to_numpy()
        n = len(g)
        self.put(f"{ICU}.outputevents", {
            "subject_id": self.subject_id[self.s_pat[g]], "hadm_id": self.hadm_id[self.s_adm[g]],
            "stay_id": self.stay_id[g], "caregiver_id": self.caregivers(n), "charttime": ts(tt),
            "storetime": ts(tt + 5 * MINUTE), "itemid": t["itemid"], "value": t["value"],
            "valueuom": pa.array(np.full(n, "mL"))})

    def _uo_rate(self, g: np.ndarray, t: np.ndarray, base: np.ndarray) -> np.ndarray:
        rate = base[g] * np.exp(self.rng.normal(0, 0.3, len(g)))
        low = self.aki[g] & (t >= self.low_start[g]) & (t < self.low_start[g] + self.low_len[g])
        low_rate = (self.rng.uniform(0.05, 0.45, self.S))[g]
        rate = np.where(low, low_rate, rate)
        return np.where(self.crrt[g] & (t >= self.cs[g]), 0.05, rate)

    def procedures(self) -> None:
        rng, S = self.rng, self.S
        ev = Events()
        v = np.flatnonzero(self.vent)
        ev.add(g=v, start=self.vs[v], end=self.ve[v], itemid=225792, value=(self.ve[v] - self.vs[v]) / MINUTE,
               uom="min", category="Ventilation")
        ev.add(g=v, start=self.vs[v], end=self.vs[v] + MINUTE, itemid=224385, value=np.ones(len(v)), uom="None",
               category="Procedures")
        c = np.flatnonzero(self.crrt)
        ev.add(g=c, start=self.cs[c], end=self.ce[c], itemid=225802, value=(self.ce[c] - self.cs[c]) / MINUTE,
               uom="min", category="Dialysis")
        cath_end = np.minimum(self.ce[c] + 2 * HOUR, self.s_out[c])
        ev.add(g=c, start=self.cs[c] - HOUR, end=cath_end, itemid=224270,
               value=(cath_end - self.cs[c] + HOUR) / MINUTE, uom="min", category="Invasive Lines")
        a = np.flatnonzero(self.artline)
        a_start = self.minutes(self.s_in[a] + self.u(10, 90, len(a)) * MINUTE)
        a_end = self.minutes(self.s_out[a] - self.u(10, 60, len(a)) * MINUTE)
        ok = a_end > a_start
        ev.add(g=a[ok], start=a_start[ok], end=a_end[ok], itemid=225752, value=((a_end - a_start) / MINUTE)[ok],
               uom="min", category="Invasive Lines")
        t = ev.table({"g": pa.int64(), "start": pa.int64(), "end": pa.int64(), "itemid": pa.int32(),
                      "value": pa.float64(), "uom": pa.string(), "category": pa.string()})
        g = t["g"].to_numpy()
        n = len(g)
        start = t["start"].to_numpy()
        self.put(f"{ICU}.procedureevents", {
            "subject_id": self.subject_id[self.s_pat[g]], "hadm_id": self.hadm_id[self.s_adm[g]],
            "stay_id": self.stay_id[g], "caregiver_id": self.caregivers(n), "starttime": ts(start),
            "endtime": ts(t["end"].to_numpy()), "storetime": ts(t["end"].to_numpy() + 10 * MINUTE),
            "itemid": t["itemid"], "value": t["value"], "valueuom": t["uom"],
            "orderid": 7_000_000 + np.arange(n), "linkorderid": 7_000_000 + np.arange(n),
            "ordercategoryname": t["category"], "ordercategorydescription": pa.array(np.full(n, "Task")),
            "patientweight": self.weight[g], "isopenbag": np.zeros(n, np.int16),
            "continueinnextdept": np.zeros(n, np.int16), "statusdescription": pa.array(np.full(n, "FinishedRunning")),
        })
        # datetimeevents: peripheral IV insertion date, charted on arrival
        ins = self.minutes(self.s_in - self.u(0, 48, S) * HOUR)
        chart = self.minutes(self.s_in + self.u(10, 120, S) * MINUTE)
        self.put(f"{ICU}.datetimeevents", {
            "subject_id": self.subject_id[self.s_pat], "hadm_id": self.hadm_id[self.s_adm],
            "stay_id": self.stay_id, "caregiver_id": self.caregivers(S), "charttime": ts(chart),
            "storetime": ts(chart + 5 * MINUTE), "itemid": np.full(S, 225755, np.int32), "value": ts(ins),
            "valueuom": pa.array(np.full(S, "Date and Time")), "warning": np.zeros(S, np.int16)})

    # -- hosp: labs, micro, medication, codes -------------------------------------------
    def labs(self) -> None:
        rng, A, n = self.rng, len(self.a_pat), self.n
        # draws: admission, every morning, afternoon extras in the ICU for sick stays, outpatient
        adm_draw = np.where(self.via_ed, self.edreg + HOUR, self.admit + HOUR)
        morning0 = floor_day(self.admit) + DAY + 4 * HOUR
        ga, _, tm = grid(morning0, self.disch, DAY)
        sick = np.flatnonzero(self.aki | self.sepsis | self.vent | self.liver | self.crrt)
        aft = floor_day(self.s_in[sick]) + 16 * HOUR
        aft = np.where(aft < self.s_in[sick], aft + DAY, aft)
        gs, _, ts_ = grid(aft, self.s_out[sick], DAY)
        outp = np.flatnonzero(self.r(n) < 0.4)
        k_out = rng.integers(1, 4, len(outp))
        go, _ = expand(k_out)
        first_adm = self.first_admit()
        t_out = first_adm[outp[go]] - (self.u(10, 400, len(go)) * DAY).astype(np.int64)
        week = np.flatnonzero(self.r(n) < 0.12)
        t_week = first_adm[week] - (self.u(1, 6.5, len(week)) * DAY).astype(np.int64)
        d_adm = np.r_[np.arange(A), ga, self.s_adm[sick[gs]], np.full(len(go) + len(week), -1)]
        d_pat = np.r_[self.a_pat, self.a_pat[ga], self.s_pat[sick[gs]], outp[go], week]
        d_t = self.minutes(np.r_[adm_draw, tm + rng.integers(0, 90, len(ga)) * MINUTE,
                                 ts_ + rng.integers(0, 60, len(gs)) * MINUTE, t_out, t_week])
        inside = (d_adm < 0) | (d_t <= self.disch[np.maximum(d_adm, 0)])
        d_adm, d_pat, d_t = d_adm[inside], d_pat[inside], d_t[inside]
        D = len(d_t)
        # latent per admission: the first ICU stay's course drives the trajectories
        first_stay = np.full(A, -1)
        fs = np.r_[True, self.s_adm[1:] != self.s_adm[:-1]]
        first_stay[self.s_adm[fs]] = np.flatnonzero(fs)
        st = np.where(d_adm >= 0, first_stay[np.maximum(d_adm, 0)], -1)
        has = st >= 0
        sidx = np.maximum(st, 0)
        flag = lambda arr: has & arr[sidx]  # noqa: E731
        sepsis, aki, liver, crrt = flag(self.sepsis), flag(self.aki), self.liver_p[d_pat], flag(self.crrt)
        ckd = self.ckd_p[d_pat]
        male = self.male[d_pat]
        base_p = np.where(self.ckd_p, rng.uniform(1.5, 3.2, n), np.clip(rng.lognormal(np.log(0.85), 0.2, n), 0.4, 1.4))
        base_cr = np.where(self.male, base_p, base_p * 0.85)[d_pat]
        peak_t = self.s_in[sidx] + (self.u(12, 40, self.S)[sidx] * HOUR).astype(np.int64)
        ratio = rng.choice([1.5, 1.8, 2.2, 3.2], size=self.S, p=[0.35, 0.3, 0.2, 0.15])[sidx]
        dt = (d_t - peak_t) / HOUR
        bump = np.clip(np.where(dt < 0, 1 + dt / 30, 1 - dt / 72), 0, 1)
        amp = np.maximum(base_cr * (ratio - 1), 0.4)
        creat = base_cr * np.exp(rng.normal(0, 0.04, D)) + np.where(aki, amp * bump, 0)
        creat = np.where(crrt & (d_t > self.cs[sidx]), creat * 0.7, creat)
        values: dict[int, np.ndarray] = {}
        values[50912] = np.clip(creat, 0.2, 14)
        values[51006] = np.clip(19 * creat ** 0.8 * np.exp(rng.normal(0, 0.25, D)), 3, 180)
        na = rng.normal(139, 3.5, D) - 5 * liver
        values[50983] = na
        values[50971] = np.clip(rng.normal(4.1, 0.5, D) + 0.3 * aki, 2.5, 7)
        values[50902] = na - 37 + rng.normal(0, 3, D)
        hco3 = rng.normal(25, 3, D) - 4 * sepsis
        values[50882] = hco3
        values[50868] = na - values[50902] - hco3
        values[50931] = rng.lognormal(np.log(121), 0.3, D) + 30 * self.diabetic_p[d_pat]
        values[50893] = rng.normal(8.6, 0.5, D)
        values[50960] = rng.normal(2.0, 0.25, D)
        values[50970] = np.clip(rng.normal(3.5, 0.9, D) + 0.8 * aki, 1, 9)
        hct = np.clip(rng.normal(31, 5, D), 15, 55)
        values[51221] = hct
        values[51222] = hct / 3.05
        wbc = rng.lognormal(np.log(9.0), 0.35, D) * np.where(sepsis, 1.6, 1)
        values[51301] = wbc
        plt = rng.lognormal(np.log(200), 0.45, D) * np.where(liver, 0.45, 1) * np.where(sepsis, 0.75, 1)
        values[51265] = np.clip(plt, 5, 900)
        values[51279] = hct / 9.1
        values[51250] = rng.normal(91, 6, D)
        values[51248] = rng.normal(30, 2, D)
        values[51249] = rng.normal(32.6, 1, D)
        values[51277] = rng.normal(15.2, 1.8, D)
        inr = rng.lognormal(np.log(1.2), 0.15, D) * np.where(liver, 1.8, 1)
        values[51237] = inr
        values[51274] = 11.2 * inr
        values[51275] = rng.lognormal(np.log(33), 0.2, D)
        bili = rng.lognormal(np.log(0.55), 0.5, D) * np.where(liver, 6, 1)
        values[50885] = np.clip(bili, 0.1, 35)
        values[50861] = rng.lognormal(np.log(28), 0.6, D)
        values[50878] = rng.lognormal(np.log(37), 0.6, D)
        values[50863] = rng.lognormal(np.log(95), 0.4, D)
        values[50862] = np.clip(rng.normal(3.4, 0.6, D) - 0.4 * liver, 1.2, 5.2)
        neut = np.clip(rng.normal(68, 12, D) + 8 * sepsis, 20, 95)
        values[51256] = neut
        values[51244] = np.clip((100 - neut) * 0.7, 1, 60)
        values[51254] = np.clip((100 - neut) * 0.22, 0.5, 20)
        values[51200] = np.clip(rng.gamma(1.2, 1, D), 0, 10)
        values[51146] = np.clip(rng.gamma(1, 0.3, D), 0, 2)
        values[51144] = np.clip(np.round(rng.gamma(0.6, 4, D) * np.where(sepsis, 2, 1)), 0, 40)
        outpatient = d_adm < 0
        panels = (
            (CHEM, np.ones(D, bool)), (LYTES, ~outpatient & (self.r(D) < 0.8)),
            (CBC, ~outpatient & (self.r(D) < 0.9)), (COAG, ~outpatient & ((self.r(D) < 0.5) | liver)),
            (LFT, (~outpatient & ((self.r(D) < 0.35) | liver)) | (np.arange(D) < A)),
            (DIFF, ~outpatient & (self.r(D) < 0.3)),
        )
        ev = Events()
        for p, (items, on) in enumerate(panels):
            idx = np.flatnonzero(on)
            specimen = 40_000_000 + idx * 8 + p
            for item in items:
                if item == 51144:
                    keep = self.r(len(idx)) < 0.4
                    i2 = idx[keep]
                    ev.add(d=i2, itemid=item, valuenum=values[item][i2], specimen=specimen[keep])
                elif item == 50862:
                    keep = self.r(len(idx)) < 0.6
                    i2 = idx[keep]
                    ev.add(d=i2, itemid=item, valuenum=values[item][i2], specimen=specimen[keep])
                else:
                    ev.add(d=idx, itemid=item, valuenum=values[item][idx], specimen=specimen)
        self._lab_rows(ev, d_pat, d_adm, d_t)
        self.blood_gases()

    def blood_gases(self) -> None:
        rng, S = self.rng, self.S
        v = np.flatnonzero(self.vent)
        g0, _, t = grid(self.vs[v] + HOUR, self.ve[v], 6 * HOUR)
        gv = v[g0]
        keep = self.in_vent(gv, t)
        gv, t = gv[keep], t[keep]
        once = np.flatnonzero(~self.vent & (self.r(S) < 0.5))
        g = np.r_[gv, once]
        t = self.minutes(np.r_[t, self.s_in[once] + self.u(1, 10, len(once)) * HOUR])
        n = len(g)
        vented = np.r_[np.ones(len(gv), bool), np.zeros(len(once), bool)]
        kind = np.where(self.r(n) < np.where(vented, 0.9, 0.6), 0, rng.choice([1, 2, 3], size=n, p=[0.8, 0.1, 0.1]))
        arterial = kind == 0
        fio2 = np.where(vented, getattr(self, "fio2_base", np.full(S, 50))[g], 21.0)
        pf = np.clip(rng.normal(260, 90, S)[g] + rng.normal(0, 40, n), 60, 500)
        po2 = np.where(arterial, np.where(vented, pf * fio2 / 100, rng.normal(85, 15, n)), rng.normal(40, 8, n))
        pco2 = np.clip(rng.normal(41, 7, n) + np.where(arterial, 0, 5), 20, 90)
        ph = np.clip(rng.normal(7.38, 0.06, n) - 0.05 * self.sepsis[g], 6.9, 7.6)
        lact = rng.lognormal(np.log(1.6), 0.45, n) * np.where(self.sepsis[g], 1.8, 1)
        ev = Events()
        spec = 80_000_000 + np.arange(n)
        d = np.arange(n)
        ev.add(d=d, itemid=52033, value=pick(("ART.", "VEN.", "MIX.", "CENTRAL"), kind), specimen=spec)
        ev.add(d=d, itemid=50820, valuenum=ph, specimen=spec)
        ev.add(d=d, itemid=50821, valuenum=np.round(np.clip(po2, 20, 600)), specimen=spec)
        ev.add(d=d, itemid=50818, valuenum=np.round(pco2), specimen=spec)
        ev.add(d=d, itemid=50802, valuenum=np.round(rng.normal(-0.5, 4, n) - 3 * self.sepsis[g]), specimen=spec)
        ev.add(d=d, itemid=50804, valuenum=np.round(rng.normal(25, 4, n)), specimen=spec)
        for item, share, values in ((50813, 0.7, lact), (50816, 0.4, fio2), (50822, 0.25, rng.normal(4.2, 0.5, n)),
                                    (50809, 0.25, rng.lognormal(np.log(130), 0.25, n)),
                                    (50808, 0.4, rng.normal(1.12, 0.07, n))):
            on = self.r(n) < share
            if item == 50816:
                on &= vented
            ev.add(d=d[on], itemid=item, valuenum=values[on], specimen=spec[on])
        self._lab_rows(ev, self.s_pat[g], self.s_adm[g], t)

    def _lab_rows(self, ev: Events, d_pat: np.ndarray, d_adm: np.ndarray, d_t: np.ndarray) -> None:
        t = ev.table({"d": pa.int64(), "itemid": pa.int32(), "valuenum": pa.float64(), "value": pa.string(),
                      "specimen": pa.int64()})
        d = t["d"].to_numpy()
        item = t["itemid"].to_numpy()
        vnum = t["valuenum"].to_numpy(zero_copy_only=False)
        n = len(d)
        dec = np.full(n, 0)
        for k, v in DECIMALS.items():
            dec[item == k] = v
        scale = 10.0 ** dec
        vnum = np.round(vnum * scale) / scale
        missing = self.quirk(n) & ~np.isnan(vnum)
        vnum = np.where(missing, np.nan, vnum)
        text = t["value"]
        text = pc.if_else(pa.array(missing), pa.scalar("___"), text)
        unit_items = np.array(sorted(LAB_UNITS))
        units = [LAB_UNITS[i] for i in unit_items]
        unit_idx = np.searchsorted(unit_items, item)
        known = (unit_idx < len(unit_items)) & (unit_items[np.minimum(unit_idx, len(unit_items) - 1)] == item)
        uom = pick(units + [None], np.where(known, unit_idx, len(units)))
        lower = np.full(n, np.nan)
        upper = np.full(n, np.nan)
        for k, (lo, hi) in LAB_REFERENCE.items():
            hit = item == k
            lower[hit], upper[hit] = lo, hi
        ranged = ~np.isnan(lower)
        abnormal = ranged & ~np.isnan(vnum) & ((vnum < lower) | (vnum > upper))
        adm = d_adm[d]
        tt = d_t[d]
        start = int(self.counts.get(f"{HOSP}.labevents", 0))
        data = pa.table({
            "labevent_id": start + 1 + np.arange(n), "subject_id": self.subject_id[d_pat[d]],
            "hadm_id": pa.array(self.hadm_id[np.maximum(adm, 0)], mask=adm < 0), "specimen_id": t["specimen"],
            "itemid": t["itemid"], "charttime": ts(tt), "storetime": ts(tt + self.rng.integers(30, 180, n) * MINUTE),
            "value": text, "valuenum": pa.array(vnum, mask=np.isnan(vnum)), "valueuom": uom,
            "ref_range_lower": pa.array(lower, mask=~ranged), "ref_range_upper": pa.array(upper, mask=~ranged),
            "flag": pick((None, "abnormal"), abnormal.astype(int)),
            "priority": pick(("ROUTINE", "STAT"), (self.r(n) < 0.3).astype(int)),
        })
        self.put(f"{HOSP}.labevents", data, select=(
            "s.* EXCLUDE (value), COALESCE(value, CASE WHEN valuenum = round(valuenum) "
            "THEN CAST(CAST(valuenum AS BIGINT) AS VARCHAR) ELSE CAST(valuenum AS VARCHAR) END) AS value"))

    def microbiology(self) -> None:
        rng, S = self.rng, self.S
        # cultures per ICU stay; sepsis stays get blood (+ urine, + sputum when intubated)
        sep = np.flatnonzero(self.sepsis)
        m = len(sep)
        tc = np.maximum(self.s_in[sep] + self.u(-4, 30, m) * HOUR, self.admit[self.s_adm[sep]] + 30 * MINUTE)
        tc = self.minutes(np.minimum(tc, self.s_out[sep] - HOUR))
        self.culture_time = np.zeros(S, dtype=np.int64)
        self.culture_time[sep] = tc
        parts: list[tuple[np.ndarray, int, np.ndarray]] = [(sep, 0, tc)]
        urine = self.r(m) < 0.6
        parts.append((sep[urine], 1, tc[urine] + self.minutes(self.u(0, 2, urine.sum()) * HOUR)))
        sput = self.vent[sep] & (self.r(m) < 0.5)
        parts.append((sep[sput], 2, tc[sput] + self.minutes(self.u(0, 6, sput.sum()) * HOUR)))
        other = np.flatnonzero(~self.sepsis)
        mrsa = other[self.r(len(other)) < 0.12]
        parts.append((mrsa, 3, self.minutes(self.s_in[mrsa] + self.u(0.5, 3, len(mrsa)) * HOUR)))
        uro = other[self.r(len(other)) < 0.08]
        parts.append((uro, 1, self.minutes(self.s_in[uro] + self.u(1, 20, len(uro)) * HOUR)))
        c_stay = [p[0] for p in parts]
        c_kind = [np.full(len(p[0]), p[1]) for p in parts]
        c_t = [p[2] for p in parts]
        s = np.concatenate(c_stay)
        kind = np.concatenate(c_kind)
        t = np.minimum(np.concatenate(c_t), self.disch[self.s_adm[s]] - MINUTE)
        n = len(s)
        positive = self.r(n) < np.array([c[4] for c in CULTURES])[kind]
        cancelled = ~positive & self.quirk(n, 3)
        date_only = self.r(n) < 0.06
        org = rng.integers(0, len(ORGANISMS), n)
        n_rows = np.where(positive, 1 + 4, 1)
        ci, pos = expand(n_rows)
        rows = len(ci)
        is_ab = positive[ci] & (pos > 0)
        ab = (pos - 1).clip(0) + rng.integers(0, 2, rows)
        chartdate = floor_day(t)
        self.put(f"{HOSP}.microbiologyevents", {
            "microevent_id": 1 + np.arange(rows), "subject_id": self.subject_id[self.s_pat[s[ci]]],
            "hadm_id": self.hadm_id[self.s_adm[s[ci]]], "micro_specimen_id": 50_000_000 + ci,
            "chartdate": ts(chartdate[ci]), "charttime": ts(t[ci], ~date_only[ci]),
            "spec_itemid": np.array([c[0] for c in CULTURES])[kind[ci]],
            "spec_type_desc": pick([c[1] for c in CULTURES], kind[ci]), "test_seq": np.ones(rows, np.int64),
            "storedate": ts(chartdate[ci] + 2 * DAY), "storetime": ts(t[ci] + 2 * DAY),
            "test_itemid": np.array([c[2] for c in CULTURES])[kind[ci]],
            "test_name": pick([c[3] for c in CULTURES], kind[ci]),
            "org_itemid": pa.array(np.array([o[0] for o in ORGANISMS])[org[ci]], mask=~positive[ci]),
            "org_name": pick([o[1] for o in ORGANISMS] + [None, "CANCELLED"],
                             np.where(positive[ci], org[ci], np.where(cancelled[ci], len(ORGANISMS) + 1,
                                                                      len(ORGANISMS)))),
            "isolate_num": pa.array(np.ones(rows, np.int16), mask=~positive[ci]),
            "ab_itemid": pa.array(np.array([a[0] for a in SUSCEPTIBILITY])[ab % len(SUSCEPTIBILITY)], mask=~is_ab),
            "ab_name": pa.array(np.array([a[1] for a in SUSCEPTIBILITY])[ab % len(SUSCEPTIBILITY)], mask=~is_ab),
            "interpretation": pa.array(np.where(self.r(rows) < 0.8, "S", "R"), mask=~is_ab),
        })

    def medications(self) -> None:
        rng, A = self.rng, len(self.a_pat)
        ev = Events()
        sep = np.flatnonzero(self.sepsis)
        m = len(sep)
        tc = self.culture_time[sep]
        when = self.r(m)
        ta = np.where(when < 0.7, tc + self.u(0.3, 6, m) * HOUR,
                      np.where(when < 0.9, tc - self.u(1, 20, m) * HOUR,
                               np.where(when < 0.95, tc, tc + self.u(30, 70, m) * HOUR)))
        ta = self.minutes(np.clip(ta, self.admit[self.s_adm[sep]], self.disch[self.s_adm[sep]] - HOUR))
        n_drugs = rng.integers(1, 4, m)
        gi, pos = expand(n_drugs)
        g = sep[gi]
        drug = rng.integers(0, len(SYSTEMIC_ANTIBIOTICS), len(g))
        start = self.minutes(ta[gi] + np.where(pos == 0, 0, self.u(0, 2, len(g)) * HOUR))
        stop = np.minimum(start + self.u(1, 7, len(g)) * DAY, self.disch[self.s_adm[g]])
        a = self.s_adm[g]
        ev.add(a=a, start=start, stop=self.minutes(stop), drug=pick([d[0] for d in SYSTEMIC_ANTIBIOTICS], drug),
               route=pick([d[1] for d in SYSTEMIC_ANTIBIOTICS], drug),
               per_day=np.array([d[2] for d in SYSTEMIC_ANTIBIOTICS])[drug], dtype="MAIN", abx=True)
        iv = np.array([d[1] == "IV" for d in SYSTEMIC_ANTIBIOTICS])[drug]
        ev.add(a=a[iv], start=start[iv], stop=self.minutes(stop)[iv],
               drug=pick(("Sodium Chloride 0.9%", "Iso-Osmotic Dextrose"), rng.integers(0, 2, iv.sum())),
               route="IV", dtype="BASE")
        # ward antibiotics, peri-operative cefazolin, and local products
        for name, route, share, chosen in (
            ("Levofloxacin", "PO/NG", 0.08, ~self.has_icu),
            ("CefazoLIN", "IV", 0.6, self.elective),
        ):
            idx = np.flatnonzero(chosen & (self.r(A) < share))
            st = self.minutes(self.admit[idx] + self.u(1, 24, len(idx)) * HOUR)
            sp = self.minutes(np.minimum(st + self.u(1, 3, len(idx)) * DAY, self.disch[idx]))
            ev.add(a=idx, start=st, stop=sp, drug=pick((name,), np.zeros(len(idx), int)), route=route,
                   per_day=2, dtype="MAIN", abx=True)
        for name, route, share in LOCAL_ANTIBIOTICS:
            idx = np.flatnonzero(self.r(A) < share)
            st = self.minutes(self.admit[idx] + self.u(1, 48, len(idx)) * HOUR)
            st = np.minimum(st, self.disch[idx] - HOUR)
            sp = self.minutes(np.minimum(st + self.u(1, 5, len(idx)) * DAY, self.disch[idx]))
            ev.add(a=idx, start=st, stop=sp, drug=pick((name,), np.zeros(len(idx), int)), route=route, dtype="MAIN")
        for name, route, share in COMMON_DRUGS:
            idx = np.flatnonzero(self.r(A) < share)
            st = self.minutes(self.admit[idx] + self.u(1, 6, len(idx)) * HOUR)
            ev.add(a=idx, start=st, stop=self.disch[idx], drug=pick((name,), np.zeros(len(idx), int)), route=route,
                   dtype="MAIN")
        t = ev.table({"a": pa.int64(), "start": pa.int64(), "stop": pa.int64(), "drug": pa.string(),
                      "route": pa.string(), "per_day": pa.int64(), "dtype": pa.string(), "abx": pa.bool_()})
        a = t["a"].to_numpy()
        n = len(a)
        subject = self.subject_id[self.a_pat[a]]
        pharmacy_id = 60_000_001 + np.arange(n)
        poe_id = pc.binary_join_element_wise(pa.array(subject).cast(pa.string()),
                                             pa.array(np.arange(1, n + 1)).cast(pa.string()), "-")
        start = t["start"].to_numpy()
        stop = t["stop"].to_numpy()
        self.put(f"{HOSP}.prescriptions", {
            "subject_id": subject, "hadm_id": self.hadm_id[a], "pharmacy_id": pharmacy_id, "poe_id": poe_id,
            "poe_seq": np.arange(1, n + 1), "starttime": ts(start), "stoptime": ts(stop), "drug_type": t["dtype"],
            "drug": t["drug"], "route": t["route"], "doses_per_24_hrs": t["per_day"].cast(pa.float64())})
        # eMAR: each dose of the systemic antibiotics
        abx = t["abx"].fill_null(False).to_numpy(zero_copy_only=False)
        idx = np.flatnonzero(abx)
        interval = (DAY // np.maximum(t["per_day"].fill_null(1).to_numpy()[idx], 1)).astype(np.int64)
        g0, _, tt = grid(start[idx], stop[idx], interval)
        r = idx[g0]
        k = len(r)
        emar_seq = np.arange(1, k + 1)
        emar_subject = pa.array(subject[r]).cast(pa.string())
        self.put(f"{HOSP}.emar", {
            "subject_id": subject[r], "hadm_id": self.hadm_id[a[r]],
            "emar_id": pc.binary_join_element_wise(emar_subject, pa.array(emar_seq).cast(pa.string()), "-"),
            "emar_seq": emar_seq, "poe_id": poe_id.take(pa.array(r)), "pharmacy_id": pharmacy_id[r],
            "charttime": ts(tt + rng.integers(0, 30, k) * MINUTE), "medication": t["drug"].take(pa.array(r)),
            "event_txt": pa.array(np.full(k, "Administered")), "scheduletime": ts(tt),
            "storetime": ts(tt + rng.integers(30, 60, k) * MINUTE)})

    def codes(self) -> None:
        rng, n, A = self.rng, self.n, len(self.a_pat)
        comps = list(icd.CHARLSON)
        has = np.zeros((n, len(comps)), dtype=bool)
        for j, name in enumerate(comps):
            share = icd.CHARLSON[name][0]
            has[:, j] = self.r(n) < share
            if n > len(comps):
                has[j, j] = True  # every component occurs at least once in any cohort of this size
        has[:, comps.index("renal_disease")] |= self.ckd_p
        liver = self.liver_p
        has[:, comps.index("mild_liver_disease")] |= liver & (self.r(n) < 0.6)
        has[:, comps.index("severe_liver_disease")] |= liver & (self.r(n) < 0.5)
        ten = self.a_year_icd10
        ev = Events()
        # acute conditions first (the principal diagnosis), from the first ICU stay's course
        first = np.r_[True, self.s_adm[1:] != self.s_adm[:-1]]
        fa = self.s_adm[first]
        f_s = np.flatnonzero(first)
        acute = {
            "sepsis": self.sepsis[f_s], "septic_shock": self.sepsis[f_s] & self.pressor[f_s],
            "severe_sepsis": self.sepsis[f_s] & ~self.pressor[f_s] & (self.r(len(f_s)) < 0.5),
            "resp_failure": self.vent[f_s], "pneumonia": self.vent[f_s] & self.sepsis[f_s],
            "aki": self.aki[f_s], "uti": self.sepsis[f_s] & (self.r(len(f_s)) < 0.3),
            "aspiration": self.vent[f_s] & (self.r(len(f_s)) < 0.1),
        }
        for order, (name, on) in enumerate(acute.items()):
            a = fa[on]
            nine, tens = icd.ACUTE[name]
            ev.add(a=a, rank=order, code=pick((nine[0], tens[0]), ten[a].astype(int)), version=np.where(ten[a], 10, 9))
        for j, name in enumerate(comps):
            _, nines, tens = icd.CHARLSON[name]
            a = np.flatnonzero(has[self.a_pat, j])
            which = rng.integers(0, len(nines), len(a))
            codes = [c for c, _ in nines] + [c for c, _ in tens]
            ev.add(a=a, rank=20 + j, code=pick(codes, np.where(ten[a], len(nines) + which % len(tens), which)),
                   version=np.where(ten[a], 10, 9))
        heme = np.flatnonzero((self.r(n) < 0.03)[self.a_pat])
        which = rng.integers(0, 2, len(heme))
        codes = [c for c, _ in icd.HEME_MALIGNANCY[0]] + [c for c, _ in icd.HEME_MALIGNANCY[1]]
        ev.add(a=heme, rank=40, code=pick(codes, which + 2 * ten[heme]), version=np.where(ten[heme], 10, 9))
        for j, (name, (share, nine, tens)) in enumerate(icd.BACKGROUND.items()):
            a = np.flatnonzero((self.r(n) < share)[self.a_pat])
            ev.add(a=a, rank=50 + j, code=pick((nine[0], tens[0]), ten[a].astype(int)), version=np.where(ten[a], 10, 9))
        t = ev.table({"a": pa.int64(), "rank": pa.int64(), "code": pa.string(), "version": pa.int64()})
        order = np.lexsort((t["rank"].to_numpy(), t["a"].to_numpy()))
        t = t.take(pa.array(order))
        a = t["a"].to_numpy()
        _, seq = expand(np.bincount(a, minlength=A))
        self.put(f"{HOSP}.diagnoses_icd", {
            "subject_id": self.subject_id[self.a_pat[a]], "hadm_id": self.hadm_id[a], "seq_num": seq + 1,
            "icd_code": t["code"], "icd_version": t["version"].cast(pa.int16())})
        self.put(f"{HOSP}.d_icd_diagnoses", pa.table({
            "icd_code": [c for c, _, _ in icd.diagnosis_dictionary()],
            "icd_version": pa.array([v for _, v, _ in icd.diagnosis_dictionary()], pa.int16()),
            "long_title": [t_ for _, _, t_ in icd.diagnosis_dictionary()]}))
        # procedures per ICU stay
        pev = Events()
        v = np.flatnonzero(self.vent)
        tv = ten[self.s_adm[v]]
        long = self.ve[v] - self.vs[v] >= 96 * HOUR
        pev.add(s=v, rank=0, code=pick(("9604", "0BH17EZ"), tv.astype(int)), version=np.where(tv, 10, 9))
        pev.add(s=v, rank=1, code=pick(("9671", "9672", "5A1945Z", "5A1955Z"), long + 2 * tv),
                version=np.where(tv, 10, 9))
        c = np.flatnonzero(self.crrt)
        tc = ten[self.s_adm[c]]
        pev.add(s=c, rank=2, code=pick(("3995", "5A1D90Z"), tc.astype(int)), version=np.where(tc, 10, 9))
        al = np.flatnonzero(self.artline & (self.r(self.S) < 0.5))
        ta = ten[self.s_adm[al]]
        pev.add(s=al, rank=3, code=pick(("3893", "02HV33Z"), ta.astype(int)), version=np.where(ta, 10, 9))
        t = pev.table({"s": pa.int64(), "rank": pa.int64(), "code": pa.string(), "version": pa.int64()})
        s = t["s"].to_numpy()
        order = np.lexsort((t["rank"].to_numpy(), self.s_adm[s]))
        t = t.take(pa.array(order))
        s = t["s"].to_numpy()
        a = self.s_adm[s]
        _, seq = expand(np.bincount(a, minlength=A))
        self.put(f"{HOSP}.procedures_icd", {
            "subject_id": self.subject_id[self.a_pat[a]], "hadm_id": self.hadm_id[a], "seq_num": seq + 1,
            "chartdate": ts(floor_day(self.s_in[s])).cast(pa.date32()), "icd_code": t["code"],
            "icd_version": t["version"].cast(pa.int16())})
        self.put(f"{HOSP}.d_icd_procedures", pa.table({
            "icd_code": [c for c, _, _ in icd.procedure_dictionary()],
            "icd_version": pa.array([v for _, v, _ in icd.procedure_dictionary()], pa.int16()),
            "long_title": [t_ for _, _, t_ in icd.procedure_dictionary()]}))

    def omr(self) -> None:
        rng, n = self.rng, self.n
        visits = rng.integers(0, 5, n)
        p, pos = expand(visits)
        first_adm = self.first_admit()
        day = floor_day(first_adm[p] - (self.u(30, 700, len(p)) * DAY).astype(np.int64))
        m = len(p)
        sbp = np.round(rng.normal(128, 15, m)).astype(np.int64)
        dbp = np.round(sbp * 0.6 + rng.normal(0, 6, m)).astype(np.int64)
        weight_lb = np.round(self.weight_p[p] * (1 + rng.normal(0, 0.03, m)) * 2.20462, 1)
        bmi = np.round(weight_lb / 2.20462 / (self.height_p[p] / 100) ** 2, 1)
        bp = pc.binary_join_element_wise(pa.array(sbp).cast(pa.string()), pa.array(dbp).cast(pa.string()), "/")
        ev = Events()
        ev.add(p=p, day=day, name="Blood Pressure", value=bp)
        ev.add(p=p, day=day, name="Weight (Lbs)", value=pa.array(weight_lb).cast(pa.string()))
        ev.add(p=p, day=day, name="BMI (kg/m2)", value=pa.array(bmi).cast(pa.string()))
        h = pos == 0
        ev.add(p=p[h], day=day[h], name="Height (Inches)",
               value=pa.array(np.round(self.height_p[p[h]] / 2.54, 1)).cast(pa.string()))
        t = ev.table({"p": pa.int64(), "day": pa.int64(), "name": pa.string(), "value": pa.string()})
        self.put(f"{HOSP}.omr", {
            "subject_id": self.subject_id[t["p"].to_numpy()], "chartdate": ts(t["day"].to_numpy()).cast(pa.date32()),
            "seq_num": np.ones(t.num_rows, np.int64), "result_name": t["name"], "result_value": t["value"]})

    def dictionaries(self) -> None:
        cols = ("itemid", "label", "abbreviation", "linksto", "category", "unitname", "param_type",
                "lownormalvalue", "highnormalvalue")
        self.put(f"{ICU}.d_items", pa.table({c: [row[i] for row in D_ITEMS] for i, c in enumerate(cols)}))
        cols = ("itemid", "label", "fluid", "category")
        self.put(f"{HOSP}.d_labitems", pa.table({c: [row[i] for row in D_LABITEMS] for i, c in enumerate(cols)}))

    def build(self) -> dict[str, int]:
        create_empty(self.con, "mimic-iv", only={t.qualified for t in MIMIC_IV_TABLES if t.schema in CORE_SCHEMAS})
        self.dictionaries()
        self.cohort()
        self.hosp_core()
        self.vitals()
        self.gcs()
        self.respiratory()
        self.crrt_and_body()
        self.infusions()
        self.outputs()
        self.procedures()
        self.labs()
        self.microbiology()
        self.medications()
        self.codes()
        self.omr()
        self.con.execute(f"INSERT INTO {ICU}.caregiver SELECT DISTINCT caregiver_id FROM {ICU}.chartevents "
                         "ORDER BY caregiver_id")
        return self.counts


def synth_mimic_iv(out_path: str | Path, *, patients: int = 200, seed: int = 0, **knobs: float) -> Path:
    """Write a synthetic MIMIC-IV database (schemas mimiciv_hosp, mimiciv_icu) to ``out_path``.

    Same ``patients``, ``seed`` and knobs give identical tables. The file appears only when
    complete (written beside it, then renamed). Knobs: see ``Knobs``.
    """
    check_size(patients, seed)
    settings = Knobs(**_known(knobs))
    out = Path(out_path)
    with atomic_database(out) as con:
        _Mimic(con, patients, seed, settings).build()
    return out


def _known(knobs: dict) -> dict:
    from clinbench.errors import DataError

    unknown = set(knobs) - set(Knobs.names())
    if unknown:
        raise DataError(f"unknown knob(s) {', '.join(sorted(unknown))}: use {', '.join(Knobs.names())}")
    return knobs
