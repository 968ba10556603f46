"""Option values coerced without pydantic, exactly as Typer coerces them.

Typer 0.29 turns every command-line value (and every default, even ``--help``'s unset
``None``) into its annotated type through a pydantic ``TypeAdapter`` it builds on first use, so
every command imported pydantic (about 0.08 s of a 0.15 s start-up budget) before it began.
Our commands take plain values: str, bool, int, float, Path, an Enum, or a list of one of
these. For those, :func:`install` gives each parameter a coercer that does what Typer's adapter
does for the inputs it can vouch for (a str as it is, ``"12"`` as 12, a path through Typer's own
path checks, an Enum through Typer's own choice matching). Any other input, and every input that
would fail, goes to Typer's own coercion unchanged, so values and error messages stay Typer's.
tests/test_cli_coerce.py compares the two on the same inputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from enum import Enum
from pathlib import Path
from typing import Any, Callable, get_args, get_origin

_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,15})?")


class _Unsure(Exception):
    """The fast path cannot vouch for this input: Typer's own coercion decides."""


Leaf = Callable[[Any, Any, Any], Any]  # (value, param, ctx) -> coerced value, or raise _Unsure


def _str(value, param, ctx):
    if type(value) is str:
        return value
    raise _Unsure


def _bool(value, param, ctx):
    if type(value) is bool:
        return value
    raise _Unsure


def _number(kind: type, info) -> Leaf | None:
    if info.clamp:
        return None
    low, high = info.min, info.max

    def coerce(value, param, ctx):
        if type(value) is kind:
            number = value
        elif kind is float and type(value) is int:
            number = float(value)
        elif type(value) is str and (_INT if kind is int else _FLOAT).fullmatch(value):
            number = kind(value)
        else:
            raise _Unsure
        if (low is not None and number < low) or (high is not None and number > high):
            raise _Unsure  # Typer words the range error
        return number

    return coerce


def _path(annotation: type, info) -> Leaf:
    from typer._param_types import coerce_cli_path

    path_type = annotation

    def coerce(value, param, ctx):
        if type(value) is str and value:
            value = path_type(value)
        elif not isinstance(value, path_type):
            raise _Unsure
        try:
            return coerce_cli_path(value, info, path_type=path_type, param=param, ctx=ctx)
        except Exception:
            raise _Unsure from None  # Typer's own check raises it again, worded its way

    return coerce


def _choice(annotation: type[Enum], info) -> Leaf:
    from typer._param_types import coerce_cli_choice

    choices = list(annotation)

    def coerce(value, param, ctx):
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=info.case_sensitive, ctx=ctx)
        except ValueError:
            raise _Unsure from None

    return coerce


def _leaf(annotation: Any, info) -> Leaf | None:
    if info.parser is not None or getattr(info, "click_type", None) is not None:
        return None
    if annotation is str:
        return _str
    if annotation is bool:
        return _bool
    if annotation is int or annotation is float:
        return _number(annotation, info)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _choice(annotation, info)
    if isinstance(annotation, type) and issubclass(annotation, Path) and info.path_type in (None, annotation):
        return _path(annotation, info)
    return None


def plain_coercer(descriptor) -> Leaf | None:
    """The fast coercer for a parameter's annotation, or None when Typer's own is the only one."""
    if descriptor.file_annotation is not None:
        return None
    annotation, info = descriptor.annotation, descriptor.parameter_info
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        leaf = _leaf(item, info)
        if leaf is None:
            return None

        def coerce_list(value, param, ctx):
            items = value if isinstance(value, (list, tuple)) else [value]
            return [leaf(v, param, ctx) for v in items]

        return coerce_list
    return _leaf(annotation, info)


def install() -> None:
    """Give Typer's parameters the fast coercer where one applies (Typer without pydantic: nothing to do)."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer._param_types import coerce_cli_choice, coerce_cli_path  # noqa: F401  (the leaves use them)
        from typer.core import _TyperParameter
    except ImportError:
        return
    if [f.name for f in fields(RuntimeParam)] != ["parameter_info", "annotation"] or not hasattr(
            _TyperParameter, "get_runtime_param"):
        return  # a Typer with another coercion contract keeps its own coercion (pydantic and all)

    @dataclass(frozen=True)
    class PlainRuntimeParam(RuntimeParam):
        """Typer's runtime coercion contract, served by a plain coercer; Typer's own when unsure."""

        fast: Leaf = None  # type: ignore[assignment]
        descriptor: Any = None

        def _coerce_value(self, value, param, ctx):
            try:
                return self.fast(value, param, ctx)
            except _Unsure:
                return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    typer_runtime_param = _TyperParameter.get_runtime_param

    def get_runtime_param(self):
        if self._runtime_param is None:
            fast = plain_coercer(self.type_descriptor)
            if fast is not None:
                desc = self.type_descriptor
                self._runtime_param = PlainRuntimeParam(
                    parameter_info=desc.parameter_info, annotation=desc.annotation, fast=fast, descriptor=desc)
        return typer_runtime_param(self)

    _TyperParameter.get_runtime_param = get_runtime_param
