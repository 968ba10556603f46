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
cultures with and without organisms, some with only a chart date, every Charlson
component, and troponin T, CK-MB, CK, NT-proBNP and CRP ordered for a minority of admissions
(mostly cardiac, heart-failure or septic ones; ``mimic_markers``); heart rhythm and ectopy,
code status (charted and ordered), ICP, neuromuscular-blocker drips and boluses, and ACE-inhibitor,
ARB and NSAID prescriptions (``mimic_bedside``). Quirks (duplicates, 999999 error values, charting past the stay) occur at the
``quirks`` rate, and never when it is 0.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clinbench.ehr.mimic_iv_tables import CORE_SCHEMAS, MIMIC_IV_TABLES
from clinbench.ehr.schema import create_empty
from clinbench.ehr.synth.frames import synthesise
from clinbench.ehr.synth.mimic_bedside import Bedside
from clinbench.ehr.synth.mimic_hosp import HospTables
from clinbench.ehr.synth.mimic_icu import ICU, IcuEvents
from clinbench.ehr.synth.mimic_markers import MarkerLabs


class _Mimic(HospTables, IcuEvents, MarkerLabs, Bedside):
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
        self.marker_labs()  # it reads the coded comorbidities; drawn late, so earlier draws stay as they were
        self.bedside()  # after it, for the same reason: rhythm, code status, ICP, neuroblockers, ACEi/ARB/NSAID
        self.con.execute(f"INSERT INTO {ICU}.caregiver SELECT DISTINCT caregiver_id FROM {ICU}.chartevents "
                         "ORDER BY caregiver_id")
        return self.counts


def synth_mimic_iv(out_path: str | Path, *, patients: int = 200, seed: int = 0,
                   after_raw: Callable[..., object] | None = None, **knobs: float) -> Path:
    """Write a synthetic MIMIC-IV database (schemas mimiciv_hosp, mimiciv_icu) to ``out_path``.

    Same ``patients``, ``seed`` and knobs give identical tables. The file appears only when
    complete (written beside it, then renamed). Knobs: see ``Knobs``. ``after_raw(con, dataset)``:
    called once the raw tables are written (`data synth` passes ``clinbench.derive.raw_layer.keep``).
    """
    return synthesise(out_path, "mimic-iv", _Mimic, patients=patients, seed=seed, after_raw=after_raw, knobs=knobs)
