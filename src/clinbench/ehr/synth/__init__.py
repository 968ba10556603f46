"""Synthetic MIMIC-IV and eICU databases: the embedded default for users without credentialed data.

``synth_mimic_iv(out, patients=200, seed=0, **knobs)`` and ``synth_eicu(...)`` write DuckDB files
with the same schemas, tables, columns and types as the PhysioNet loaders. Knobs (shares of ICU
stays, 0..1) are the fields of ``Knobs``.
"""

from clinbench.ehr.synth.knobs import Knobs

__all__ = ["Knobs", "synth_eicu", "synth_mimic_iv"]


def __getattr__(name: str):
    # The generators import DuckDB and numpy; load them on first use so `clinbench data --help` stays fast.
    if name == "synth_eicu":
        from clinbench.ehr.synth.eicu import synth_eicu

        return synth_eicu
    if name == "synth_mimic_iv":
        from clinbench.ehr.synth.mimic_iv import synth_mimic_iv

        return synth_mimic_iv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
