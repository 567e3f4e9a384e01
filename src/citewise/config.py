"""Settings: where citewise keeps its data and which models it uses, from CITEWISE_* variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from platformdirs import user_data_dir

from citewise.errors import ConfigurationError

DEFAULT_EMBEDDER = "minilm"


@dataclass(frozen=True)
class Settings:
    """Process-wide settings.

    Args:
        home: where knowledge bases (one SQLite file each) and the embedding cache live.
        embedder: the registered embedder used for new knowledge bases.
        max_chars: the largest chunk, in characters.
        llm_base_url / llm_api_key / llm_model: an OpenAI-compatible chat endpoint; with no
            model configured, answers are extractive.
        store_url: where knowledge bases live (``CITEWISE_STORE_URL``): ``sqlite:///folder``,
            ``memory://``, or unset for the SQLite folder ``{home}/kb``.
        llm_gguf: a GGUF file for the local llama.cpp model (``llm_model="local"``, or set
            alone); without it the local model is reassembled from its packages.
        llm_temperature: the answer call's sampling temperature (``CITEWISE_LLM_TEMPERATURE``,
            0 by default: the same question over the same sections gets the same answer;
            planning and grading always run at 0).
        llm_threads / llm_batch_threads: the local model's threads for generating tokens and
            for reading the prompt (``CITEWISE_LLM_THREADS``, ``CITEWISE_LLM_BATCH_THREADS``;
            unset: see ``citewise.llamacpp.default_threads``).
    """

    home: Path
    embedder: str = DEFAULT_EMBEDDER
    max_chars: int = 2000
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_model: str | None = None
    llm_gguf: str | None = None
    store_url: str | None = None
    llm_temperature: float = 0.0
    llm_threads: int | None = None
    llm_batch_threads: int | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        home = env.get("CITEWISE_HOME") or user_data_dir("citewise", appauthor=False)
        max_chars = env.get("CITEWISE_MAX_CHARS", "2000")
        if not max_chars.isdigit() or int(max_chars) < 200:
            raise ConfigurationError(
                f"CITEWISE_MAX_CHARS must be an integer ≥ 200, not {max_chars!r}"
            )
        return cls(
            home=Path(home).expanduser(),
            embedder=env.get("CITEWISE_EMBEDDER", DEFAULT_EMBEDDER),
            max_chars=int(max_chars),
            llm_base_url=env.get("CITEWISE_LLM_BASE_URL") or None,
            llm_api_key=env.get("CITEWISE_LLM_API_KEY") or None,
            llm_model=env.get("CITEWISE_LLM_MODEL") or None,
            llm_gguf=env.get("CITEWISE_LLM_GGUF") or None,
            store_url=env.get("CITEWISE_STORE_URL") or None,
            llm_temperature=_temperature(env.get("CITEWISE_LLM_TEMPERATURE") or "0"),
            llm_threads=_threads(env, "CITEWISE_LLM_THREADS"),
            llm_batch_threads=_threads(env, "CITEWISE_LLM_BATCH_THREADS"),
        )

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with the given fields changed (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})  # type: ignore[arg-type]

    @property
    def kb_dir(self) -> Path:
        return self.home / "kb"

    @property
    def cache_path(self) -> Path:
        return self.home / "embedding-cache.sqlite"


def _temperature(value: str) -> float:
    try:
        temperature = float(value)
    except ValueError:
        temperature = -1.0
    if not 0.0 <= temperature <= 2.0:
        raise ConfigurationError(
            f"CITEWISE_LLM_TEMPERATURE must be a number from 0 to 2, not {value!r}"
        )
    return temperature


def _threads(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name) or ""
    if not value:
        return None
    if not value.isdigit() or not 1 <= int(value) <= 256:
        raise ConfigurationError(f"{name} must be an integer from 1 to 256, not {value!r}")
    return int(value)
