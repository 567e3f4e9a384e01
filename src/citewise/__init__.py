"""citewise: answers questions about a documentation set and cites the exact sections it used.

The public Python API. Names are imported on first use (PEP 562), so ``import citewise.store``
or a command-line start does not load the whole package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Answer": "citewise.models",
    "Chunk": "citewise.models",
    "Citation": "citewise.models",
    "Document": "citewise.models",
    "Hit": "citewise.models",
    "Section": "citewise.models",
    "Verification": "citewise.models",
    "CitationSupport": "citewise.models",
    "CitewiseError": "citewise.errors",
    "ConfigurationError": "citewise.errors",
    "EmbeddingError": "citewise.errors",
    "KnowledgeBaseError": "citewise.errors",
    "MissingExtraError": "citewise.errors",
    "ModelError": "citewise.errors",
    "SourceError": "citewise.errors",
    "Settings": "citewise.config",
    "CrawlLimits": "citewise.sources.crawl_limits",
    "SearchOptions": "citewise.options",
    "KBConfig": "citewise.kb",
    "IndexStrategy": "citewise.kb",
    "IndexReport": "citewise.kb",
    "KnowledgeBase": "citewise.kb",
    "Library": "citewise.kb",
    "Status": "citewise.kb",
    "TextDelta": "citewise.kb",
    "Done": "citewise.kb",
    "parse_folder": "citewise.kb",
}

__all__ = [
    "Answer",
    "Chunk",
    "Citation",
    "CitationSupport",
    "CitewiseError",
    "ConfigurationError",
    "CrawlLimits",
    "Document",
    "Done",
    "EmbeddingError",
    "Hit",
    "IndexReport",
    "IndexStrategy",
    "KBConfig",
    "KnowledgeBase",
    "KnowledgeBaseError",
    "Library",
    "MissingExtraError",
    "ModelError",
    "SearchOptions",
    "Section",
    "Settings",
    "SourceError",
    "Status",
    "TextDelta",
    "Verification",
    "parse_folder",
]

if TYPE_CHECKING:
    from citewise.config import Settings
    from citewise.errors import (
        CitewiseError,
        ConfigurationError,
        EmbeddingError,
        KnowledgeBaseError,
        MissingExtraError,
        ModelError,
        SourceError,
    )
    from citewise.kb import (
        Done,
        IndexReport,
        IndexStrategy,
        KBConfig,
        KnowledgeBase,
        Library,
        Status,
        TextDelta,
        parse_folder,
    )
    from citewise.models import (
        Answer,
        Chunk,
        Citation,
        CitationSupport,
        Document,
        Hit,
        Section,
        Verification,
    )
    from citewise.options import SearchOptions
    from citewise.sources.crawl_limits import CrawlLimits


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'citewise' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*_EXPORTS, "__version__"])
