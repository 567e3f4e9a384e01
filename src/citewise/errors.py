"""citewise's exceptions: one tree, each error a clear one-line message for the user.

CitewiseError
├── SourceError          a folder, file or archive cannot be read (missing, empty, binary)
│   ├── TooLargeError           a file or its parsed text is over a size limit
│   ├── ReleaseNotFoundError    the requested release is not published (versions.json, tag)
│   ├── DownloadError           a network error, an HTTP error or an oversized download
│   ├── UnsafeArchiveError      an archive entry is hostile (.., absolute, link, device, bomb)
│   └── DocsFolderMissingError  the archive has no docs folder
├── KnowledgeBaseError   an unknown or unusable knowledge base
│   └── StorageError            the store could not write (disk full, I/O error): nothing written
├── StoreUnavailableError  the store cannot be reached now (database down, file locked): retry
├── EmbeddingError       the embedding model failed or is missing
├── ConfigurationError   an invalid setting
├── MissingExtraError    an optional dependency is not installed (names the extra)
└── ModelError           the chat model failed or gave an unusable reply
"""

from __future__ import annotations


class CitewiseError(Exception):
    """Base of every error citewise raises on purpose."""


class SourceError(CitewiseError):
    """A source of documents cannot be read."""


class ReleaseNotFoundError(SourceError):
    """The requested release is not in the docs site's versions.json, or its tag has no archive."""


class DownloadError(SourceError):
    """Fetching a URL failed: network error, timeout, HTTP error status or a size cap exceeded."""


class UnsafeArchiveError(SourceError):
    """An archive was refused: an entry escapes the folder, is a link or device, or is too big."""


class DocsFolderMissingError(SourceError):
    """An archive holds no docs folder where one was expected."""


class TooLargeError(SourceError):
    """A file, or the text parsed from it, is over a size limit (see ``citewise.limits``)."""


class KnowledgeBaseError(CitewiseError):
    """A knowledge base does not exist or cannot be used."""


class StorageError(KnowledgeBaseError):
    """The store could not write (a full disk, an I/O error); the write was rolled back, so
    what was stored before is intact."""


class StoreUnavailableError(CitewiseError):
    """The store cannot be reached within its deadline (``CITEWISE_STORE_TIMEOUT``): the
    database is down or unreachable, a SQLite file is locked or damaged. Nothing was read or
    written; the same request may succeed once the store is back (the server answers 503)."""


class EmbeddingError(CitewiseError):
    """The embedder failed."""


class ConfigurationError(CitewiseError):
    """A setting is invalid; ``field`` names the option it is about, when it is one."""

    field: str | None = None  # also for one rebuilt without __init__ (a parse worker's)

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class MissingExtraError(CitewiseError, ImportError):
    """An optional dependency is missing; the message names the extra that installs it."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the '{package}' package: pip install 'citewise[{extra}]'"
        )
        self.package = package
        self.extra = extra


class ModelError(CitewiseError):
    """The chat model failed (endpoint unreachable, an API error) or gave an unusable reply."""
