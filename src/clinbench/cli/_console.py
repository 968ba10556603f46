"""The one Rich console every command prints through: text reaches the terminal without its
control characters, so an agent's or a model's bytes (a run's cause, a diagnosis, an output
cell) cannot move the cursor, clear the screen or retitle the window (``untrusted.printable``)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from clinbench.untrusted import printable


class SafeConsole(Console):
    def render_str(self, text: str, **kwargs: Any) -> Text:  # every str printed or put in a table passes here
        return super().render_str(printable(text), **kwargs)


def make_console(**kwargs: Any) -> Console:
    """A ``rich.console.Console`` (same arguments) that shows control characters as ``\\xNN``."""
    return SafeConsole(**kwargs)
