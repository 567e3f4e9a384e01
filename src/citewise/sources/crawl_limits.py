"""The bounds of a site crawl (pages, bytes, depth, time, politeness), each a named setting."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from fnmatch import fnmatchcase

from citewise.config import environment
from citewise.errors import ConfigurationError

__all__ = ["CrawlLimits", "setting_name"]

MIB = 1024 * 1024


@dataclass(frozen=True)
class CrawlLimits:
    """What a crawl may do; each field is also ``CITEWISE_CRAWL_<FIELD>`` in the environment.

    A bound that stops the crawl (``max_pages``, ``max_depth``, ``max_total_bytes``,
    ``max_seconds``) is reported with its name, and the pages it kept from being seen are not
    removed from the knowledge base; a page over ``max_page_bytes`` or ``page_seconds`` is
    skipped (and reported) alone.
    """

    max_pages: int = 2000  # HTML pages fetched (or confirmed unchanged)
    max_depth: int = 20  # links followed from the start page (sitemap pages are depth 1)
    max_page_bytes: int = 8 * MIB  # decoded bytes of one page: a bigger page is skipped
    max_total_bytes: int = 512 * MIB  # decoded bytes of the whole crawl
    max_seconds: float = 1800.0  # wall time of the whole crawl
    page_seconds: float = 60.0  # one request, headers to last byte (a trickling server)
    timeout: float = 20.0  # connect and the longest silence between two reads
    concurrency: int = 4  # requests at once to the site
    retries: int = 3  # on 429 and 5xx, with exponential backoff
    retry_backoff: float = 0.5  # the first wait when the server gives no Retry-After; doubles
    max_retry_wait: float = 30.0  # cap on one wait before a retry (Retry-After included)
    max_redirects: int = 5  # hops per request
    max_sitemaps: int = 50  # sitemap files read (an index names others)
    max_sitemap_bytes: int = 50 * MIB  # decoded bytes of one sitemap (the protocol's cap)
    # Pages not crawled: glob patterns on the path under the start folder (``_modules/*``),
    # in the environment separated by commas.
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "exclude":
                if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                    raise ConfigurationError("crawl setting exclude must be a list of patterns")
                continue
            if item.type == "float":
                ok, least = isinstance(value, int | float) and value > 0, "> 0"
            else:
                low = 0 if item.name in ("retries", "max_redirects") else 1
                ok, least = isinstance(value, int) and value >= low, f"an integer ≥ {low}"
            if not ok:
                raise ConfigurationError(
                    f"crawl setting {item.name} ({setting_name(item.name)}) must be {least}, "
                    f"not {value!r}"
                )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CrawlLimits:
        """The defaults, overridden by ``CITEWISE_CRAWL_*`` variables."""
        env = environment() if environ is None else environ
        values: dict[str, float | int | tuple[str, ...]] = {}
        for item in fields(cls):
            raw = env.get(setting_name(item.name), "").strip()
            if not raw:
                continue
            if item.name == "exclude":
                values[item.name] = tuple(p.strip() for p in raw.split(",") if p.strip())
                continue
            try:
                values[item.name] = float(raw) if item.type == "float" else int(raw)
            except ValueError:
                kind = "a number" if item.type == "float" else "an integer"
                raise ConfigurationError(
                    f"{setting_name(item.name)} must be {kind}, not {raw!r}"
                ) from None
        return cls(**values)  # type: ignore[arg-type]

    def excludes(self, path: str) -> bool:
        """Whether the page at ``path`` (under the start folder) is left out by ``exclude``."""
        return any(fnmatchcase(path, pattern) for pattern in self.exclude)

    def with_overrides(self, **changes: float | int | tuple[str, ...] | None) -> CrawlLimits:
        """A copy with the given settings changed (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})  # type: ignore[arg-type]


def setting_name(field_name: str) -> str:
    """The environment variable of a crawl setting: ``max_pages`` → ``CITEWISE_CRAWL_MAX_PAGES``."""
    return f"CITEWISE_CRAWL_{field_name.upper()}"
