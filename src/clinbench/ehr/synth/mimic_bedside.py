"""Synthetic MIMIC-IV bedside documentation and ward drugs no score reads: rhythm, code status,
ICP, neuromuscular blockers, ACE inhibitors, ARBs and NSAIDs.

The concepts acei, arb, nsaid (prescriptions by drug name), code_status (chartevents 223758 and
'Code status' provider orders in poe / poe_detail), icp (220765, 227989), rhythm (220048,
224650/224651, 226479/226480) and neuroblock (inputevents 221555, 222062 with a rate) read these.
Texture they depend on:
- prescriptions: ACE inhibitors and ARBs (brand and generic names, sacubitril-valsartan) mostly
  for heart-failure, hypertensive-looking or kidney-disease admissions; aspirin for a third of
  admissions, a few other NSAIDs; ketorolac, which no NSAID list matches;
- code status charted at ICU admission for most stays ('Full code' mostly), changed later for some
  (DNR / DNI, comfort measures, more often before death), and a provider order per admission for
  most, with the order texts' own spellings (one with a trailing space, one with two spaces);
- heart rhythm every 4 h (sinus, sinus tachycardia, atrial fibrillation ...), ectopy type and
  frequency with most of them, a second ectopy pair now and then; two rhythms charted at once
  for a few (the concepts then aggregate);
- ICP hourly for about half of the Neuro SICU stays and a few trauma ones, a second catheter for
  some, and values outside (0, 100) mmHg that icp treats as missing;
- cisatracurium or vecuronium drips for some ventilated stays, and a bolus (no rate) that
  neuroblock leaves out.

Drawn after every other table from the same seeded generator (as the cardiac markers), so the
earlier tables' rows stay as they were; these rows are added to chartevents, inputevents and
prescriptions (with ids after theirs) and fill poe / poe_detail.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from clinbench.ehr.synth.frames import DAY, HOUR, Events, expand, grid, pick, ts
from clinbench.ehr.synth.mimic_cohort import HOSP, ICU, MINUTE, ICU_UNITS, MimicCohort

ACEI = ("Lisinopril", "Captopril", "Enalapril Maleate", "Ramipril", "Benazepril", "Quinapril", "Trandolapril")
ARB = ("Losartan Potassium", "Valsartan", "Irbesartan", "Sacubitril-Valsartan", "Candesartan", "Entresto")
NSAID = ("Ibuprofen", "Naproxen", "Celecoxib", "Indomethacin", "Meloxicam", "Diclofenac Sodium")
ASPIRIN = ("Aspirin", "Aspirin EC", "Aspirin 81 mg")
KETOROLAC = "Ketorolac"  # an NSAID none of the concepts' lists names
CODE_CHARTED = ("Full code", "DNR / DNI", "DNR (do not resuscitate)", "DNI (do not intubate)", "Comfort measures only")
CODE_ORDERED = ("Resuscitate (Full code)", "Full code  (attempt resuscitation)",
                "DNAR (DO NOT attempt resuscitation for cardiac arrest) ", "Do not resuscitate (DNR/DNI)")
RHYTHMS = ("SR (Sinus Rhythm)", "ST (Sinus Tachycardia)", "AF (Atrial Fibrillation)", "SB (Sinus Bradycardia)",
           "1st AV (First degree AV Block)", "Paced")
RHYTHM_P = (0.55, 0.18, 0.14, 0.07, 0.03, 0.03)
ECTOPY = ("None", "PVC's", "PAC's", "Bigeminy")
ECTOPY_FREQ = ("Rare", "Occasional", "Frequent", "Runs")
HEART_RHYTHM, ECTOPY_1, ECTOPY_FREQ_1, ECTOPY_2, ECTOPY_FREQ_2 = 220048, 224650, 224651, 226479, 226480
CODE_STATUS, ICP, ICP_2 = 223758, 220765, 227989
CISATRACURIUM, VECURONIUM = 221555, 222062
NEURO_UNITS = (ICU_UNITS.index("Neuro Surgical Intensive Care Unit (Neuro SICU)"), ICU_UNITS.index("Trauma SICU (TSICU)"))


class Bedside(MimicCohort):
    """Writer of the rows above (needs codes(), the chart and input writers and medications() first)."""

    def bedside(self) -> None:
        self._ward_drugs()
        self._poe_code_status()
        ev = Events()
        self._code_status(ev)
        self._rhythm(ev)
        self._icp(ev)
        self.chart(ev)
        self._neuroblock()

    def _ward_drugs(self) -> None:
        rng, A = self.rng, len(self.a_pat)
        chf = self.comorbid_p["congestive_heart_failure"][self.a_pat]
        renal = self.comorbid_p["renal_disease"][self.a_pat]
        old = self.anchor_age[self.a_pat] >= 55
        ev = Events()
        for names, share in ((ACEI, np.clip(0.08 + 0.3 * chf + 0.08 * old, 0, 0.9)),
                             (ARB, np.clip(0.04 + 0.15 * chf + 0.06 * renal, 0, 0.9)),
                             (ASPIRIN, np.clip(0.2 + 0.25 * old + 0.2 * chf, 0, 0.9)),
                             (NSAID, np.full(A, 0.05)), ((KETOROLAC,), np.full(A, 0.04))):
            idx = np.flatnonzero(self.r(A) < share)
            st = self.minutes(np.minimum(self.admit[idx] + self.u(2, 30, len(idx)) * HOUR, self.disch[idx] - HOUR))
            sp = self.minutes(np.minimum(st + self.u(0.5, 6, len(idx)) * DAY, self.disch[idx]))
            drug = rng.integers(0, len(names), len(idx))
            ev.add(a=idx, start=st, stop=sp, drug=pick(names, drug),
                   route=pick(("PO/NG", "IV") if names == (KETOROLAC,) else ("PO", "PO/NG"), rng.integers(0, 2, len(idx))))
        t = ev.table({"a": pa.int64(), "start": pa.int64(), "stop": pa.int64(), "drug": pa.string(), "route": pa.string()})
        a = t["a"].to_numpy()
        n = len(a)
        base = self.con.execute(f"SELECT coalesce(max(pharmacy_id), 60000000), count(*) FROM {HOSP}.prescriptions").fetchall()[0]
        subject = self.subject_id[self.a_pat[a]]
        seq = int(base[1]) + 1 + np.arange(n)
        self.put(f"{HOSP}.prescriptions", {
            "subject_id": subject, "hadm_id": self.hadm_id[a], "pharmacy_id": int(base[0]) + 1 + np.arange(n),
            "poe_id": pc.binary_join_element_wise(pa.array(subject).cast(pa.string()), pa.array(seq).cast(pa.string()), "-"),
            "poe_seq": seq, "starttime": ts(t["start"].to_numpy()), "stoptime": ts(t["stop"].to_numpy()),
            "drug_type": pa.array(np.full(n, "MAIN")), "drug": t["drug"], "route": t["route"],
            "doses_per_24_hrs": np.ones(n, np.float64)})

    def _poe_code_status(self) -> None:
        """A 'Code status' order for most admissions soon after admission; a DNR order later for some who die."""
        rng, A = self.rng, len(self.a_pat)
        first = np.flatnonzero(self.r(A) < 0.8)
        later = np.flatnonzero(self.r(A) < np.where(self.died, 0.5, 0.05))
        a = np.r_[first, later]
        t = np.r_[self.admit[first] + self.u(0.2, 6, len(first)) * HOUR,
                  self.admit[later] + self.u(0.3, 0.9, len(later)) * (self.disch[later] - self.admit[later])]
        t = self.minutes(np.minimum(t, self.disch[a] - MINUTE))
        value = np.r_[rng.choice(len(CODE_ORDERED), size=len(first), p=(0.6, 0.25, 0.05, 0.1)),
                      rng.choice((2, 3), size=len(later))]
        n = len(a)
        subject = self.subject_id[self.a_pat[a]]
        # numbered past every prescription's order (their poe_ids are subject-seq too)
        seq = int(self.con.execute(f"SELECT coalesce(max(poe_seq), 0) FROM {HOSP}.prescriptions").fetchall()[0][0]) + 1 + np.arange(n)
        poe_id = pc.binary_join_element_wise(pa.array(subject).cast(pa.string()), pa.array(seq).cast(pa.string()), "-")
        self.put(f"{HOSP}.poe", {
            "poe_id": poe_id, "poe_seq": seq, "subject_id": subject, "hadm_id": self.hadm_id[a], "ordertime": ts(t),
            "order_type": pa.array(np.full(n, "General Care")), "order_subtype": pa.array(np.full(n, "Code status")),
            "transaction_type": pa.array(np.full(n, "New")), "order_status": pa.array(np.full(n, "Inactive"))})
        self.put(f"{HOSP}.poe_detail", {
            "poe_id": poe_id, "poe_seq": seq, "subject_id": subject,
            "field_name": pa.array(np.full(n, "Code status")), "field_value": pick(CODE_ORDERED, value)})

    def _code_status(self, ev: Events) -> None:
        rng, S = self.rng, self.S
        idx = np.flatnonzero(self.r(S) < 0.85)
        t0 = self.minutes(self.s_in[idx] + self.u(0.1, 4, len(idx)) * HOUR)
        ok = t0 <= self.s_out[idx]
        ev.add(g=idx[ok], t=t0[ok], itemid=CODE_STATUS,
               value=pick(CODE_CHARTED, rng.choice(5, size=len(idx), p=(0.84, 0.08, 0.04, 0.02, 0.02))[ok]))
        died = self.died[self.s_adm]
        change = np.flatnonzero(self.r(S) < np.where(died, 0.6, 0.06))
        t1 = self.minutes(self.s_in[change] + self.u(0.4, 0.95, len(change)) * (self.s_out[change] - self.s_in[change]))
        ev.add(g=change, t=t1, itemid=CODE_STATUS, value=pick(CODE_CHARTED, rng.choice((1, 2, 4), size=len(change))))

    def _rhythm(self, ev: Events) -> None:
        rng = self.rng
        g, _, t = grid(self.minutes(self.s_in + self.u(0.2, 2, self.S) * HOUR), self.s_out, 4 * HOUR)
        n = len(g)
        af = self.r(self.S) < 0.12  # stays mostly in atrial fibrillation
        rhythm = np.where(af[g] & (self.r(n) < 0.85), RHYTHMS.index("AF (Atrial Fibrillation)"),
                          rng.choice(len(RHYTHMS), size=n, p=RHYTHM_P))
        ev.add(g=g, t=t, itemid=HEART_RHYTHM, value=pick(RHYTHMS, rhythm))
        two = np.flatnonzero(self.r(n) < 0.02)  # a second rhythm charted at the same time
        ev.add(g=g[two], t=t[two], itemid=HEART_RHYTHM, value=pick(RHYTHMS, rng.integers(0, len(RHYTHMS), len(two))))
        ect = np.flatnonzero(self.r(n) < 0.7)
        kind = rng.choice(len(ECTOPY), size=len(ect), p=(0.6, 0.25, 0.12, 0.03))
        ev.add(g=g[ect], t=t[ect], itemid=ECTOPY_1, value=pick(ECTOPY, kind))
        with_freq = kind > 0
        ev.add(g=g[ect][with_freq], t=t[ect][with_freq], itemid=ECTOPY_FREQ_1,
               value=pick(ECTOPY_FREQ, rng.choice(4, size=int(with_freq.sum()), p=(0.5, 0.3, 0.15, 0.05))))
        sec = ect[with_freq][self.r(int(with_freq.sum())) < 0.15]
        ev.add(g=g[sec], t=t[sec], itemid=ECTOPY_2, value=pick(ECTOPY, rng.integers(1, len(ECTOPY), len(sec))))
        ev.add(g=g[sec], t=t[sec], itemid=ECTOPY_FREQ_2, value=pick(ECTOPY_FREQ, rng.integers(0, 2, len(sec))))

    def _icp(self, ev: Events) -> None:
        rng, S = self.rng, self.S
        neuro = np.isin(self.s_unit, NEURO_UNITS)
        monitored = np.flatnonzero(self.r(S) < np.where(self.s_unit == NEURO_UNITS[0], 0.5, np.where(neuro, 0.1, 0)))
        start = self.minutes(self.s_in[monitored] + self.u(1, 12, len(monitored)) * HOUR)
        end = np.minimum(start + self.u(24, 120, len(monitored)) * HOUR, self.s_out[monitored]).astype(np.int64)
        gi, _, t = grid(start, end, HOUR)
        g = monitored[gi]
        n = len(g)
        icp = np.round(np.clip(rng.lognormal(np.log(12), 0.45, len(monitored))[gi] + rng.normal(0, 3, n), 0, 60))
        icp = np.where(self.r(n) < 0.01, np.where(self.r(n) < 0.5, 0.0, 150.0), icp)  # catheter zeroing, artefact
        ev.add(g=g, t=t, itemid=ICP, valuenum=icp)
        second = (self.r(S) < 0.3)[g]
        ev.add(g=g[second], t=t[second], itemid=ICP_2, valuenum=np.clip(icp[second] + rng.normal(0, 2, int(second.sum())), 0, None).round())

    def _neuroblock(self) -> None:
        rng, S = self.rng, self.S
        idx = np.flatnonzero(self.vent & (self.r(S) < 0.15))
        if len(idx) == 0:
            return
        item = np.where(self.r(len(idx)) < 0.7, CISATRACURIUM, VECURONIUM)
        bolus_t = self.minutes(np.maximum(self.vs[idx], self.s_in[idx]) + self.u(0, 60, len(idx)) * MINUTE)
        nseg = rng.integers(1, 8, len(idx))
        gi, pos = expand(nseg)
        g = idx[gi]
        m = len(g)
        start = bolus_t[gi] + 10 * MINUTE + pos * 4 * HOUR
        end = start + 4 * HOUR
        ok = end <= self.s_out[g]
        rate = np.round(np.where(item[gi] == CISATRACURIUM, self.u(1, 3, m), self.u(0.8, 1.7, m)), 2)
        weight = self.weight[g]
        amount = np.round(rate * weight * 240 / 1000, 3)
        b_ok = bolus_t + MINUTE <= self.s_out[idx]
        rows = {
            "g": np.r_[g[ok], idx[b_ok]], "start": np.r_[start[ok], bolus_t[b_ok]],
            "end": np.r_[end[ok], bolus_t[b_ok] + MINUTE], "itemid": np.r_[item[gi][ok], item[b_ok]],
            "amount": np.r_[amount[ok], np.where(item[b_ok] == CISATRACURIUM, 15.0, 10.0)],
            "rate": pa.array(np.r_[rate[ok], np.zeros(int(b_ok.sum()))], mask=np.r_[np.zeros(int(ok.sum()), bool),
                                                                                  np.ones(int(b_ok.sum()), bool)]),
        }
        n = len(rows["g"])
        gg = rows["g"]
        base, link_base = self.con.execute(f"SELECT coalesce(max(orderid), 9000000), coalesce(max(linkorderid), 8000000) "
                                           f"FROM {ICU}.inputevents").fetchall()[0]
        orderid = int(base) + 1 + np.arange(n)
        is_drip = np.r_[np.ones(int(ok.sum()), bool), np.zeros(int(b_ok.sum()), bool)]
        self.put(f"{ICU}.inputevents", {
            "subject_id": self.subject_id[self.s_pat[gg]], "hadm_id": self.hadm_id[self.s_adm[gg]],
            "stay_id": self.stay_id[gg], "caregiver_id": self.caregivers(n),
            "starttime": ts(rows["start"]), "endtime": ts(rows["end"]),
            "storetime": ts(rows["start"] + rng.integers(1, 60, n) * MINUTE), "itemid": rows["itemid"].astype(np.int32),
            "amount": rows["amount"], "amountuom": pa.array(np.full(n, "mg")), "rate": rows["rate"],
            "rateuom": pa.array(np.full(n, "mcg/kg/min"), mask=~is_drip), "orderid": orderid,
            # one per stay's drip, numbered past every earlier drip's (angiotensin II's start at 8,000,000)
            "linkorderid": np.where(is_drip, int(link_base) + 1 + np.searchsorted(idx, gg), orderid),
            "ordercategoryname": pick(("02-Fluids (Crystalloids)", "01-Drips", "05-Med Bolus"),
                                      np.where(is_drip, 1, 2)),
            "ordercomponenttypedescription": pa.array(np.full(n, "Main order parameter")),
            "ordercategorydescription": pick(("Continuous Med", "Drug Push"), (~is_drip).astype(int)),
            "patientweight": self.weight[gg], "isopenbag": np.zeros(n, np.int16),
            "continueinnextdept": np.zeros(n, np.int16),
            "statusdescription": pick(("FinishedRunning",), np.zeros(n, int)), "originalamount": rows["amount"],
            "originalrate": rows["rate"],
        })
