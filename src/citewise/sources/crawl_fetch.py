"""One crawl request: redirects checked hop by hop, retries with backoff, bytes and time capped.

Bodies are read raw and inflated here, so the cap counts *decoded* bytes as they stream (a
gzip bomb stops at the cap, a 50 MB page is never read whole), and a per-request deadline
cuts a server that trickles one byte a second, which no socket timeout would.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin

import httpx

from citewise.sources.crawl_limits import CrawlLimits
from citewise.sources.crawl_state import PageState
from citewise.sources.robots import USER_AGENT

__all__ = ["Fetched", "Fetcher", "RETRIED_STATUSES"]

RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class Fetched:
    """A response, or why there is none usable.

    ``problem`` is empty when ``body`` is the whole decoded body (or there is none to read:
    304, an error status); ``kind`` names the problem for counting (``redirect_refused``,
    ``redirect_loop``, ``not_html``, ``max_page_bytes``, ``page_seconds``, ``network``,
    ``decoding``).
    """

    url: str  # after the redirects followed
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    problem: str = ""
    kind: str = ""

    def remembered(self, **values: object) -> PageState:
        """What to remember of this response for the next crawl: its validators and the
        hash of its body, with ``values`` (a page's links, a sitemap's locations…)."""
        return PageState(
            etag=self.headers.get("etag", ""),
            last_modified=self.headers.get("last-modified", ""),
            sha256=hashlib.sha256(self.body).hexdigest(),
            **values,  # type: ignore[arg-type]
        )


class _TooBig(Exception):
    pass


class Fetcher:
    """GETs for one crawl over one client, at most ``limits.concurrency`` at once."""

    def __init__(self, client: httpx.AsyncClient, limits: CrawlLimits, deadline: float) -> None:
        self.client = client
        self.limits = limits
        self.deadline = deadline  # time.monotonic() past which nothing is retried
        self.requests = 0
        self.retried = 0
        self.crawl_delay = 0.0
        self._slots = asyncio.Semaphore(limits.concurrency)
        self._pace = asyncio.Lock()
        self._last_start = 0.0

    async def get(
        self,
        url: str,
        *,
        allowed: Callable[[str], bool],
        max_bytes: int,
        accept: Callable[[str], bool] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Fetched:
        """GET ``url``, following redirects only to URLs ``allowed`` accepts; the body is read
        only when ``accept`` (of the Content-Type) takes it, and at most ``max_bytes`` of it."""
        seen = {url}
        for _ in range(self.limits.max_redirects + 1):
            found = await self._retrying(url, max_bytes, accept, headers or {})
            location = found.headers.get("location", "")
            if found.status not in _REDIRECTS or not location or found.problem:
                return found
            target = urljoin(url, location.strip()).split("#", 1)[0]
            if not allowed(target):
                return Fetched(url, found.status, found.headers,
                               problem=f"redirects off the start path to {target}",
                               kind="redirect_refused")  # fmt: skip
            if target in seen:
                loop = f"redirect loop back to {target}"
                return Fetched(url, found.status, found.headers, problem=loop, kind="redirect_loop")
            seen.add(target)
            url = target
        return Fetched(url, problem=f"more than {self.limits.max_redirects} redirects "
                       "(max_redirects)", kind="redirect_loop")  # fmt: skip

    async def _retrying(
        self,
        url: str,
        max_bytes: int,
        accept: Callable[[str], bool] | None,
        headers: dict[str, str],
    ) -> Fetched:
        attempt = 0
        while True:
            found = await self._once(url, max_bytes, accept, headers)
            if found.status not in RETRIED_STATUSES or attempt >= self.limits.retries:
                return found
            after = found.headers.get("retry-after", "")
            wait = min(_retry_after(after, attempt, self.limits.retry_backoff),
                       self.limits.max_retry_wait)  # fmt: skip
            if time.monotonic() + wait > self.deadline:
                return found
            attempt += 1
            self.retried += 1
            await asyncio.sleep(wait)

    async def _once(
        self,
        url: str,
        max_bytes: int,
        accept: Callable[[str], bool] | None,
        headers: dict[str, str],
    ) -> Fetched:
        async with self._slots:
            await self._paced()
            self.requests += 1
            try:
                async with asyncio.timeout(self.limits.page_seconds):
                    return await self._read(url, max_bytes, accept, headers)
            except TimeoutError:
                return Fetched(url, problem=f"took longer than {self.limits.page_seconds:g} s "
                               "(page_seconds)", kind="page_seconds")  # fmt: skip
            except httpx.TimeoutException:
                return Fetched(url, problem=f"no answer within {self.limits.timeout:g} s "
                               "(timeout)", kind="network")  # fmt: skip
            except httpx.HTTPError as error:
                return Fetched(url, problem=f"network error: {error or type(error).__name__}",
                               kind="network")  # fmt: skip
            except (httpx.InvalidURL, ValueError) as error:  # a link no client can request
                return Fetched(url, problem=f"not a URL that can be fetched ({error})",
                               kind="invalid_url")  # fmt: skip

    async def _paced(self) -> None:
        """Honour robots.txt's Crawl-delay: request starts at least that far apart."""
        if not self.crawl_delay:
            return
        async with self._pace:
            wait = self._last_start + self.crawl_delay - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last_start = time.monotonic()

    async def _read(
        self,
        url: str,
        max_bytes: int,
        accept: Callable[[str], bool] | None,
        headers: dict[str, str],
    ) -> Fetched:
        request_headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate", **headers}
        async with self.client.stream("GET", url, headers=request_headers) as response:
            found = {k.lower(): v for k, v in response.headers.items()}
            status = response.status_code
            if status != 200:
                return Fetched(url, status, found)
            content_type = found.get("content-type", "")
            if accept is not None and not accept(content_type):
                return Fetched(url, status, found, problem="not HTML (Content-Type "
                               f"{content_type.split(';')[0].strip() or 'missing'})",
                               kind="not_html")  # fmt: skip
            declared = found.get("content-length", "")
            encoding = found.get("content-encoding", "identity").strip().lower()
            if declared.isdigit() and int(declared) > max_bytes and encoding == "identity":
                return _too_big(url, status, found, max_bytes)
            try:
                decoder = _Decoder(encoding, max_bytes)
            except ValueError as error:
                return Fetched(url, status, found, problem=str(error), kind="decoding")
            try:
                async for block in response.aiter_raw():
                    decoder.feed(block)
                decoder.finish()
            except _TooBig:
                return _too_big(url, status, found, max_bytes)
            except zlib.error as error:
                return Fetched(url, status, found, problem=f"cannot decode its {encoding} "
                               f"body ({error})", kind="decoding")  # fmt: skip
            return Fetched(url, status, found, bytes(decoder.out))


def _too_big(url: str, status: int, headers: dict[str, str], cap: int) -> Fetched:
    return Fetched(url, status, headers, problem=f"larger than {cap:,} bytes (max_page_bytes)",
                   kind="max_page_bytes")  # fmt: skip


class _Decoder:
    """Inflates a ``Content-Encoding`` as the raw bytes stream in, never past ``cap``."""

    def __init__(self, encoding: str, cap: int) -> None:
        if encoding not in ("identity", "", "gzip", "x-gzip", "deflate"):
            raise ValueError(f"unsupported Content-Encoding {encoding!r}")
        self.encoding = encoding if encoding not in ("", "x-gzip") else encoding or "identity"
        self.cap = cap
        self.out = bytearray()
        self._inflater: zlib._Decompress | None = None
        self._pending = b""

    def _new_inflater(self, first: bytes) -> zlib._Decompress:
        if self.encoding in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        # "deflate" is zlib-wrapped by the standard, raw deflate by some servers.
        wrapped = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
        return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)

    def feed(self, data: bytes) -> None:
        if self.encoding == "identity":
            self.out += data
            if len(self.out) > self.cap:
                raise _TooBig
            return
        data = self._pending + data
        self._pending = b""
        while data:
            if self._inflater is None:
                if len(data) < 2:
                    self._pending = data
                    return
                self._inflater = self._new_inflater(data)
            self.out += self._inflater.decompress(data, self.cap - len(self.out) + 1)
            if len(self.out) > self.cap:
                raise _TooBig
            if not self._inflater.eof:
                return
            # Another gzip member follows (concatenated streams are one body).
            data = self._inflater.unused_data
            self._inflater = None

    def finish(self) -> None:
        if self._inflater is not None:
            self.out += self._inflater.flush(self.cap - len(self.out) + 1)
            if len(self.out) > self.cap:
                raise _TooBig


def _retry_after(value: str, attempt: int, backoff: float) -> float:
    """Seconds to wait: the server's ``Retry-After`` (seconds or an HTTP date), else an
    exponential backoff from the attempt number."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            return max(0.0, when.timestamp() - time.time())
    return backoff * float(1 << attempt)
