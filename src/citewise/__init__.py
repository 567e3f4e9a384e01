"""citewise: answers questions about a documentation set and cites the exact sections it used."""

from citewise.config import RequestSettings, Settings
from citewise.errors import (
    CitewiseError,
    ConfigurationError,
    EmbeddingError,
    KnowledgeBaseError,
    MissingExtraError,
    ModelError,
    SourceError,
)
from citewise.indexing import IndexReport, parse_folder
from citewise.knowledge import KnowledgeBase
from citewise.models import Answer, Chunk, Citation, Document, Hit, Section

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Chunk",
    "Citation",
    "CitewiseError",
    "ConfigurationError",
    "Document",
    "EmbeddingError",
    "Hit",
    "IndexReport",
    "KnowledgeBase",
    "KnowledgeBaseError",
    "MissingExtraError",
    "ModelError",
    "RequestSettings",
    "Section",
    "Settings",
    "SourceError",
    "parse_folder",
]
