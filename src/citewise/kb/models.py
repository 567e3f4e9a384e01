"""The one place that picks the chat model: an explicit model, else the one settings configure.

Chat models are named parts (:data:`CHAT_MODELS`, entry-point group ``citewise.chat_models``):
a registered name, as ``CITEWISE_LLM_MODEL`` or a ``chat_model`` option, selects the factory
registered under it, called with the settings (``Settings`` → a LangChain chat model);
``local`` is llama.cpp; any other name is a model at the OpenAI-compatible endpoint
(``CITEWISE_LLM_BASE_URL``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from citewise.config import Settings
from citewise.llm import chat_model, chat_model_configured
from citewise.registry import Registry

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["CHAT_MODELS", "ChatModelFactory", "ChatModels", "make_chat_model", "model_configured"]

ModelFactory = Callable[[], "BaseChatModel | None"]
ChatModelFactory = Callable[[Settings], "BaseChatModel | None"]
"""What a chat model is registered as: the settings (temperature, threads…) → the model."""

CHAT_MODELS: Registry[ChatModelFactory] = Registry(
    "chat_model", {"local": "citewise.llm:chat_model"}
)


def model_configured(settings: Settings) -> bool:
    """True when ``settings`` name a chat model (answers are written, not extractive)."""
    return chat_model_configured(settings)


def make_chat_model(settings: Settings) -> BaseChatModel | None:
    """The chat model ``settings`` configure (an OpenAI-compatible endpoint or the local
    llama.cpp model, or one registered by name), or None: answers are then extractive. Every
    door gets its model here."""
    name = settings.llm_model
    if name is not None and name in CHAT_MODELS:
        return CHAT_MODELS.get(name)(settings)
    return chat_model(settings)


class ChatModels:
    """Chat models made once each: one per model configuration, or the injected one.

    Args:
        factory: makes the model instead of the settings (tests inject a scripted model;
            None from it means extractive answers).
    """

    def __init__(self, factory: ModelFactory | None = None) -> None:
        self._factory = factory
        self._made: dict[tuple[str | None, ...], BaseChatModel | None] = {}
        self._lock = threading.Lock()

    def get(self, settings: Settings) -> BaseChatModel | None:
        key = (
            ("injected",)
            if self._factory is not None
            else (
                settings.llm_base_url,
                settings.llm_api_key,
                settings.llm_model,
                settings.llm_gguf,
                str(settings.llm_temperature),
            )
        )
        with self._lock:
            if key not in self._made:
                factory = self._factory
                self._made[key] = factory() if factory is not None else make_chat_model(settings)
            return self._made[key]
