"""Model files checked and prepared once per home, not once per process (a cold search pays
for each: benchmarks/cold-cli.md).

- A file's sha256, once it matched, is remembered by the file's path, size, mtime, ctime,
  inode and device (``verified.json`` in the folder): a changed or replaced file misses and
  is hashed again, so it stays an integrity check.
- MiniLM's int8-compute graph (:mod:`citewise.embedding.int8_compute`), whose rewrite
  imports onnx (about 0.9 s of CPU) and then takes 0.1 s, is kept as a file, named by the
  model's sha256 and the rewrite's own source, and checked by its sha256 when loaded.

A folder that cannot be written costs the work again, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from citewise.errors import EmbeddingError

__all__ = ["int8_graph", "verify_sha256"]

MEMO = "verified.json"
INT8_PREFIX = "minilm-int8-compute-"
STALE = 24 * 3600.0  # seconds after which another recipe's graph is deleted

_verified: set[tuple[str, str]] = set()
_lock = threading.Lock()


def _identity(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev]


def _read_memo(folder: Path) -> dict[str, Any]:
    try:
        memo = json.loads((folder / MEMO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _write(path: Path, data: bytes) -> None:
    """``data`` as ``path``, whole or not at all (another process may read it meanwhile)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _remember(folder: Path, name: str, stat: os.stat_result, digest: str) -> None:
    memo = _read_memo(folder)
    memo[name] = [*_identity(stat), digest]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder / MEMO, json.dumps(memo, indent=1).encode())
    except OSError:
        pass  # not remembered: hashed again next time


def verify_sha256(path: Path, expected: str, what: str, *, folder: Path | None = None) -> None:
    """Raise ``EmbeddingError`` unless ``path`` hashes to ``expected``.

    Hashed once per process (an embedder may be built many times: per request, per test)
    and, with ``folder``, once until the file changes (see the module docstring).
    """
    name = os.path.abspath(path)
    with _lock:
        if (name, expected) in _verified:
            return
        try:
            stat = os.stat(name)
        except OSError as exc:
            raise EmbeddingError(f"cannot read the {what} at {path}: {exc}") from exc
        if folder is not None and _read_memo(folder).get(name) == [*_identity(stat), expected]:
            _verified.add((name, expected))
            return
        try:
            digest = hashlib.sha256()
            with open(name, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise EmbeddingError(f"cannot read the {what} at {path}: {exc}") from exc
        if digest.hexdigest() != expected:
            raise EmbeddingError(
                f"the {what} at {path} is corrupt or unexpected "
                f"(sha256 {digest.hexdigest()}, expected {expected}); reinstall citewise"
            )
        _verified.add((name, expected))
        if folder is not None:
            _remember(folder, name, stat, expected)


def _recipe(model_sha256: str) -> str:
    """What the int8 graph is made from: the model and the rewrite's source, its
    simplifications' included (a changed rewrite makes a new file)."""
    from citewise.embedding import int8_compute, onnx_simplify

    digest = hashlib.sha256(model_sha256.encode())
    for source in (int8_compute.__file__, onnx_simplify.__file__):
        digest.update(b"\0" + Path(source).read_bytes())
    return digest.hexdigest()[:20]


def int8_graph(model: Path, model_sha256: str | None, folder: Path | None) -> str | bytes:
    """What onnxruntime loads to run ``model`` (verified as ``model_sha256``) in int8
    compute: the graph's file in ``folder``, made the first time; its bytes when there is
    no folder or digest, or the folder cannot be written.

    Raises ``EmbeddingError`` as :func:`int8_compute.int8_compute_graph` does.
    """
    from citewise.embedding.int8_compute import int8_compute_graph

    if folder is None or model_sha256 is None:
        return int8_compute_graph(model)
    try:
        path = folder / f"{INT8_PREFIX}{_recipe(model_sha256)}.onnx"
    except OSError:  # the rewrite's source is not readable: nothing to name the file by
        return int8_compute_graph(model)
    digest_path = path.with_name(path.name + ".sha256")
    try:
        verify_sha256(path, digest_path.read_text().strip(), "int8 graph", folder=folder)
        return str(path)
    except (OSError, EmbeddingError):
        pass  # not made yet, or damaged: made again
    graph = int8_compute_graph(model)
    digest = hashlib.sha256(graph).hexdigest()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(digest_path, digest.encode())
        _write(path, graph)
    except OSError:
        return graph
    _drop_stale(folder, keep=path.name)
    return str(path)


def _drop_stale(folder: Path, keep: str) -> None:
    """Delete the graphs of an earlier model or rewrite, unless made in the last day: another
    citewise (an older install sharing the home) may be loading one now."""
    for old in folder.glob(f"{INT8_PREFIX}*"):
        try:
            if not old.name.startswith(keep) and time.time() - old.stat().st_mtime > STALE:
                old.unlink(missing_ok=True)
        except OSError:
            pass
