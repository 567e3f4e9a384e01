"""Fixtures of the parsing tests: the command-line tests' empty CITEWISE_HOME, for the tests
that run a format through `citewise doc add` and search."""

from __future__ import annotations

from tests.cli.conftest import home

__all__ = ["home"]
