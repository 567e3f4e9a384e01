"""The settings module is the only reader of the environment: a grep of the package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import citewise
from citewise.config import ParseSettings, StoreSettings, VisionSettings, child_environment
from citewise.errors import ConfigurationError

PACKAGE = Path(citewise.__file__).parent
SETTINGS = {PACKAGE / "config.py"}
READS = re.compile(r"os\.environ|getenv")


def test_no_module_but_the_settings_reads_the_environment() -> None:
    readers = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in SETTINGS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if READS.search(line)
    ]
    assert readers == []


def test_stage_settings_read_their_variables_and_keep_their_defaults() -> None:
    assert ParseSettings.from_env({}) == ParseSettings()
    parse = ParseSettings.from_env(
        {"CITEWISE_PARSE_CONCURRENCY": "5", "CITEWISE_MAX_SECTIONS": "7",
         "CITEWISE_PARSE_SECONDS": "2.5", "CITEWISE_OCR_LANGUAGES": " deu "}
    )  # fmt: skip
    assert (parse.concurrency, parse.max_sections, parse.seconds) == (5, 7, 2.5)
    assert parse.ocr_languages == "deu"
    # A vision endpoint falls back to the chat endpoint.
    vision = VisionSettings.from_env({"CITEWISE_LLM_BASE_URL": "http://x/v1"})
    assert vision.base_url == "http://x/v1" and vision.model == ""
    assert StoreSettings.from_env({"CITEWISE_STORE_TIMEOUT": "9"}).timeout == 9.0


@pytest.mark.parametrize(
    ("name", "value"),
    [("CITEWISE_PARSE_ISOLATION", "some"), ("CITEWISE_PARSE_MEMORY_MB", "-1"),
     ("CITEWISE_PARSE_SECONDS", "nan"), ("CITEWISE_PARSE_SECONDS", "soon")],
)  # fmt: skip
def test_a_bad_parse_setting_is_refused(name: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=name):
        ParseSettings.from_env({name: value})


def test_a_bad_store_timeout_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="CITEWISE_STORE_TIMEOUT"):
        StoreSettings.from_env({"CITEWISE_STORE_TIMEOUT": "0"})


def test_a_child_process_gets_this_environment_and_the_extra_values() -> None:
    env = child_environment(CITEWISE_TEST_EXTRA="1")
    assert env["CITEWISE_TEST_EXTRA"] == "1" and "PATH" in env
