"""A real HTTP server on 127.0.0.1 for crawl tests: static pages with validators (ETag,
Last-Modified, 304s), scripted routes for hostile behaviour, and a log of every request."""

from __future__ import annotations

import gzip
import hashlib
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HTML = "text/html; charset=utf-8"
LAST_MODIFIED = "Tue, 01 Dec 2026 10:00:00 GMT"

# A scripted route: called with the handler and the request's query; writes the response.
Route = Callable[[BaseHTTPRequestHandler, str], None]


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]

    @property
    def conditional(self) -> bool:
        return "if-none-match" in self.headers or "if-modified-since" in self.headers


@dataclass
class DocsServer:
    """Serves ``files`` (path → (content type, body)) and ``routes`` (path → :data:`Route`)
    on 127.0.0.1; a route wins over a file; anything else is 404. ``log`` has every request
    with its headers, and ``sent`` the body bytes written per path."""

    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    routes: dict[str, Route] = field(default_factory=dict)
    log: list[Seen] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                site.log.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
                route = site.routes.get(path)
                try:
                    if route is not None:
                        route(self, query)
                    elif path in site.files:
                        self._static(path, *site.files[path])
                    else:
                        self.send_response(404)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _static(self, path: str, kind: str, body: bytes) -> None:
                etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", LAST_MODIFIED)
                self.end_headers()
                self.wfile.write(body)
                site.sent[path] = site.sent.get(path, 0) + len(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def page(self, path: str, body: str, kind: str = HTML) -> None:
        self.files[path] = (kind, body.encode())

    def requests_to(self, path: str) -> list[Seen]:
        return [seen for seen in self.log if seen.path.partition("?")[0] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def html_page(title: str, *sections: tuple[str, str], links: tuple[str, ...] = ()) -> str:
    """A small built page: an h1, then one ``<section id>`` with an h2 per (id, text), and
    a nav with ``links``."""
    nav = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    body = "".join(
        f'<section id="{anchor}"><h2>{anchor.replace("-", " ").title()}'
        f'<a class="headerlink" href="#{anchor}">¶</a></h2><p>{text}</p></section>'
        for anchor, text in sections
    )
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
        f"<nav><ul>{nav}</ul></nav><main><h1>{title}</h1>{body}</main></body></html>"
    )


def respond(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def streamed(
    handler: BaseHTTPRequestHandler,
    blocks: Iterator[bytes],
    headers: dict[str, str],
    written: list[int] | None = None,
) -> int:
    """Write ``blocks`` until they end or the client hangs up (no Content-Length: the body
    ends when the connection closes); returns the bytes written, also counted as they go
    in ``written[0]``."""
    written = written if written is not None else [0]
    handler.send_response(200)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    try:
        for block in blocks:
            handler.wfile.write(block)
            handler.wfile.flush()
            written[0] += len(block)
    except (BrokenPipeError, ConnectionResetError):
        pass
    return written[0]


def gzip_bomb(inflated: int, block: int = 1024 * 1024) -> Iterator[bytes]:
    """A gzip stream of ``inflated`` zero bytes, compressed lazily block by block (about a
    thousandth of the size on the wire)."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(block)
    for _ in range(inflated // block):
        out = deflater.compress(zeros)
        if out:
            yield out
    yield deflater.flush()


def trickle(data: bytes, every: float) -> Iterator[bytes]:
    """``data`` one byte at a time, ``every`` seconds apart."""
    for byte in data:
        time.sleep(every)
        yield bytes([byte])


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data)
