"""Prevalence knobs of the synthetic generators, with their defaults and checks."""

from __future__ import annotations

from dataclasses import dataclass, fields

from clinbench.errors import DataError


@dataclass(frozen=True)
class Knobs:
    """Shares of ICU stays (0..1) that carry each clinical course; ``quirks`` scales data errors."""

    septic: float = 0.35  # suspected infection: cultures followed (or preceded) by antibiotics
    ventilated: float = 0.35  # invasive mechanical ventilation
    pressors: float = 0.25  # vasopressor infusions
    aki: float = 0.30  # creatinine rise / oliguria (KDIGO stages)
    crrt: float = 0.05  # continuous renal replacement therapy (a subset of aki)
    liver: float = 0.10  # liver disease: bilirubin, INR, platelets (MELD, SOFA liver)
    quirks: float = 0.01  # real-data quirks: duplicates, error values, charting outside the stay

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
                raise DataError(f"knob {f.name}={value!r} is not a share: give a number from 0 to 1")
        if self.crrt > self.aki:
            raise DataError(f"knob crrt={self.crrt} exceeds aki={self.aki}: CRRT stays are a subset of AKI stays")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


def check_size(patients: int, seed: int) -> None:
    if not isinstance(patients, int) or patients < 1:
        raise DataError(f"patients={patients!r}: give a whole number of at least 1")
    if patients > 2_000_000:
        raise DataError(f"patients={patients} is too many for one file: use at most 2,000,000")
    if not isinstance(seed, int) or seed < 0:
        raise DataError(f"seed={seed!r}: give a whole number of 0 or more")


def known_knobs(knobs: dict) -> dict:
    """``knobs`` unchanged, or a DataError naming the unknown ones."""
    unknown = set(knobs) - set(Knobs.names())
    if unknown:
        raise DataError(f"unknown knob(s) {', '.join(sorted(unknown))}: use {', '.join(Knobs.names())}")
    return knobs
