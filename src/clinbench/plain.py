"""Records written by hand, for the modules a scoring process imports.

``clinbench score`` runs once per agent output in a scoring loop, so its fixed cost is part of
every score (benchmarks/score_vs_m4bench.py). Importing ``dataclasses`` (which imports
``inspect``, ``ast``, ``dis`` and ``tokenize``) and generating the methods of the score path's
seven classes took 15-16 ms of a 0.27-0.29 s score process. The classes on that path (the task
spec, the score result and its columns, the reference and the output's header) set their
attributes in an ``__init__`` of their own and take equality, ``repr`` and ``replace`` from here,
as a dataclass would give them. Everything else in clinbench uses dataclasses.
"""

from __future__ import annotations

from typing import Any


class Plain:
    """Equality and ``repr`` over the instance's attributes, in the order ``__init__`` set them (with ``_set``)."""

    __hash__ = None  # type: ignore[assignment]  # equal by value and mutable, as a dataclass with eq

    def _set(self, **values: Any) -> None:
        vars(self).update(values)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` (``__init__`` runs again, so a frozen record's checks hold)."""
        return type(self)(**{**vars(self), **changes})


class Frozen(Plain):
    """A ``Plain`` record whose attributes cannot be set after ``__init__``."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}' of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field '{name}' of a frozen {type(self).__name__}")
