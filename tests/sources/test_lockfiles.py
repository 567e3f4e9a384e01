"""Lock files and hash-checking requirements as pins for ``--requirements``."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.errors import SourceError
from citewise.sources.package import read_requirements

UV_LOCK = """\
version = 1
requires-python = ">=3.11"

[[package]]
name = "myapp"
version = "0.1.0"
source = { editable = "." }

[[package]]
name = "requests"
version = "2.34.2"
source = { registry = "https://pypi.org/simple" }
sdist = { url = "https://files.example/requests-2.34.2.tar.gz", hash = "sha256:00" }

[[package]]
name = "widgets"
version = "1.4.2"
source = { git = "https://github.com/acme/widgets?rev=v1.4.2" }
"""

POETRY_LOCK = """\
[[package]]
name = "click"
version = "8.5.0"
description = "Composable command line interface toolkit"
optional = false
python-versions = ">=3.10"
files = [{file = "click-8.5.0.tar.gz", hash = "sha256:00"}]

[[package]]
name = "local-lib"
version = "0.0.1"
description = ""
optional = false
python-versions = "*"
files = []

[package.source]
type = "directory"
url = "../local-lib"

[metadata]
lock-version = "2.1"
"""

PYLOCK = """\
lock-version = "1.0"
created-by = "pip"

[[packages]]
name = "starlette"
version = "0.47.3"

[[packages]]
name = "gizmos"
version = "2.0"
vcs = { type = "git", url = "https://github.com/acme/gizmos", commit-id = "abc" }
"""


@pytest.mark.parametrize(
    ("name", "text", "pins", "skipped"),
    [
        ("uv.lock", UV_LOCK, (("requests", "2.34.2"),),
         {"uv.lock: myapp": "an editable source, not a published release",
          "uv.lock: widgets": "a git source, not a published release"}),
        ("poetry.lock", POETRY_LOCK, (("click", "8.5.0"),),
         {"poetry.lock: local-lib": "a directory source, not a published release"}),
        ("pylock.toml", PYLOCK, (("starlette", "0.47.3"),),
         {"pylock.toml: gizmos": "a vcs source, not a published release"}),
    ],
)  # fmt: skip
def test_a_lock_file_pins_each_package_from_an_index(
    tmp_path: Path, name: str, text: str, pins: tuple[tuple[str, str], ...],
    skipped: dict[str, str],
) -> None:  # fmt: skip
    path = tmp_path / name
    path.write_text(text)
    found = read_requirements(path)
    assert found.pins == pins
    assert dict(found.skipped) == skipped


def test_hash_checking_requirements_are_pins(tmp_path: Path) -> None:
    path = tmp_path / "requirements.txt"
    path.write_text(
        "widgets==1.4.2 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
        "gizmos==2.0 --hash sha256:cc ; python_version >= '3'\n"
    )
    assert read_requirements(path).pins == (("widgets", "1.4.2"), ("gizmos", "2.0"))


def test_a_broken_lock_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "uv.lock"
    path.write_text("[[package]\nname = ")
    with pytest.raises(SourceError, match=r"cannot read .*uv.lock"):
        read_requirements(path)
