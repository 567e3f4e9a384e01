"""The `citewise` entry point: every command group is wired in, and errors are one line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citewise import cli
from citewise.cli import build_parser, main

from .support import fail

COMMANDS = {
    "index": ["index", "docs"],
    "sections": ["sections", "docs"],
    "search": ["search", "q"],
    "ask": ["ask", "q"],
    "eval": ["eval", "cases.json"],
    "bench beir": ["bench", "beir", "scifact"],
    "bench embed": ["bench", "embed", "scifact"],
    "bench latency": ["bench", "latency", "scifact"],
    "serve": ["serve"],
    "mcp": ["mcp"],
    "kb create": ["kb", "create", "team"],
    "kb list": ["kb", "list"],
    "kb show": ["kb", "show", "team"],
    "kb delete": ["kb", "delete", "team"],
    "kb search": ["kb", "search", "team", "q"],
    "doc add": ["doc", "add", "a.md", "--kb", "team"],
    "doc list": ["doc", "list", "--kb", "team"],
    "doc delete": ["doc", "delete", "a.md", "--kb", "team"],
}


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=list(COMMANDS))
def test_every_command_has_a_handler(argv: list[str]) -> None:
    assert callable(build_parser().parse_args(argv).run)


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=list(COMMANDS))
def test_a_command_alone_parses_as_in_the_whole_parser(argv: list[str]) -> None:
    # main builds only the group of the command it runs.
    alone = vars(build_parser(argv[0]).parse_args(argv))
    assert alone == vars(build_parser().parse_args(argv))


def test_the_groups_name_every_command_they_add() -> None:
    whole = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    named = [name for _, names in cli._GROUPS for name in names]
    assert sorted(named) == sorted(whole)
    for _, names in cli._GROUPS:
        alone = build_parser(names[0])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        assert sorted(alone) == sorted(names)


def test_a_search_builds_only_its_own_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = cli.build_parser

    def spy(command: str | None = None) -> Any:
        built.append(str(command))
        return real(command)

    monkeypatch.setattr(cli, "build_parser", spy)
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    with pytest.raises(SystemExit):
        main(["--version"])
    assert built == ["search", "None"]


@pytest.fixture
def root_logging() -> Iterator[None]:
    """``serve`` configures the process's logging: put it back for the tests that follow."""
    import logging

    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)


def test_serve_runs_the_app_with_the_flags(
    home: Path, monkeypatch: pytest.MonkeyPatch, root_logging: None
) -> None:
    import uvicorn

    from citewise.config import Settings
    from citewise.kb import Library

    Library(Settings(home=home / "home")).create("team")  # serve refuses an unknown --kb
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append(kwargs))
    assert main(["serve", "--kb", "team", "--port", "8123", "--log-level", "warning"]) == 0
    (kwargs,) = calls
    loggers = kwargs.pop("log_config")["loggers"]  # uvicorn's lines go to the JSON handler
    assert loggers["uvicorn.access"] == {"handlers": [], "propagate": True}
    from citewise.server.receipt import ReceiptProtocol  # the receipt deadlines' protocol

    assert issubclass(kwargs.pop("http"), ReceiptProtocol)
    # uvicorn's own idle timer past the protocol's keep-alive (75 s), so it never fires first.
    assert kwargs == {
        "host": "127.0.0.1",
        "port": 8123,
        "log_level": "warning",
        "access_log": False,
        "timeout_keep_alive": 76,
    }


def test_mcp_serves_the_named_knowledge_base(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import citewise.mcp_server

    served: list[str] = []
    monkeypatch.setattr(citewise.mcp_server, "serve", lambda kb, settings: served.append(kb))
    assert main(["mcp", "--kb", "team"]) == 0
    assert served == ["team"]


def test_a_citewise_error_is_one_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert fail(capsys, "kb", "show", "missing").startswith(
        "citewise: error: unknown knowledge base 'missing'"
    )


def test_python_m_citewise_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "citewise", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "usage: citewise" in done.stdout
    for command in ("index", "search", "ask", "kb", "doc", "serve", "mcp", "eval", "bench"):
        assert command in done.stdout


def test_version_names_the_package_schema_and_embedder(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from citewise import __version__
    from citewise.store.sqlite_schema import SCHEMA_VERSION

    monkeypatch.setenv("CITEWISE_EMBEDDER", "e5")
    monkeypatch.setenv("CITEWISE_MAX_CHARS", "not a number")  # must not hide the version
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    printed = capsys.readouterr().out.strip()
    assert printed == f"citewise {__version__} (SQLite store schema {SCHEMA_VERSION}, embedder e5)"


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    process = subprocess.Popen(
        [sys.executable, "-m", "citewise", "sections", str(docs), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(b"{")
    process.stdout.close()  # like `| head -1`
    error = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=60) in (0, 141)
    assert "Traceback" not in error and "BrokenPipeError" not in error


def test_a_search_never_imports_pydantic(lgos_env: Path) -> None:
    # pydantic's import and schemas were a fifth of a cold search's CPU (benchmarks/cold-cli.md):
    # the options are a plain dataclass, the chat model's reply types load with a model.
    code = (
        "import sys\n"
        "from citewise.cli import main\n"
        "code = main(['search', 'How do I add API key authentication?', '--kb', 'lgos'])\n"
        "print('loaded:', sorted(m for m in sys.modules if m.partition('.')[0] == 'pydantic'))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False,
        env={**os.environ, "CITEWISE_HOME": str(lgos_env)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "how-to-guides/authentication/#api-key-middleware" in done.stdout
    assert done.stdout.strip().endswith("loaded: []")
    # The int8 graph is kept in the home, made once (embedding/prepared.py).
    assert len(list((lgos_env / "models").glob("minilm-int8-compute-*.onnx"))) == 1
