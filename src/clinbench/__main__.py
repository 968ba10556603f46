"""`python -m clinbench` (and the `clinbench` script): the command line.

`clinbench score TASK OUTPUT --db DB --json [--scored-columns value|required]`, the one command a
scoring loop runs once per output, is answered here without loading Typer and the command tree
(about 0.1 s of CPU a process: benchmarks/score_vs_m4bench.py). Anything else, and any error
(its message comes from the full command line, which runs the command again), goes to
``clinbench.cli``.
"""

from __future__ import annotations

import os
import sys


def _score_json(args: list[str]) -> bool:
    """Run ``args`` if they are exactly a JSON `score` command; False when the full command line must."""
    if not args or args[0] != "score" or "--json" not in args:
        return False
    positional, options = [], {"--db": None, "--scored-columns": "value"}
    rest = iter(args[1:])
    for arg in rest:
        name, eq, value = arg.partition("=")
        if arg == "--json":
            continue
        if name in options and not arg.startswith("---"):
            options[name] = value if eq else next(rest, None)
            if options[name] is None:
                return False
        elif arg.startswith("-"):
            return False  # --help, a typo, an old spelling: the full command line says what to do
        else:
            positional.append(arg)
    if len(positional) != 2 or options["--db"] is None or options["--scored-columns"] not in ("value", "required"):
        return False
    from clinbench.duck import connect_meanwhile

    started = connect_meanwhile()  # DuckDB starts while the scoring modules import (20-30 ms)
    from clinbench.derive.score import Scorer, score_command

    try:
        result = score_command(positional[0], positional[1], options["--db"], scored_columns=options["--scored-columns"],
                               scorer=Scorer(con=started()))
    except Exception:  # noqa: BLE001 - whatever it is, the full command line reports it as it always has
        return False
    sys.stdout.write(result.to_json() + "\n")
    sys.stdout.flush()
    return True


def main() -> None:
    try:
        if _score_json(sys.argv[1:]):
            # The score is printed and flushed and nothing is left to write: end here, without closing the
            # scorer's in-memory DuckDB or finalising the interpreter (15-20 ms of a 0.4 s score process).
            os._exit(0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    from clinbench.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
