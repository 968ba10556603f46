"""The project's layering, read from every module's imports (top-level and inside functions).

The allowed graph follows ARCHITECTURE.md's data flow: ehr -> concepts -> derive -> agents ->
campaign -> stats -> report, with dx beside derive on the same agents, campaign, records, stats
and report; ``records`` (run records and the store) and the small helpers sit at the bottom and
import none of them. A layer may import the layers listed for it and nothing else; the CLI,
``inspect_tasks`` and ``__main__`` sit on top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import clinbench

BOTTOM = {"errors", "atomic", "cache", "write_errors", "fileid", "versions", "untrusted", "duck", "plain", "column_score",
          "clinbench"}  # clinbench: __version__
ALLOWED: dict[str, set[str]] = {
    "records": set(),
    "ehr": {"records"},
    "concepts": {"ehr"},
    "derive": {"ehr", "concepts", "records"},
    # the built-in reference agents read the task catalogue and its reference
    "agents": {"records", "derive"},
    "campaign": {"records", "agents", "derive", "concepts", "ehr"},
    "stats": {"records"},
    "dx": {"records", "agents", "campaign", "stats", "ehr"},
    "report": {"records", "stats", "dx", "derive", "campaign", "concepts", "agents"},
    "inspect_tasks": {"records", "derive", "campaign", "agents"},
}
TOP = {"cli", "serve", "__main__"}  # the command line and the web app may import anything
# Single arrows the graph does not have, each with its reason; nothing else may be added here.
EXCEPTIONS = {
    ("clinbench.derive.harbor", "clinbench.agents.limits"): "an exported Harbor task carries the sandbox's output cap",
}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "clinbench"


def imports(source: str, package: str = "clinbench") -> list[tuple[int, str]]:
    """Every module of ``package`` a module's text imports, with its line, wherever the import is."""
    def of(name: str) -> bool:
        return name == package or name.startswith(package + ".")

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if of(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and of(node.module or ""):
            found.append((node.lineno, node.module))
    return found


def modules(root: Path):
    """(module name, source text) of every module under ``root``, the ``clinbench`` package's folder."""
    for path in sorted(root.rglob("*.py")):
        yield (".".join(("clinbench", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"),
               path.read_text(encoding="utf-8"))


def forbidden(root: Path) -> list[str]:
    """``module:line -> imported`` for each import the allowed graph does not have."""
    bad = []
    for module, source in modules(root):
        here = layer_of(module)
        for line, target in imports(source):
            there = layer_of(target)
            if here in TOP or there == here or there in BOTTOM or (module, target) in EXCEPTIONS:
                continue
            if here in BOTTOM or there not in ALLOWED.get(here, set()):
                bad.append(f"{module}:{line} -> {target}")
    return bad


def test_no_module_imports_against_the_layering():
    assert forbidden(Path(clinbench.__file__).parent) == []


def test_the_check_fails_on_a_planted_forbidden_import(tmp_path):
    root = tmp_path / "clinbench"
    for name, text in {"agents/llm.py": "def f():\n    from clinbench.campaign.campaign import run_campaign\n",
                       "ehr/load.py": "import clinbench.derive.raw_layer\n",
                       "stats/runs.py": "from clinbench.records import RunRecord\n",
                       "records/__init__.py": "from clinbench.stats import runs\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert forbidden(root) == ["clinbench.agents.llm:2 -> clinbench.campaign.campaign",
                               "clinbench.ehr.load:1 -> clinbench.derive.raw_layer",
                               "clinbench.records:1 -> clinbench.stats"]


# DuckDB's Python layer (40-110 ms of imports a process, measured) is imported only where it is used, each for its reason.
DUCKDB_PACKAGE_USERS = {
    "clinbench.duck": "the one place the rest import DuckDB from",
    "clinbench.agents.toolbox": "mounts the package's folder in an agent's sandbox",
    "clinbench.agents.duckdb_shell": "runs in the sandbox with that package alone",
    "clinbench.records.store": "runs_table: .sql() and Arrow results are the Python layer's",
    "clinbench.ehr.synth.frames": "scans pyarrow tables (the Python layer's replacement scans)",
    "clinbench.ehr.synth.eicu": "scans pyarrow tables",
    "clinbench.ehr.synth.mimic_cohort": "scans pyarrow tables",
}


def duckdb_package_imports(root: Path) -> list[str]:
    """``module:line`` of each import of the ``duckdb`` package by a module that should use ``clinbench.duck``."""
    return [f"{module}:{line}" for module, source in modules(root) if module not in DUCKDB_PACKAGE_USERS
            for line, _ in imports(source, "duckdb")]


def test_modules_run_duckdb_through_its_extension_alone():
    assert duckdb_package_imports(Path(clinbench.__file__).parent) == []


def test_the_duckdb_check_fails_on_a_planted_package_import(tmp_path):
    root = tmp_path / "clinbench"
    (root / "derive").mkdir(parents=True)
    (root / "derive" / "score.py").write_text("from clinbench.duck import duckdb\n\ndef f():\n    import duckdb\n")
    (root / "records.py").write_text("from duckdb import connect\n")
    assert duckdb_package_imports(root) == ["clinbench.derive.score:4", "clinbench.records:1"]
