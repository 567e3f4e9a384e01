"""Fixtures of the command-line tests: a CITEWISE_HOME per test, or the session's LGOS home."""

from __future__ import annotations

from pathlib import Path

import pytest

# Chat-model settings a developer's environment may carry; without them answers are extractive.
MODEL_ENV = ("CITEWISE_LLM_MODEL", "CITEWISE_LLM_GGUF", "CITEWISE_LLM_BASE_URL")


def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in MODEL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty CITEWISE_HOME under ``tmp_path`` (returned: ``tmp_path``, for input files)."""
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    no_model(monkeypatch)
    return tmp_path


@pytest.fixture
def lgos_env(lgos_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The session's home with the LGOS 0.12.0 docs indexed as ``lgos``, without a model."""
    monkeypatch.setenv("CITEWISE_HOME", str(lgos_home))
    no_model(monkeypatch)
    return lgos_home
