"""A real HTTP server on 127.0.0.1 serving versions.json and tag archives, and archive builders."""

from __future__ import annotations

import io
import json
import tarfile
import threading
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

# An entry to put in a test archive: file content, or a TarInfo for links, devices and FIFOs.
Member = bytes | tarfile.TarInfo


@dataclass
class LocalSite:
    """Serves ``files`` (URL path → body) over HTTP on 127.0.0.1; other paths are 404.

    A path is looked up with its query string, then without it. ``redirects`` answer 302
    to another path; ``headers`` are sent with every response (as a docs host sends its own).
    """

    files: dict[str, bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    status: dict[str, int] = field(default_factory=dict)  # path → forced error status
    redirects: dict[str, str] = field(default_factory=dict)  # path → the path it moved to
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requests.append(self.path)
                path = self.path if self.path in site.files else self.path.split("?")[0]
                forced = site.status.get(path)
                body = site.files.get(path)
                moved = site.redirects.get(path)
                if moved is not None:
                    self.send_response(302)
                    self.send_header("Location", moved)
                    self._finish(b"")
                elif forced is not None or body is None:
                    self.send_response(forced or 404)
                    self._finish(b"")
                else:
                    self.send_response(200)
                    self._finish(body)

            def _finish(self, body: bytes) -> None:
                for name, value in site.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.running = True

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def stop(self) -> None:
        if self.running:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()
            self.running = False


@pytest.fixture
def site() -> Iterator[LocalSite]:
    server = LocalSite()
    yield server
    server.stop()


def versions_json(*entries: tuple[str, list[str]]) -> bytes:
    return json.dumps(
        [{"version": v, "title": v, "aliases": aliases} for v, aliases in entries]
    ).encode()


def tar_gz(members: Mapping[str, Member]) -> bytes:
    """A .tar.gz with these members, in order (folders are implied, as in GitHub archives)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, member in members.items():
            if isinstance(member, tarfile.TarInfo):
                member.name = name
                tar.addfile(member)
            else:
                info = tarfile.TarInfo(name)
                info.size = len(member)
                tar.addfile(info, io.BytesIO(member))
    return buffer.getvalue()


def zip_bytes(members: Mapping[str, bytes], *, symlinks: Mapping[str, str] = {}) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in symlinks.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16) | 0x20
            zf.writestr(info, target)
    return buffer.getvalue()


def link(kind: bytes, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo()
    info.type = kind
    info.linkname = target
    return info


def special(kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo()
    info.type = kind
    info.devmajor, info.devminor = 1, 3
    return info


def folder_members(root: Path, prefix: str) -> dict[str, bytes]:
    """Every file under ``root`` as archive members named ``{prefix}{relative path}``."""
    return {
        prefix + path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


MKDOCS_YML = b"""\
site_name: Widgets
site_url: https://widgets.example/
markdown_extensions:
  - pymdownx.emoji:
      emoji_generator: !!python/name:material.extensions.emoji.to_svg
extra:
  analytics: !ENV [WIDGETS_ANALYTICS, "off"]
nav:
  - Home: index.md
  - Guide:
      - guide/index.md
      - Install: guide/install.md
  - Examples:
      - examples/index.md
      - Nested:
          - Cache: examples/cache.md
  - Changelog: https://github.com/widgets/widgets/releases
"""


def widget_docs(version: str) -> dict[str, bytes]:
    """A small docs site (mkdocs.yml + docs/) whose pages name their version."""
    return {
        "mkdocs.yml": MKDOCS_YML,
        "README.md": b"# Widgets repo\n",
        "src/widgets/__init__.py": b"",
        "docs/index.md": f"# Widgets {version}\n\nWidgets {version} docs home.\n".encode(),
        "docs/guide/index.md": b"# Guide\n\nHow to use widgets.\n",
        "docs/guide/install.md": f"# Install\n\nRun pip install widgets=={version}.\n".encode(),
        "docs/examples/index.md": b"# Examples\n\nExample applications.\n",
        "docs/examples/cache.md": b"# Cache example\n\nA caching proxy built on widgets.\n",
    }


def widget_archive(version: str, top: str | None = None) -> bytes:
    top = top if top is not None else f"widgets-{version}/"
    return tar_gz({top + name: data for name, data in widget_docs(version).items()})
