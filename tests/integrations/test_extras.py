"""Each host module, imported without its host's package, names the extra that installs it."""

from __future__ import annotations

import importlib
import sys

import pytest

from citewise.errors import MissingExtraError

HOSTS = [
    ("citewise.integrations.lgos", "langgraph_openai_serve", "lgos"),
    ("citewise.integrations.langbot", "langbot_plugin", "langbot"),
    ("citewise.integrations.chainlit_app", "chainlit", "chainlit"),
]


@pytest.mark.parametrize(("module", "package", "extra"), HOSTS)
def test_a_missing_host_package_names_its_extra(
    module: str, package: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry in sys.modules makes `import package` fail as if it were not installed.
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, package, None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(MissingExtraError, match=rf"pip install 'citewise\[{extra}\]'"):
        importlib.import_module(module)
    monkeypatch.delitem(sys.modules, module, raising=False)


def test_the_cli_names_the_extra_before_starting_a_host(capsys: pytest.CaptureFixture[str]) -> None:
    from citewise.cli import main

    if importlib.util.find_spec("chainlit") is not None:
        pytest.skip("chainlit is installed: the command would start it")
    assert main(["chainlit", "--kb", "docs"]) == 1
    assert "pip install 'citewise[chainlit]'" in capsys.readouterr().err
