"""The one Rich console every command prints through, and its one rule: text reaches the terminal as
it was written. An agent's or a model's bytes (a run's cause, a diagnosis, an output cell), a user's
path, a database's contents are all shown, never obeyed:

* control characters are shown as ``\\xNN`` (``untrusted.printable``), so no byte can move the
  cursor, clear the screen or retitle the window;
* a ``str`` is never read as Rich markup or emoji codes, so ``[link=…]``, ``[black on black]`` or
  ``[/]`` in a value neither hides, restyles nor links what is shown (and cannot crash the print).

The code's own styles are the one exception: ``styled(template, *values)`` fills this code's literal
markup template with values made inert (their markup escaped), and a ``SafeConsole`` interprets
markup in that string alone. A bar's text is drawn without the console's ``render_str``: its columns
come from ``plain_column``, its status line passes ``SafeConsole.status``.
"""

from __future__ import annotations

import string
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from clinbench.untrusted import printable


class Markup(str):
    """Rich markup this code wrote, made by ``styled``: the one kind of str a ``SafeConsole`` styles."""


class _Inert(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        return escape(printable(format(value, format_spec)))


def styled(template: str, /, *values: Any, **named: Any) -> Markup:
    """``template`` (this code's literal Rich markup with ``str.format`` fields) filled with ``values``,
    each shown as written: ``styled("[red]cause:[/] {}", cause)``."""
    return Markup(_Inert().vformat(template, values, named))


class SafeConsole(Console):
    def render_str(self, text: str, **kwargs: Any) -> Text:  # every str printed or put in a table passes here
        kwargs.update(markup=isinstance(text, Markup), emoji=False)
        return super().render_str(printable(text), **kwargs)

    def status(self, status: Any, **kwargs: Any):  # a spinner reads markup from a str itself
        return super().status(self.render_str(status, highlight=False) if isinstance(status, str) else status,
                              **kwargs)


def make_console(**kwargs: Any) -> Console:
    """A ``rich.console.Console`` (same arguments) that shows every str as written (see the module)."""
    return SafeConsole(**kwargs)


def plain_column(template: str, *, style: str = ""):
    """A progress-bar column showing ``template`` (``{task.description}``, ``{task.fields[NAME]}``) filled in
    as written, in ``style``: a bar draws its columns without the console's ``render_str``."""
    from rich.progress import TextColumn  # 8 ms of import: paid only by a command that draws a bar

    class PlainColumn(TextColumn):
        def render(self, task) -> Text:
            return Text(printable(self.text_format.format(task=task)), style=self.style, justify=self.justify)

    return PlainColumn(template, style=style)
