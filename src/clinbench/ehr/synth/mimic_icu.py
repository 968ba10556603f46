"""Synthetic MIMIC-IV ICU events: chartevents, inputevents, outputevents, procedureevents, datetimeevents.

Charted the way the public concepts read them: vitals hourly with °F and °C temperature items,
GCS every 1-4 h with "No Response-ETT" while intubated, real O2 device and ventilator-mode texts
with episode gaps around the 14 h rule, CRRT settings, weights and heights; vasopressor dose
ladders that include norepinephrine 0.1 mcg/kg/min exactly, dopamine 5 and 15 and vasopressin in
units/hour; hourly urine output with the GU irrigant pair and stays at exactly 0.5 or 0.3 mL/kg/h.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from clinbench.ehr.synth.frames import DAY, HOUR, Events, ceil_hour, expand, floor_day, grid, group_cumsum, pick, ts
from clinbench.ehr.synth.mimic_cohort import ICU, MINUTE, MimicCohort

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
    "phenylephrine": (221749, "mcg/kg/min", "mg", (0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)),
    "dopamine": (221662, "mcg/kg/min", "mg", (2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0)),
    "vasopressin": (222315, "units/hour", "units", (1.2, 1.8, 2.4, 2.4, 2.4, 3.6)),
    "dobutamine": (221653, "mcg/kg/min", "mg", (2.5, 5.0, 7.5, 10.0)),
    "milrinone": (221986, "mcg/kg/min", "mg", (0.125, 0.25, 0.375, 0.5)),
    "angiotensin_ii": (229709, "ng/kg/min", "mg", (5.0, 10.0, 20.0, 40.0)),
}

# antibiotics given for suspected infection: (drug, route, doses a day)

class IcuEvents(MimicCohort):
    """Writers of the mimiciv_icu event tables, each derived from the cohort's latents."""

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
        peak = self.sepsis * self.u(0.6, 2.4, S)  # fever spikes of septic stays, some above 39 °C
        fever = peak[tg] * np.clip(np.sin(2 * np.pi * th / 30 + self.stay_phase[tg]), 0, None)
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
        # a tenth of stays go 6-9 h without a GCS (asleep, off the unit): older values stop carrying
        gap_start = self.s_in + (self.u(4, 20, S) * HOUR).astype(np.int64)
        gap_end = gap_start + (self.u(6, 9, S) * HOUR).astype(np.int64)
        keep = ~((self.r(S) < 0.1)[g] & (t >= gap_start[g]) & (t < gap_end[g]))
        g, t = g[keep], t[keep]
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
        trach = self.trach[g] & (t > self.vs[g] + 48 * HOUR)
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
            fixed = name == "vasopressin"  # a fixed-dose drug: few, long segments
            nseg = rng.integers(1, 4, len(idx)) if fixed else rng.integers(2, 31, len(idx))
            gi, pos = expand(nseg)
            g = idx[gi]
            m = len(g)
            # rate changes about hourly (median segment ~1 h, as charted in MIMIC-IV)
            dur = np.round(np.clip(rng.lognormal(np.log(720 if fixed else 60), 0.8, m), 5, 2880)) * MINUTE
            pause = np.where((pos > 0) & (self.r(m) < 0.1), self.u(15, 60, m).astype(np.int64) * MINUTE, 0)
            offset = first[g] + (self.u(0, 4, len(idx)) * HOUR).astype(np.int64)[gi] // MINUTE * MINUTE
            steps = dur + pause
            cum = np.cumsum(steps) - steps
            cum -= np.repeat(cum[np.flatnonzero(pos == 0)], nseg)
            start = offset + cum + pause
            end = start + dur
            ok = end <= self.s_out[g]
            level0 = rng.integers(len(ladder) // 4, 3 * len(ladder) // 4 + 1, len(idx))  # start mid-ladder
            walk = np.where(pos == 0, 0, rng.choice([-1, 0, 1], size=m, p=[0.35, 0.3, 0.35]))
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
        # out = urine + irrigant, except when clots hold irrigant back: the net hourly output goes negative
        retained = self.r(len(g)) < 0.1
        out = np.where(retained, np.round(flush * 0.7 / 5) * 5, value + flush)
        ev.add(g=g[irrigant], t=t[irrigant], itemid=227489, value=out[irrigant])
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
        S = self.S
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
