"""Synthetic MIMIC-IV and eICU databases: the embedded default for users without credentialed data.

``synth_mimic_iv(out, patients=200, seed=0, **knobs)`` and ``synth_eicu(...)`` write DuckDB files
with the same schemas, tables, columns and types as the PhysioNet loaders. Knobs (shares of ICU
stays, 0..1) are the fields of ``Knobs``.
"""

from clinbench.ehr.synth.eicu import synth_eicu
from clinbench.ehr.synth.knobs import Knobs
from clinbench.ehr.synth.mimic_iv import synth_mimic_iv

__all__ = ["Knobs", "synth_eicu", "synth_mimic_iv"]
