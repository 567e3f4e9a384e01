"""Helpers of the command-line tests: run ``citewise`` in-process and read what it printed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from citewise.cli import main
from tests.conftest import LGOS_SITE, LGOS_VERSION

BASE = f"{LGOS_SITE}{LGOS_VERSION}/"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run a command that must succeed; what it printed on stdout."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    return json.loads(run(capsys, *argv))


def fail(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run a command that must fail with a one-line error; that line."""
    assert main(list(argv)) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("citewise: error: ")
    return err.strip()
