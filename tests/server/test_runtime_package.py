"""``CITEWISE_PACKAGE``: the server serves the docs of the version installed here."""

from __future__ import annotations

import importlib.metadata

import pytest

from citewise.errors import SourceError
from citewise.server.runtime import ServerOptions


def test_the_installed_version_of_a_package_becomes_the_release() -> None:
    options = ServerOptions.from_env({"CITEWISE_PACKAGE": "pytest"})
    assert options.release is not None
    assert (options.release.owner, options.release.repo) == ("pytest-dev", "pytest")
    assert options.release.version == importlib.metadata.version("pytest")


def test_an_explicit_release_wins_over_the_package() -> None:
    options = ServerOptions.from_env(
        {"CITEWISE_PACKAGE": "pytest", "CITEWISE_RELEASE": "owner/repo@1.2.3"}
    )
    assert options.release is not None and options.release.repo == "repo"


def test_a_package_that_is_not_installed_says_how_to_proceed() -> None:
    with pytest.raises(SourceError, match=r"not installed.*--release OWNER/REPO@VERSION"):
        ServerOptions.from_env({"CITEWISE_PACKAGE": "no-such-distribution-here"})
