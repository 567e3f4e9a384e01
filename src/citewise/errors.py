"""citewise's exceptions: one tree, each error a clear one-line message for the user.

CitewiseError
├── SourceError          a folder, file or archive cannot be read (missing, empty, binary)
├── KnowledgeBaseError   an unknown or unusable knowledge base
├── EmbeddingError       the embedding model failed or is missing
├── ConfigurationError   an invalid setting
└── MissingExtraError    an optional dependency is not installed (names the extra)
"""

from __future__ import annotations


class CitewiseError(Exception):
    """Base of every error citewise raises on purpose."""


class SourceError(CitewiseError):
    """A source of documents cannot be read."""


class KnowledgeBaseError(CitewiseError):
    """A knowledge base does not exist or cannot be used."""


class EmbeddingError(CitewiseError):
    """The embedder failed."""


class ConfigurationError(CitewiseError):
    """A setting is invalid."""


class MissingExtraError(CitewiseError, ImportError):
    """An optional dependency is missing; the message names the extra that installs it."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the '{package}' package: pip install 'citewise[{extra}]'"
        )
        self.package = package
        self.extra = extra
