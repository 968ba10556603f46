"""requirements.py must name exactly the raw tables each family's reference SQL reads.

The reference derivations live in clinbench.concepts (targets/<name>.sql and the concepts
they read); their raw inputs are found from the SQL itself. When this test fails, update
``src/clinbench/ehr/requirements.py`` to the tables listed in the failure."""

from __future__ import annotations

import pytest

from clinbench.ehr.requirements import family_requirements

from clinbench.concepts import graph
from clinbench.concepts import catalog
from clinbench.derive import catalogue as tasks

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def _raw_closure(name: str, deps: dict, seen: set[str]) -> set[str]:
    raw = set(deps[name].raw)
    for derived in deps[name].derived:
        if derived not in seen:
            seen.add(derived)
            raw |= _raw_closure(derived, deps, seen)
    return raw


def test_each_family_needs_exactly_what_its_reference_reads():
    concepts = catalog.load_concepts()
    deps = graph.dependency_map(concepts)
    targets = {c.name: qualified for qualified, c in concepts.items() if c.kind == "target"}
    checked = 0
    for spec in tasks.load_catalogue().values():
        if spec.reference not in targets:
            pytest.fail(f"task {spec.id} names reference {spec.reference!r}, which has no target SQL")
        reads = _raw_closure(targets[spec.reference], deps, set())
        declared = set(family_requirements(spec.database)[spec.family])
        assert declared == reads, (
            f"{spec.database} family {spec.family}: requirements.py lists {sorted(declared)} but "
            f"{spec.reference} reads {sorted(reads)}")
        checked += 1
    assert checked == 28
