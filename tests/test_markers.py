"""The ``slow`` marker: every module SLOW_MODULES names exists, and its tests carry the mark."""

from __future__ import annotations

import pytest

from tests.conftest import REPO, SLOW_MODULES, module_of


@pytest.mark.parametrize("module", sorted(SLOW_MODULES))
def test_each_slow_module_is_a_test_module(module: str) -> None:
    # A renamed module would silently join the fast subset.
    assert (REPO / "tests" / f"{module.replace('.', '/')}.py").is_file()


def test_node_ids_name_their_module() -> None:
    assert module_of("tests/cli/test_main.py::test_help[x]") == "cli.test_main"
    assert module_of("tests/test_doors.py::test_every_door") == "test_doors"


def test_this_module_is_fast(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("slow") is None
    assert "test_doors" in SLOW_MODULES
