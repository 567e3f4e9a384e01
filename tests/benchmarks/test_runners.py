"""Every benchmark runner is ``python -m benchmarks.NAME`` from a checkout, outside the wheel."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO

RUNNERS = ("cold_cli", "ingest", "langrag", "pages", "parsers", "serve", "sites", "store", "verify")


@pytest.mark.parametrize("name", RUNNERS)
def test_each_runner_has_a_command_line(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    if not hasattr(module, "main"):  # a package: its __main__
        module = importlib.import_module(f"benchmarks.{name}.__main__")
    main = module.main
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m benchmarks.{name}")


def test_python_m_runs_a_runner_from_the_repository_root() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.sites", "--help"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--root" in done.stdout


def test_the_wheel_holds_citewise_only() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/citewise"]


def test_the_product_keeps_only_the_benchmarks_users_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from citewise.cli import main

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    assert "{beir,embed,latency}" in capsys.readouterr().out
