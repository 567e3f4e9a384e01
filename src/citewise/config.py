"""Settings: the one reader of the environment (CITEWISE_* variables): the process's data
folder and models, and each stage's typed settings, read when the stage runs."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from platformdirs import user_data_dir

from citewise.errors import ConfigurationError

DEFAULT_EMBEDDER = "minilm"


def environment() -> Mapping[str, str]:
    """The process environment. Every other module takes its values from here (or from the
    typed settings below), so one grep finds every variable citewise reads."""
    return os.environ


def child_environment(**extra: str) -> dict[str, str]:
    """The environment for a child process: this one's, with ``extra`` set."""
    return {**os.environ, **extra}


def set_variables(values: Mapping[str, str | None]) -> None:
    """Set (or, for None, unset) variables in this process: a parse worker takes on its
    parent's current settings this way, since it started with the environment of its start."""
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


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
        parse: how files are parsed, with the size limits on what is ingested (None: read
            from ``CITEWISE_PARSE_*`` and ``CITEWISE_MAX_*`` when an ingest runs, see
            :meth:`parsing`).
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
    parse: ParseSettings | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = environment() if environ is None else environ
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

    def parsing(self) -> ParseSettings:
        """The parse settings and size limits an ingest uses: :attr:`parse` when given, else
        read from the environment now (a bad value there fails the ingest, not the search)."""
        return self.parse if self.parse is not None else ParseSettings.from_env()

    @property
    def kb_dir(self) -> Path:
        return self.home / "kb"

    @property
    def cache_path(self) -> Path:
        return self.home / "embedding-cache.sqlite"

    @property
    def models_dir(self) -> Path:
        """Files prepared from the embedding model once per home (``embedding/prepared.py``)."""
        return self.home / "models"


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


# Each stage's settings: read when the stage runs (not at import), one area at a time, so a
# bad value in one area fails only the work that uses it.

MIB = 1024 * 1024
MAX_SECTIONS = 50_000
PARSE_SECONDS = 10.0
PARSE_MEMORY_MIB = 512
PARSE_SLOTS = 2
PARSE_ISOLATION = ("heavy", "all", "off")


@dataclass(frozen=True)
class Limits:
    """Size limits on what is ingested, each checked before the work it would make
    expensive (see :mod:`citewise.limits`); past one the file is refused, nothing indexed.

    Args:
        max_file_bytes: a file larger than this is refused before any parser sees it
            (``CITEWISE_MAX_FILE_MB``, 16 MiB).
        max_text_bytes: parsed text (UTF-8) larger than this is refused before chunking
            (``CITEWISE_MAX_TEXT_MB``, 4 MiB).
        max_sections: sections per document (each heading starts one): more is a
            generated or hostile file (``CITEWISE_MAX_SECTIONS``, 50,000).
        max_unpacked_bytes: what a zipped format (DOCX) may expand to, so a zip bomb is
            refused unread (0, the default: four times ``max_file_bytes``; pictures barely
            compress, a document's XML takes the rest).
        max_zip_ratio: how many times a zip member over 1 MiB may expand (Word's XML
            deflates about 5-20 to 1; 345 to 1, 29 KB to 10 MB, is a file made to be
            expensive).
        max_pdf_pages: pages per PDF (``CITEWISE_MAX_PDF_PAGES``, 2,000).
        max_pdf_page_content_bytes / max_pdf_content_bytes: decoded content stream per
            page (a page of text draws 2-50 KB; pypdf reads drawing operators at about
            60 KB/s, so 1 MiB is already seconds of work) and of all pages together (16 MiB:
            more than pypdf reads within a parse budget).
        max_pdf_table_pages / max_pdf_table_content_bytes: pages given to the (slow) table
            finder per PDF, and the largest page content it reads (a page of 100,000
            drawing operators is a figure, not a table, and costs minutes there).
        max_table_columns / max_table_cells: a table (CSV, DOCX, PDF) wider or larger than
            this is data, not documentation, and its header repeated in every chunk would
            multiply it.
        max_ocr_pages: pages recognised by OCR per PDF (``CITEWISE_MAX_OCR_PAGES``, 200).
        ocr_page_seconds: the time each page sent to OCR adds to the parse budget
            (Tesseract takes a second or more a page; 2,000 blank pages would hold a worker
            for many minutes, hence the page limit).
    """

    max_file_bytes: int = 16 * MIB
    max_text_bytes: int = 4 * MIB
    max_sections: int = MAX_SECTIONS
    max_unpacked_bytes: int = 0
    max_zip_ratio: int = 100
    max_pdf_pages: int = 2000
    max_pdf_page_content_bytes: int = MIB
    max_pdf_content_bytes: int = 16 * MIB
    max_pdf_table_pages: int = 20
    max_pdf_table_content_bytes: int = 256 * 1024
    max_table_columns: int = 1000
    max_table_cells: int = 500_000
    max_ocr_pages: int = 200
    ocr_page_seconds: float = 15.0

    def __post_init__(self) -> None:
        if not self.max_unpacked_bytes:
            object.__setattr__(self, "max_unpacked_bytes", 4 * self.max_file_bytes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        env = environment() if environ is None else environ
        default = cls()
        return cls(
            max_file_bytes=_mib(env, "CITEWISE_MAX_FILE_MB", default.max_file_bytes),
            max_text_bytes=_mib(env, "CITEWISE_MAX_TEXT_MB", default.max_text_bytes),
            max_sections=positive_integer(env, "CITEWISE_MAX_SECTIONS", default.max_sections),
            max_pdf_pages=positive_integer(env, "CITEWISE_MAX_PDF_PAGES", default.max_pdf_pages),
            max_ocr_pages=positive_integer(env, "CITEWISE_MAX_OCR_PAGES", default.max_ocr_pages),
        )


def _mib(env: Mapping[str, str], name: str, default: int) -> int:
    """Bytes from a variable in MiB (``0.5`` is 512 KiB), at least one byte; ``inf`` is
    refused like any other value that is no size."""
    mib = positive_number(env, name, default / MIB)
    if not math.isfinite(mib):
        raise ConfigurationError(f"{name} must be a positive number, not {env[name]!r}")
    return max(1, round(mib * MIB))


@dataclass(frozen=True)
class ParseSettings:
    """How files are parsed.

    Args:
        concurrency: parses at once per installation (``CITEWISE_PARSE_CONCURRENCY``, 2).
        isolation: which files a worker process parses (``CITEWISE_PARSE_ISOLATION``):
            ``heavy`` (default), ``all`` or ``off``.
        seconds / memory_mib: what one parse may spend (``CITEWISE_PARSE_SECONDS``, 10;
            ``CITEWISE_PARSE_MEMORY_MB``, 512).
        ocr_languages: Tesseract's language codes (``CITEWISE_OCR_LANGUAGES``, ``eng``).
        limits: the size limits on files and what is parsed from them (:class:`Limits`).
    """

    concurrency: int = PARSE_SLOTS
    isolation: str = "heavy"
    seconds: float = PARSE_SECONDS
    memory_mib: int = PARSE_MEMORY_MIB
    ocr_languages: str = "eng"
    limits: Limits = field(default_factory=Limits)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ParseSettings:
        env = environment() if environ is None else environ
        slots = env.get("CITEWISE_PARSE_CONCURRENCY", "").strip()
        isolation = env.get("CITEWISE_PARSE_ISOLATION", "").strip().lower() or "heavy"
        if isolation not in PARSE_ISOLATION:
            raise ConfigurationError(
                f"CITEWISE_PARSE_ISOLATION must be one of {', '.join(PARSE_ISOLATION)}, "
                f"not {isolation!r}"
            )
        return cls(
            concurrency=int(slots) if slots.isdigit() and int(slots) > 0 else PARSE_SLOTS,
            isolation=isolation,
            seconds=positive_number(env, "CITEWISE_PARSE_SECONDS", PARSE_SECONDS),
            memory_mib=int(positive_number(env, "CITEWISE_PARSE_MEMORY_MB", PARSE_MEMORY_MIB)),
            ocr_languages=env.get("CITEWISE_OCR_LANGUAGES", "").strip() or "eng",
            limits=Limits.from_env(env),
        )


VISION_VARIABLES = ("CITEWISE_VISION_MODEL", "CITEWISE_VISION_BASE_URL", "CITEWISE_VISION_API_KEY")


@dataclass(frozen=True)
class VisionSettings:
    """The model that describes images (``CITEWISE_VISION_MODEL``; empty: descriptions
    are off), its endpoint (``CITEWISE_VISION_BASE_URL``, else ``CITEWISE_LLM_BASE_URL``)
    and key (``CITEWISE_VISION_API_KEY``)."""

    model: str = ""
    base_url: str = ""
    api_key: str = "unused"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> VisionSettings:
        env = environment() if environ is None else environ
        return cls(
            model=env.get("CITEWISE_VISION_MODEL", "").strip(),
            base_url=(
                env.get("CITEWISE_VISION_BASE_URL", "").strip()
                or env.get("CITEWISE_LLM_BASE_URL", "").strip()
            ),
            api_key=env.get("CITEWISE_VISION_API_KEY", "").strip() or "unused",
        )


@dataclass(frozen=True)
class EmbeddingSettings:
    """The remote embedder's endpoint, model and key (``CITEWISE_EMBEDDING_BASE_URL``,
    ``CITEWISE_EMBEDDING_MODEL``, ``CITEWISE_EMBEDDING_API_KEY``; None: unset)."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> EmbeddingSettings:
        env = environment() if environ is None else environ
        return cls(
            base_url=env.get("CITEWISE_EMBEDDING_BASE_URL") or None,
            model=env.get("CITEWISE_EMBEDDING_MODEL") or None,
            api_key=env.get("CITEWISE_EMBEDDING_API_KEY") or None,
        )


STORE_TIMEOUT = 3.0


@dataclass(frozen=True)
class StoreSettings:
    """The store's settings.

    Args:
        timeout: seconds a request may wait for the store (``CITEWISE_STORE_TIMEOUT``, 3).
        ann_threshold: ``CITEWISE_ANN_THRESHOLD`` as written (None: unset); the store
            parses it with the store URL's own ``ann_threshold``.
    """

    timeout: float = STORE_TIMEOUT
    ann_threshold: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> StoreSettings:
        env = environment() if environ is None else environ
        return cls(timeout=_store_timeout(env), ann_threshold=env.get("CITEWISE_ANN_THRESHOLD"))


@dataclass(frozen=True)
class ServiceSettings:
    """Settings of the service's parts that are not the server's.

    Args:
        reranker_dir: the local ONNX cross-encoder (``CITEWISE_RERANKER_DIR``; None: unset).
        feedback_questions: whether feedback keeps the question text
            (``CITEWISE_FEEDBACK_QUESTIONS`` = 1, true or yes).
        embedder: ``CITEWISE_EMBEDDER`` alone (None: unset), for ``citewise --version``,
            which must not fail on a bad setting elsewhere.
    """

    reranker_dir: str | None = None
    feedback_questions: bool = False
    embedder: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServiceSettings:
        env = environment() if environ is None else environ
        return cls(
            reranker_dir=env.get("CITEWISE_RERANKER_DIR") or None,
            feedback_questions=env.get("CITEWISE_FEEDBACK_QUESTIONS", "").lower()
            in {"1", "true", "yes"},
            embedder=env.get("CITEWISE_EMBEDDER") or None,
        )


def positive_number(env: Mapping[str, str], name: str, default: float) -> float:
    """The number ``name`` holds (``default`` when unset); anything not above 0, or not a
    number (``nan`` included), is a ConfigurationError naming the variable."""
    value = env.get(name, "").strip()
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise ConfigurationError(f"{name} must be a positive number, not {value!r}")
    return number


def positive_integer(env: Mapping[str, str], name: str, default: int) -> int:
    """The whole number ``name`` holds (``default`` when unset); anything else, or not above
    0, is a ConfigurationError naming the variable."""
    value = env.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ConfigurationError(f"{name} must be a positive whole number, not {value!r}")
    return int(value)


def _store_timeout(env: Mapping[str, str]) -> float:
    value = env.get("CITEWISE_STORE_TIMEOUT", "").strip()
    if not value:
        return STORE_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= 3600:
        raise ConfigurationError(
            f"CITEWISE_STORE_TIMEOUT must be a number of seconds in (0, 3600], not {value!r}"
        )
    return seconds
