"""Synthetic eICU-CRD (schema eicu_crd) shaped like the real multi-centre database.

Times are minute offsets from unit admission, as in eICU. Each patient has one hospital stay
with one or two unit stays. What the eICU concepts read is charted the way eICU charts it
(labels per MIT-LCP eicu-code's pivoted concepts and the eICU demo): GCS in nursecharting as
'Glasgow coma score' / 'GCS Total', 'Motor', 'Verbal', 'Eyes' (some units chart
'Score (Glasgow Coma Scale)' / 'Value' instead, some only the components), and in
physicalexam under 'notes/Progress Notes/Physical Exam/Physical Exam/Neurologic/GCS/...';
vitals in nursecharting and vitalperiodic; urine under the I&O 'Output (ml)|Urine' cell path;
ventilation in respiratorycare, respiratorycharting, treatment and the APACHE tables;
pre-ICU length of stay in patient.hospitaladmitoffset. Edges for the eICU GCS and OASIS
tasks occur on purpose: GCS charted before unit admission (within and beyond 6 h), totals
outside 3-15, stays without any GCS, ventilation starting after the first day, elective
surgery unknown in APACHE, age '> 89'.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from clinbench.ehr.schema import create_empty
from clinbench.ehr.synth.frames import Events, expand, grid, group_cumsum, insert, pick, synthesise
from clinbench.ehr.synth.knobs import Knobs

EICU = "eicu_crd"
H = 60  # minutes per hour
D = 1440

UNIT_TYPES = ("Med-Surg ICU", "MICU", "Cardiac ICU", "SICU", "CCU-CTICU", "Neuro ICU")
UNIT_P = (0.6, 0.1, 0.08, 0.08, 0.07, 0.07)
ADMIT_SOURCES = ("Emergency Department", "Operating Room", "Floor", "Direct Admit", "Recovery Room",
                 "Step-Down Unit (SDU)")
ADMIT_P = (0.5, 0.12, 0.15, 0.1, 0.08, 0.05)
GCS_PREFIX = "notes/Progress Notes/Physical Exam/Physical Exam/Neurologic/GCS/"
UO_PATH = "flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Urine"
DIAGNOSES = (
    ("cardiovascular|ventricular disorders|hypertension", "401.9, I10"),
    ("infectious diseases|systemic/other infections|sepsis|sepsis with single organ dysfunction", "995.92, R65.20"),
    ("pulmonary|respiratory failure|acute respiratory failure", "518.81, J96.00"),
    ("renal|disorder of kidney|acute renal failure", "584.9, N17.9"),
    ("cardiovascular|shock / hypotension|hypotension", "458.9, I95.9"),
    ("neurologic|altered mental status / pain|change in mental status", "780.09, R41.82"),
)
LABS = (  # labname, labtypeid, unit, decimals
    ("creatinine", 1, "mg/dL", 2), ("BUN", 1, "mg/dL", 0), ("sodium", 1, "mmol/L", 0), ("potassium", 1, "mmol/L", 1),
    ("chloride", 1, "mmol/L", 0), ("bicarbonate", 1, "mmol/L", 0), ("glucose", 1, "mg/dL", 0),
    ("Hgb", 3, "g/dL", 1), ("Hct", 3, "%", 1), ("WBC x 1000", 3, "K/mcL", 1), ("platelets x 1000", 3, "K/mcL", 0),
    ("total bilirubin", 1, "mg/dL", 1), ("albumin", 1, "g/dL", 1), ("PT - INR", 3, "ratio", 1),
    ("bedside glucose", 4, "mg/dL", 0),
)


class _Eicu:
    def __init__(self, con: duckdb.DuckDBPyConnection, patients: int, seed: int, knobs: Knobs) -> None:
        self.con = con
        self.n = patients
        self.k = knobs
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 11]))

    def r(self, n: int) -> np.ndarray:
        return self.rng.random(n)

    def u(self, lo: float, hi: float, n: int) -> np.ndarray:
        return self.rng.uniform(lo, hi, n)

    def put(self, table: str, data: pa.Table | dict) -> None:
        insert(self.con, f"{EICU}.{table}", data)

    def cohort(self) -> None:
        rng, n, k = self.rng, self.n, self.k
        stays = np.where(self.r(n) < 0.2, 2, 1)
        p, visit = expand(stays)
        U = len(p)
        self.U, self.p, self.visit = U, p, visit
        self.pid = 141_001 + np.arange(U, dtype=np.int64) * 3
        self.hsid = 129_001 + p * 2
        self.hospital = rng.integers(1, 40, n)[p] + 50
        age = np.clip(rng.normal(64, 17, n), 16, 95).astype(int)
        self.age_num = np.minimum(age, 90)[p]
        age_text = pa.array(age.astype(str))
        self.age = pc.if_else(pa.array(age > 89), pa.scalar("> 89"), age_text).take(pa.array(p))
        self.male = (self.r(n) < 0.54)[p]
        self.los = np.clip(rng.lognormal(np.log(1.5 * D), 0.75, U), 8 * H, 20 * D).astype(np.int64)
        pre = np.where(self.r(U) < 0.1, self.rng.integers(0, 10, U),
                       (np.clip(rng.lognormal(np.log(4.5 * H), 1.4, U), 10, 40 * D)).astype(np.int64))
        pre = np.where(self.r(U) < 0.04, (self.u(13, 30, U) * D).astype(np.int64), pre)  # weeks on the ward
        first = np.flatnonzero(visit == 0)[p]  # each patient's first unit stay
        pre = pre[first]  # one hospital admission per patient
        # a second unit stay starts after the first one ends (plus a ward gap): offsets move with it
        gap = (self.u(0.5, 3, U) * D).astype(np.int64)
        shift = np.where(visit == 0, 0, self.los[first] + gap)
        self.hadm_off = -(pre + shift)
        post = (self.u(0.5, 6, U) * D).astype(np.int64)
        end_of_hospital = np.zeros(len(stays), dtype=np.int64)
        np.maximum.at(end_of_hospital, p, shift + self.los + post)  # minutes after the first unit admission
        self.hdisch_off = end_of_hospital[p] - shift
        self.source = rng.choice(len(ADMIT_SOURCES), size=U, p=ADMIT_P)
        self.sev = rng.beta(2, 3, U)
        self.sepsis = self.r(U) < k.septic
        self.vent = self.r(U) < k.ventilated
        self.pressor = self.r(U) < k.pressors
        self.artline = self.vent | self.pressor | (self.r(U) < 0.2)
        self.weight = np.round(np.clip(rng.normal(np.where(self.male, 85, 72), 18), 40, 180), 1)
        self.height = np.round(np.clip(rng.normal(np.where(self.male, 176, 162), 8), 140, 205), 1)
        # ventilation: mostly from admission, sometimes starting after the first day
        late = self.r(U) < 0.1
        self.vs = np.where(late, self.u(25 * H, 40 * H, U), np.where(self.r(U) < 0.4, -self.u(30, 240, U),
                                                                       self.u(10, 8 * H, U))).astype(np.int64)
        self.ve = np.minimum(self.vs + np.clip(rng.lognormal(np.log(36 * H), 0.8, U), 6 * H, None).astype(np.int64),
                             self.los - 30)
        self.vent &= self.ve - np.maximum(self.vs, 0) > 4 * H
        self.died = self.r(U) < 0.1

    def patient(self) -> None:
        U, rng = self.U, self.rng

        def clock(offset: np.ndarray) -> pa.Array:
            minutes = np.mod(offset + 8 * H, D)
            text = pc.binary_join_element_wise(
                pc.utf8_lpad(pa.array(minutes // H).cast(pa.string()), 2, "0"),
                pc.utf8_lpad(pa.array(minutes % H).cast(pa.string()), 2, "0"), pa.array(np.full(U, "00")), ":")
            return text

        self.put("patient", {
            "patientunitstayid": self.pid, "patienthealthsystemstayid": self.hsid,
            "gender": pick(("Female", "Male"), self.male.astype(int)), "age": self.age,
            "ethnicity": pick(("Caucasian", "African American", "Hispanic", "Asian", "Other/Unknown"),
                              rng.choice(5, size=U, p=[0.75, 0.1, 0.05, 0.03, 0.07])),
            "hospitalid": self.hospital, "wardid": self.hospital * 10 + rng.integers(0, 5, U),
            "apacheadmissiondx": pick(("Sepsis, pulmonary", "Rhythm disturbance (atrial, supraventricular)",
                                       "CABG alone, coronary artery bypass grafting", "Overdose, other toxin",
                                       "Pneumonia, bacterial"), rng.integers(0, 5, U)),
            "admissionheight": self.height, "hospitaladmittime24": clock(self.hadm_off),
            "hospitaladmitoffset": self.hadm_off,
            "hospitaladmitsource": pick(ADMIT_SOURCES, np.where(self.visit == 0, self.source, 2)),
            "hospitaldischargeyear": pa.array(np.where(self.r(U) < 0.5, 2014, 2015), pa.int16()),
            "hospitaldischargetime24": clock(self.hdisch_off), "hospitaldischargeoffset": self.hdisch_off,
            "hospitaldischargelocation": pick(("Home", "Skilled Nursing Facility", "Death"),
                                              np.where(self.died, 2, (self.r(U) < 0.3).astype(int))),
            "hospitaldischargestatus": pick(("Alive", "Expired"), self.died.astype(int)),
            "unittype": pick(UNIT_TYPES, rng.choice(len(UNIT_TYPES), size=U, p=UNIT_P)),
            "unitadmittime24": clock(np.zeros(U, np.int64)),
            "unitadmitsource": pick(ADMIT_SOURCES, self.source), "unitvisitnumber": self.visit + 1,
            "unitstaytype": pick(("admit", "readmit"), (self.visit > 0).astype(int)),
            "admissionweight": pa.array(self.weight, mask=self.r(U) < 0.05),
            "dischargeweight": pa.array(np.round(self.weight * (1 + rng.normal(0, 0.02, U)), 1), mask=self.r(U) < 0.3),
            "unitdischargetime24": clock(self.los), "unitdischargeoffset": self.los,
            "unitdischargelocation": pick(("Floor", "Step-Down Unit (SDU)", "Death"),
                                          np.where(self.died, 2, (self.r(U) < 0.3).astype(int))),
            "unitdischargestatus": pick(("Alive", "Expired"), self.died.astype(int)),
            "uniquepid": pc.binary_join_element_wise(
                pc.utf8_lpad(pa.array(self.hospital).cast(pa.string()), 3, "0"),
                pa.array(100_000 + self.p * 7).cast(pa.string()), "-"),
        })
        hospitals = np.unique(self.hospital)
        self.put("hospital", {
            "hospitalid": hospitals,
            "numbedscategory": pick(("<100", "100 - 249", "250 - 499", ">= 500"), hospitals % 4),
            "teachingstatus": hospitals % 3 == 0,
            "region": pick(("Midwest", "South", "West", "Northeast"), hospitals % 4)})

    def gcs_components(self, n: int, vented: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, ...]:
        rng = self.rng
        normal = self.r(n) < (0.9 - 0.6 * self.sev[g])
        eyes = np.where(normal, 4, rng.choice([1, 2, 3, 4], size=n, p=[0.15, 0.2, 0.35, 0.3]))
        verbal = np.where(normal, 5, rng.choice([1, 2, 3, 4, 5], size=n, p=[0.1, 0.1, 0.15, 0.45, 0.2]))
        motor = np.where(normal, 6, rng.choice([1, 3, 4, 5, 6], size=n, p=[0.05, 0.05, 0.15, 0.25, 0.5]))
        eyes = np.where(vented, rng.choice([1, 2, 3, 4], size=n, p=[0.35, 0.25, 0.2, 0.2]), eyes)
        verbal = np.where(vented, 1, verbal)
        motor = np.where(vented, rng.choice([1, 3, 4, 5, 6], size=n, p=[0.15, 0.1, 0.15, 0.2, 0.4]), motor)
        return eyes, verbal, motor

    def nursecharting(self) -> None:
        rng, U = self.rng, self.U
        ev = Events()
        # vitals hourly, some charted in the 6 h before unit admission
        start = np.where(self.r(U) < 0.3, -self.rng.integers(1, 9, U) * H, 0)
        g, k, t = grid(start + rng.integers(0, 20, U), self.los, np.full(U, H))
        n = len(g)
        hr = np.clip(np.round(rng.normal(86, 12, U)[g] + 8 * self.sepsis[g] + rng.normal(0, 6, n)), 30, 200)
        rr = np.clip(np.round(rng.normal(19, 3.5, U)[g] + rng.normal(0, 3, n)), 5, 50)
        spo2 = np.clip(np.round(100 - rng.gamma(1.6, 1.6, n)), 75, 100)
        sbp = np.clip(rng.normal(120, 15, U)[g] - 8 * self.pressor[g] + rng.normal(0, 9, n), 60, 220)
        dbp = np.clip(sbp * 0.55 + rng.normal(0, 6, n), 25, 130)
        mbp = (sbp + 2 * dbp) / 3
        temp = np.round(36.8 + 1.0 * self.sepsis[g] * self.r(n) + rng.normal(0, 0.35, n), 1)

        def add(sel: np.ndarray, label: str, name: str, value: pa.Array, cat: str = "Vital Signs") -> None:
            ev.add(g=g[sel], t=t[sel], cat=cat, label=label, name=name, value=value.filter(pa.array(sel)))

        every = np.ones(n, bool)
        num = lambda v: pa.array(np.round(v).astype(np.int64)).cast(pa.string())  # noqa: E731
        add(every, "Heart Rate", "Heart Rate", num(hr))
        add(every, "Respiratory Rate", "Respiratory Rate", num(rr))
        add(every, "O2 Saturation", "O2 Saturation", num(spo2))
        nibp = ~self.artline[g] | (k % 3 == 0)
        add(nibp, "Non-Invasive BP", "Non-Invasive BP Systolic", num(sbp))
        add(nibp, "Non-Invasive BP", "Non-Invasive BP Diastolic", num(dbp))
        add(nibp, "Non-Invasive BP", "Non-Invasive BP Mean", num(mbp))
        art = self.artline[g]
        add(art, "Invasive BP", "Invasive BP Systolic", num(sbp - 2))
        add(art, "Invasive BP", "Invasive BP Diastolic", num(dbp * 0.95))
        add(art, "Invasive BP", "Invasive BP Mean", num(mbp + 1))
        t4 = k % 4 == 0
        add(t4, "Temperature", "Temperature (C)", pa.array(temp).cast(pa.string()))
        # GCS every 1-4 h; a tenth of stays chart no GCS at all, some units chart only a total
        step = rng.choice([1, 2, 4], size=U, p=[0.2, 0.4, 0.4]) * H
        gcs_start = np.where(self.r(U) < 0.3, -rng.integers(2, 10, U) * H, rng.integers(5, 90, U))
        g, k, t = grid(gcs_start, self.los, step)
        keep = ~(self.r(U) < 0.1)[g]
        g, t = g[keep], t[keep]
        n = len(g)
        vented = self.vent[g] & (t >= self.vs[g]) & (t <= self.ve[g])
        eyes, verbal, motor = self.gcs_components(n, vented, g)
        total = eyes + verbal + motor
        style = rng.choice(3, size=U, p=[0.75, 0.15, 0.1])[g]  # 0 all, 1 alternative label, 2 components only
        bad_total = self.r(n) < max(self.k.quirks * 2, 0.0)
        shown = np.where(bad_total, rng.choice([0, 99], size=n), total)
        text_total = pa.array(shown).cast(pa.string())
        uns = self.r(n) < self.k.quirks
        text_total = pc.if_else(pa.array(uns), pa.scalar("Unable to score due to medication"), text_total)
        s0 = style == 0
        ev.add(g=g[s0], t=t[s0], cat="Scores", label="Glasgow coma score", name="GCS Total",
               value=text_total.filter(pa.array(s0)))
        s1 = style == 1
        ev.add(g=g[s1], t=t[s1], cat="Scores", label="Score (Glasgow Coma Scale)", name="Value",
               value=text_total.filter(pa.array(s1)))
        for name, v in (("Eyes", eyes), ("Verbal", verbal), ("Motor", motor)):
            comp = (style != 1) & (self.r(n) > 0.04)  # now and then a component is not charted
            ev.add(g=g[comp], t=t[comp], cat="Scores", label="Glasgow coma score", name=name,
                   value=pa.array(v[comp]).cast(pa.string()))
        tb = ev.table({"g": pa.int64(), "t": pa.int64(), "cat": pa.string(), "label": pa.string(),
                       "name": pa.string(), "value": pa.string()})
        g = tb["g"].to_numpy()
        t = tb["t"].to_numpy()
        m = len(g)
        self.put("nursecharting", {
            "nursingchartid": 1 + np.arange(m), "patientunitstayid": self.pid[g], "nursingchartoffset": t,
            "nursingchartentryoffset": t + rng.integers(0, 30, m), "nursingchartcelltypecat": tb["cat"],
            "nursingchartcelltypevallabel": tb["label"], "nursingchartcelltypevalname": tb["name"],
            "nursingchartvalue": tb["value"]})

    def periodic(self) -> None:
        rng, U = self.rng, self.U
        g, k, t = grid(np.zeros(U, np.int64), self.los, np.full(U, 5))
        n = len(g)
        sbp = np.clip(rng.normal(120, 15, U)[g] + rng.normal(0, 8, n), 60, 220)
        dbp = np.clip(sbp * 0.55 + rng.normal(0, 5, n), 25, 130)
        art = self.artline[g]
        self.put("vitalperiodic", {
            "vitalperiodicid": 1 + np.arange(n), "patientunitstayid": self.pid[g], "observationoffset": t,
            "temperature": pa.array(np.round(rng.normal(36.9, 0.4, n), 1), mask=self.r(n) < 0.9),
            "sao2": np.clip(np.round(100 - rng.gamma(1.6, 1.6, n)), 75, 100).astype(np.int32),
            "heartrate": np.clip(np.round(rng.normal(86, 12, U)[g] + rng.normal(0, 5, n)), 30, 200).astype(np.int32),
            "respiration": np.clip(np.round(rng.normal(19, 4, n)), 5, 50).astype(np.int32),
            "systemicsystolic": pa.array(np.round(sbp).astype(np.int32), mask=~art),
            "systemicdiastolic": pa.array(np.round(dbp).astype(np.int32), mask=~art),
            "systemicmean": pa.array(np.round((sbp + 2 * dbp) / 3).astype(np.int32), mask=~art)})
        g, _, t = grid(np.zeros(U, np.int64) + 7, self.los, np.full(U, 30))
        n = len(g)
        s = np.clip(rng.normal(120, 15, U)[g] + rng.normal(0, 9, n), 60, 220)
        d = np.clip(s * 0.55 + rng.normal(0, 6, n), 25, 130)
        self.put("vitalaperiodic", {
            "vitalaperiodicid": 1 + np.arange(n), "patientunitstayid": self.pid[g], "observationoffset": t,
            "noninvasivesystolic": np.round(s), "noninvasivediastolic": np.round(d),
            "noninvasivemean": np.round((s + 2 * d) / 3)})

    def labs_and_io(self) -> None:
        rng, U = self.rng, self.U
        g, k, t = grid(-rng.integers(30, 5 * H, U), self.los, np.full(U, D))
        n = len(g)
        creat = np.clip(rng.lognormal(np.log(1.0), 0.45, U)[g] * np.exp(rng.normal(0, 0.08, n)), 0.3, 12)
        values = {
            "creatinine": creat, "BUN": 18 * creat ** 0.8, "sodium": rng.normal(139, 4, n),
            "potassium": rng.normal(4.1, 0.5, n), "chloride": rng.normal(103, 4, n),
            "bicarbonate": rng.normal(24, 3.5, n), "glucose": rng.lognormal(np.log(125), 0.3, n),
            "Hgb": rng.normal(10.5, 2, n), "Hct": rng.normal(31, 5, n),
            "WBC x 1000": rng.lognormal(np.log(9.5), 0.4, n) * np.where(self.sepsis[g], 1.5, 1),
            "platelets x 1000": rng.lognormal(np.log(200), 0.4, n), "total bilirubin": rng.lognormal(np.log(0.6), 0.6, n),
            "albumin": rng.normal(3.2, 0.6, n), "PT - INR": rng.lognormal(np.log(1.2), 0.2, n),
            "bedside glucose": rng.lognormal(np.log(140), 0.3, n),
        }
        ev = Events()
        for name, typeid, unit, dec in LABS:
            on = self.r(n) < (0.4 if name in ("total bilirubin", "albumin", "PT - INR") else 0.95)
            ev.add(g=g[on], t=t[on] + rng.integers(0, 30, on.sum()), name=name, typeid=typeid, unit=unit,
                   value=np.round(values[name][on], dec))
        tb = ev.table({"g": pa.int64(), "t": pa.int64(), "name": pa.string(), "typeid": pa.int16(), "unit": pa.string(),
                       "value": pa.float64()})
        gg = tb["g"].to_numpy()
        m = len(gg)
        self.put("lab", {
            "labid": 1 + np.arange(m), "patientunitstayid": self.pid[gg], "labresultoffset": tb["t"],
            "labtypeid": tb["typeid"], "labname": tb["name"], "labresult": tb["value"],
            "labresulttext": tb["value"].cast(pa.string()), "labmeasurenamesystem": tb["unit"],
            "labmeasurenameinterface": tb["unit"], "labresultrevisedoffset": tb["t"]})
        # urine output every 1-2 h
        step = rng.choice([60, 120], size=U)
        g, _, t = grid(rng.integers(20, 90, U), self.los, step)
        n = len(g)
        uo = np.round(np.clip(rng.lognormal(np.log(0.9), 0.5, U)[g] * self.weight[g] * step[g] / 60
                              * np.exp(rng.normal(0, 0.3, n)), 0, 2000) / 5) * 5
        total = group_cumsum(uo, g)  # running output total of the stay, as eICU charts it
        self.put("intakeoutput", {
            "intakeoutputid": 1 + np.arange(n), "patientunitstayid": self.pid[g], "intakeoutputoffset": t,
            "intaketotal": np.zeros(n), "outputtotal": total, "dialysistotal": np.zeros(n), "nettotal": -total,
            "intakeoutputentryoffset": t + 5, "cellpath": pa.array(np.full(n, UO_PATH)),
            "celllabel": pa.array(np.full(n, "Urine")), "cellvaluenumeric": uo, "cellvaluetext": pa.array(uo).cast(pa.string())})

    def respiratory(self) -> None:
        rng, U = self.rng, self.U
        v = np.flatnonzero(self.vent)
        m = len(v)
        self.put("respiratorycare", {
            "respcareid": 1 + np.arange(m), "patientunitstayid": self.pid[v],
            "respcarestatusoffset": np.maximum(self.vs[v], 0) + rng.integers(5, 60, m), "currenthistoryseqnum": np.ones(m),
            "airwaytype": pick(("Oral ETT", "Tracheostomy", "Nasal ETT"), rng.choice(3, size=m, p=[0.8, 0.15, 0.05])),
            "airwaysize": pa.array(np.full(m, "7.5")), "cuffpressure": np.round(self.u(20, 30, m)),
            "ventstartoffset": self.vs[v], "ventendoffset": self.ve[v]})
        g0, _, t = grid(np.maximum(self.vs[v], 0), self.ve[v], np.full(m, 4 * H))
        g = v[g0]
        n = len(g)
        ev = Events()
        for label, values in (("FiO2", np.round(self.u(30, 80, n) / 5) * 5), ("PEEP", self.rng.choice([5, 8, 10], n)),
                              ("Vent Rate", np.round(self.u(12, 24, n))), ("Tidal Volume (set)", np.full(n, 450))):
            ev.add(g=g, t=t, label=label, value=pa.array(values.astype(np.int64)).cast(pa.string()))
        tb = ev.table({"g": pa.int64(), "t": pa.int64(), "label": pa.string(), "value": pa.string()})
        gg = tb["g"].to_numpy()
        k = len(gg)
        self.put("respiratorycharting", {
            "respchartid": 1 + np.arange(k), "patientunitstayid": self.pid[gg], "respchartoffset": tb["t"],
            "respchartentryoffset": tb["t"], "respcharttypecat": pa.array(np.full(k, "respFlowSettings")),
            "respchartvaluelabel": tb["label"], "respchartvalue": tb["value"]})
        # treatment strings
        ev = Events()
        ev.add(g=v, t=np.maximum(self.vs[v], 0) + 30, s="pulmonary|ventilation and oxygenation|mechanical ventilation")
        o2 = np.flatnonzero(~self.vent & (self.r(U) < 0.4))
        ev.add(g=o2, t=rng.integers(30, 600, len(o2)),
               s="pulmonary|ventilation and oxygenation|oxygen therapy (< 40%)|nasal cannula")
        p = np.flatnonzero(self.pressor)
        ev.add(g=p, t=rng.integers(30, 900, len(p)), s="cardiovascular|shock|vasopressors|norepinephrine <= 0.1 micrograms/kg/min")
        tb = ev.table({"g": pa.int64(), "t": pa.int64(), "s": pa.string()})
        gg = tb["g"].to_numpy()
        self.put("treatment", {"treatmentid": 1 + np.arange(len(gg)), "patientunitstayid": self.pid[gg],
                               "treatmentoffset": tb["t"], "treatmentstring": tb["s"],
                               "activeupondischarge": pa.array(np.full(len(gg), "False"))})

    def apache_and_exam(self) -> None:
        rng, U = self.rng, self.U
        has = self.r(U) < 0.9
        a = np.flatnonzero(has)
        m = len(a)
        vented = self.vent[a] & (self.vs[a] < D)
        eyes, verbal, motor = self.gcs_components(m, vented, a)
        meds = vented & (self.r(m) < 0.5)
        missing = lambda v, share: np.where(self.r(m) < share, -1, v)  # noqa: E731  eICU codes missing as -1
        self.put("apacheapsvar", {
            "apacheapsvarid": 1 + np.arange(m), "patientunitstayid": self.pid[a], "intubated": vented.astype(np.int16),
            "vent": vented.astype(np.int16), "dialysis": np.zeros(m, np.int16),
            "eyes": np.where(meds, -1, eyes).astype(np.int16), "motor": np.where(meds, -1, motor).astype(np.int16),
            "verbal": np.where(meds, -1, verbal).astype(np.int16), "meds": meds.astype(np.int16),
            # APACHE's worst first-day values, spread like the eICU demo's
            "urine": missing(np.round(rng.lognormal(np.log(1430), 0.6, m)), 0.15),
            "wbc": missing(np.round(rng.lognormal(np.log(9.9), 0.45, m), 1), 0.05),
            "temperature": missing(np.round(rng.normal(36.5, 0.8, m), 1), 0.03),
            "respiratoryrate": missing(np.round(np.clip(rng.normal(26, 9, m), 4, 60)), 0.02),
            "sodium": missing(np.round(rng.normal(138, 5, m)), 0.05),
            "heartrate": missing(np.round(np.clip(rng.normal(104, 24, m), 30, 200)), 0.01),
            "meanbp": missing(np.round(np.clip(rng.normal(66, 20, m), 30, 180)), 0.01),
            "ph": missing(np.round(rng.normal(7.36, 0.08, m), 2), 0.5),
            "hematocrit": missing(np.round(rng.normal(31, 6, m), 1), 0.05),
            "creatinine": missing(np.round(rng.lognormal(np.log(1.0), 0.6, m), 2), 0.05),
            "albumin": missing(np.round(rng.normal(2.9, 0.6, m), 1), 0.5),
            "pao2": missing(np.round(rng.lognormal(np.log(90), 0.4, m)), 0.5),
            "pco2": missing(np.round(rng.normal(40, 8, m)), 0.5),
            "bun": missing(np.round(rng.lognormal(np.log(20), 0.6, m)), 0.05),
            "glucose": missing(np.round(rng.lognormal(np.log(128), 0.35, m)), 0.05),
            "bilirubin": missing(np.round(rng.lognormal(np.log(0.6), 0.7, m), 1), 0.5),
            "fio2": missing(np.round(rng.choice([21, 28, 35, 40, 50, 60, 100], m)), 0.5)})
        surgical = np.isin(self.source[a], (1, 4))
        elective = np.where(surgical, (self.r(m) < 0.6).astype(np.int16), 0)
        self.put("apachepredvar", {
            "apachepredvarid": 1 + np.arange(m), "patientunitstayid": self.pid[a],
            "gender": (~self.male[a]).astype(np.int16), "age": self.age_num[a].astype(np.int16),
            "admitsource": self.source[a].astype(np.int16), "meds": meds.astype(np.int16),
            "verbal": verbal.astype(np.int16), "motor": motor.astype(np.int16), "eyes": eyes.astype(np.int16),
            "electivesurgery": pa.array(elective, pa.int16(), mask=(self.r(m) < 0.1)),
            "ventday1": vented.astype(np.int16), "oobventday1": vented.astype(np.int16),
            "oobintubday1": vented.astype(np.int16), "diabetes": (self.r(m) < 0.2).astype(np.int16),
            "visitnumber": (self.visit[a] + 1).astype(np.int16), "readmit": (self.visit[a] > 0).astype(np.int16)})
        # physical exam GCS once on day one for most stays
        e = np.flatnonzero(self.r(U) < 0.7)
        m = len(e)
        off = rng.integers(30, 20 * H, m)
        vented = self.vent[e] & (off >= self.vs[e]) & (off <= self.ve[e])
        eyes, verbal, motor = self.gcs_components(m, vented, e)
        # many units chart only the total ('.../Neurologic/GCS/<total>'), others the scored components
        tot = self.r(m) < 0.6
        ev = Events()
        txt = pa.array((eyes + verbal + motor)[tot]).cast(pa.string())
        ev.add(g=e[tot], t=off[tot], value=txt,
               path=pc.binary_join_element_wise(pa.array(np.full(tot.sum(), GCS_PREFIX[:-1])), txt, "/"))
        c = ~tot
        ev.add(g=e[c], t=off[c], path=GCS_PREFIX + "Score/scored", value="scored")
        for name, v in (("Motor Score", motor), ("Eyes Score", eyes), ("Verbal Score", verbal)):
            txt = pa.array(v[c]).cast(pa.string())
            ev.add(g=e[c], t=off[c], value=txt,
                   path=pc.binary_join_element_wise(pa.array(np.full(c.sum(), GCS_PREFIX + name)), txt, "/"))
        tb = ev.table({"g": pa.int64(), "t": pa.int64(), "path": pa.string(), "value": pa.string()})
        gg = tb["g"].to_numpy()
        self.put("physicalexam", {"physicalexamid": 1 + np.arange(len(gg)), "patientunitstayid": self.pid[gg],
                                  "physicalexamoffset": tb["t"], "physicalexampath": tb["path"],
                                  "physicalexamvalue": tb["value"], "physicalexamtext": tb["value"]})

    def drugs_and_diagnoses(self) -> None:
        rng, U = self.rng, self.U
        # infusions charted hourly: vasopressors for shocked stays, sedation for ventilated ones
        ev = Events()
        for name, on, rates in (
            ("Norepinephrine (mcg/min)", self.pressor, (2, 4, 5, 8, 10, 15, 20)),
            ("Vasopressin (units/min)", self.pressor & (self.r(U) < 0.3), (0.03, 0.04)),
            ("Propofol (mcg/kg/min)", self.vent & (self.r(U) < 0.6), (10, 20, 30, 40, 50)),
            ("Fentanyl (mcg/hr)", self.vent & (self.r(U) < 0.6), (25, 50, 75, 100)),
        ):
            idx = np.flatnonzero(on)
            g0, _, t = grid(rng.integers(30, 600, len(idx)),
                            np.minimum(rng.integers(12, 72, len(idx)) * H, self.los[idx]), np.full(len(idx), H))
            g = idx[g0]
            ev.add(g=g, t=t, name=name, rate=np.asarray(rates)[rng.integers(0, len(rates), len(g))])
        tb = ev.table({"g": pa.int64(), "t": pa.int64(), "name": pa.string(), "rate": pa.float64()})
        g = tb["g"].to_numpy()
        n = len(g)
        self.put("infusiondrug", {
            "infusiondrugid": 1 + np.arange(n), "patientunitstayid": self.pid[g], "infusionoffset": tb["t"],
            "drugname": tb["name"], "drugrate": tb["rate"].cast(pa.string()),
            "infusionrate": pa.array(np.round(tb["rate"].to_numpy() * 60 / 16, 1)).cast(pa.string()),
            "drugamount": pa.array(np.full(n, "4")), "volumeoffluid": pa.array(np.full(n, "250")),
            "patientweight": pa.array(self.weight[g]).cast(pa.string())})
        # cultures for suspected infection, a third with an organism
        c = np.flatnonzero(self.sepsis)
        m = len(c)
        grows = self.r(m) < 0.35
        self.put("microlab", {
            "microlabid": 1 + np.arange(m), "patientunitstayid": self.pid[c],
            "culturetakenoffset": rng.integers(-180, 24 * H, m),
            "culturesite": pick(("Blood, Venipuncture", "Urine, Catheter Specimen", "Sputum, Tracheal Specimen"),
                                rng.integers(0, 3, m)),
            "organism": pick(("no growth", "Escherichia coli", "Staphylococcus aureus"),
                             np.where(grows, rng.integers(1, 3, m), 0)),
            "antibiotic": pa.array(np.full(m, "ceftriaxone"), mask=~grows),
            "sensitivitylevel": pa.array(np.full(m, "Sensitive"), mask=~grows)})
        s = np.flatnonzero(self.sepsis)
        gi, _ = expand(rng.integers(1, 3, len(s)))
        g = s[gi]
        n = len(g)
        start = rng.integers(-120, 12 * H, n)
        drug = rng.integers(0, 3, n)
        self.put("medication", {
            "medicationid": 1 + np.arange(n), "patientunitstayid": self.pid[g], "drugorderoffset": start - 10,
            "drugstartoffset": start, "drugivadmixture": pa.array(np.full(n, "No")),
            "drugordercancelled": pa.array(np.full(n, "No")),
            "drugname": pick(("VANCOMYCIN 1.25 GM IN NS 250 ML IVPB (REPACKAGE)", "PIPERACILLIN-TAZOBACTAM 3.375 G IVPB",
                              "CEFTRIAXONE 1 G IVPB"), drug),
            "dosage": pick(("1250 3", "3.375 1", "1 1"), drug), "routeadmin": pa.array(np.full(n, "IV")),
            "frequency": pick(("Q12H", "Q8H", "Daily"), drug), "prn": pa.array(np.full(n, "No")),
            "drugstopoffset": start + rng.integers(2, 7, n) * D})
        ev = Events()
        conds = (np.ones(U, bool) & (self.r(U) < 0.45), self.sepsis, self.vent, self.r(U) < 0.15, self.pressor,
                 self.r(U) < 0.1)
        for j, on in enumerate(conds):
            idx = np.flatnonzero(on)
            ev.add(g=idx, t=rng.integers(10, 600, len(idx)), s=DIAGNOSES[j][0], code=DIAGNOSES[j][1],
                   prio=pick(("Primary", "Major", "Other"), rng.integers(0, 3, len(idx))))
        tb = ev.table({"g": pa.int64(), "t": pa.int64(), "s": pa.string(), "code": pa.string(), "prio": pa.string()})
        gg = tb["g"].to_numpy()
        self.put("diagnosis", {"diagnosisid": 1 + np.arange(len(gg)), "patientunitstayid": self.pid[gg],
                               "activeupondischarge": pa.array(np.full(len(gg), "True")), "diagnosisoffset": tb["t"],
                               "diagnosisstring": tb["s"], "icd9code": tb["code"], "diagnosispriority": tb["prio"]})

    def build(self) -> None:
        create_empty(self.con, "eicu")
        self.cohort()
        self.patient()
        self.nursecharting()
        self.periodic()
        self.labs_and_io()
        self.respiratory()
        self.apache_and_exam()
        self.drugs_and_diagnoses()


def synth_eicu(out_path: str | Path, *, patients: int = 200, seed: int = 0,
               after_raw: Callable[..., object] | None = None, **knobs: float) -> Path:
    """Write a synthetic eICU-CRD database (schema eicu_crd) to ``out_path``.

    Same ``patients``, ``seed`` and knobs give identical tables; the file appears only when complete.
    Knobs as for MIMIC-IV (``aki``, ``crrt`` and ``liver`` shape MIMIC-IV only); ``after_raw`` as there.
    """
    return synthesise(out_path, "eicu", _Eicu, patients=patients, seed=seed, after_raw=after_raw, knobs=knobs)
