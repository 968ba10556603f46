"""Synthetic MIMIC-IV hospital tables: patients, admissions, transfers, services, icustays, labs,
microbiology, prescriptions, eMAR, ICD codes, OMR and the item dictionaries.

Labs follow each stay's course (creatinine bumps rounded to 0.1 mg/dL so +0.3 and 1.5x edges occur,
bilirubin/INR/platelets for liver disease, blood gases with their specimen type), outpatient
creatinine sits days to months before admissions, antibiotics come by every route including the
eye, ear and topical ones conventions exclude, and every Charlson component is coded.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from clinbench.ehr.synth import icd
from clinbench.ehr.synth.frames import DAY, HOUR, Events, expand, floor_day, grid, pick, ts
from clinbench.ehr.synth.items import D_ITEMS, D_LABITEMS, LAB_REFERENCE, LAB_UNITS
from clinbench.ehr.synth.mimic_cohort import (
    ADMISSION_LOCATION, ADMISSION_TYPES, HOSP, ICU, ICU_UNITS, MINUTE, MimicCohort,
)

WARDS = ("Medicine", "Med/Surg", "Medicine/Cardiology", "Neurology", "Cardiac Surgery", "Hematology/Oncology",
         "Transplant", "Emergency Department Observation")
MED_SERVICES = ("MED", "CMED", "OMED", "NMED")
SURG_SERVICES = ("SURG", "CSURG", "NSURG", "VSURG", "TRAUM", "ORTHO")
DISCHARGE_LOCATIONS = ("HOME", "HOME HEALTH CARE", "SKILLED NURSING FACILITY", "REHAB",
                       "CHRONIC/LONG TERM ACUTE CARE", "HOSPICE")
YEAR_GROUPS = ("2008 - 2010", "2011 - 2013", "2014 - 2016", "2017 - 2019", "2020 - 2022")

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
            51200: 1, 51146: 1, 51144: 0, 50820: 2, 50813: 1, 50808: 2, 50822: 1, 51003: 2, 50889: 1}



class HospTables(MimicCohort):
    """Writers of the mimiciv_hosp tables (and icustays), each derived from the cohort's latents."""

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
        ward_first = np.flatnonzero(end_admit > self.admit)  # else the patient is admitted straight to the ICU
        ev.add(a=ward_first, type="admit", unit=pick(WARDS, ward[ward_first]), tin=self.admit[ward_first],
               tout=end_admit[ward_first])
        ev.add(a=self.s_adm, type=pick(("transfer", "admit"), (self.s_in == self.admit[self.s_adm]).astype(int)),
               unit=pick(ICU_UNITS, self.s_unit), tin=self.s_in, tout=self.s_out)
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
        fio2 = np.where(vented, (self.fio2_base if self.fio2_base is not None else np.full(S, 50))[g], 21.0)
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
                      "specimen": pa.int64(), "comment": pa.string()})
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
            "priority": pick(("ROUTINE", "STAT"), (self.r(n) < 0.3).astype(int)), "comments": t["comment"],
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
        start = np.minimum(start, self.disch[self.s_adm[g]] - HOUR)  # a second drug still starts before discharge
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
            st = self.minutes(np.minimum(self.admit[idx] + self.u(1, 24, len(idx)) * HOUR, self.disch[idx] - HOUR))
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
            st = self.minutes(np.minimum(self.admit[idx] + self.u(1, 6, len(idx)) * HOUR, self.disch[idx] - HOUR))
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
        self.comorbid_p = {name: has[:, j] for j, name in enumerate(comps)}  # read by the cardiac markers
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
