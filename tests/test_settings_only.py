"""The settings module is the only reader of the environment: a grep of the package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import citewise
from citewise.config import (
    MIB,
    Limits,
    ParseSettings,
    Settings,
    StoreSettings,
    VisionSettings,
    child_environment,
)
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
    assert (parse.concurrency, parse.limits.max_sections, parse.seconds) == (5, 7, 2.5)
    assert parse.ocr_languages == "deu"
    # A vision endpoint falls back to the chat endpoint.
    vision = VisionSettings.from_env({"CITEWISE_LLM_BASE_URL": "http://x/v1"})
    assert vision.base_url == "http://x/v1" and vision.model == ""
    assert StoreSettings.from_env({"CITEWISE_STORE_TIMEOUT": "9"}).timeout == 9.0


def test_the_size_limits_are_settings() -> None:
    assert Limits.from_env({}) == Limits() == ParseSettings().limits
    limits = ParseSettings.from_env(
        {"CITEWISE_MAX_FILE_MB": "64", "CITEWISE_MAX_TEXT_MB": "0.5",
         "CITEWISE_MAX_PDF_PAGES": "10", "CITEWISE_MAX_OCR_PAGES": " 3 "}
    ).limits  # fmt: skip
    assert (limits.max_file_bytes, limits.max_text_bytes) == (64 * MIB, MIB // 2)
    assert (limits.max_pdf_pages, limits.max_ocr_pages) == (10, 3)
    # A zipped file may still expand to four times the (raised) file limit.
    assert limits.max_unpacked_bytes == 256 * MIB
    # The limits an ingest uses: the settings' own, else the environment's at that time.
    given = ParseSettings(limits=Limits(max_file_bytes=10))
    assert Settings(home=Path("h"), parse=given).parsing() is given


def test_an_ingest_reads_the_limits_from_the_environment_when_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = Settings(home=Path("h"))
    monkeypatch.setenv("CITEWISE_MAX_TEXT_MB", "2")
    assert settings.parsing().limits.max_text_bytes == 2 * MIB
    monkeypatch.setenv("CITEWISE_MAX_TEXT_MB", "none")
    with pytest.raises(ConfigurationError, match="CITEWISE_MAX_TEXT_MB must be a positive"):
        settings.parsing()


@pytest.mark.parametrize(
    ("name", "value"),
    [("CITEWISE_PARSE_ISOLATION", "some"), ("CITEWISE_PARSE_MEMORY_MB", "-1"),
     ("CITEWISE_PARSE_SECONDS", "nan"), ("CITEWISE_PARSE_SECONDS", "soon"),
     ("CITEWISE_MAX_FILE_MB", "0"), ("CITEWISE_MAX_FILE_MB", "16MB"),
     ("CITEWISE_MAX_FILE_MB", "inf"), ("CITEWISE_MAX_TEXT_MB", "-4"),
     ("CITEWISE_MAX_SECTIONS", "lots"), ("CITEWISE_MAX_SECTIONS", "0"),
     ("CITEWISE_MAX_PDF_PAGES", "1.5"), ("CITEWISE_MAX_OCR_PAGES", "-1")],
)  # fmt: skip
def test_a_bad_parse_setting_is_refused(name: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=rf"^{name} must be .*, not {value!r}$"):
        ParseSettings.from_env({name: value})


def test_a_bad_store_timeout_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="CITEWISE_STORE_TIMEOUT"):
        StoreSettings.from_env({"CITEWISE_STORE_TIMEOUT": "0"})


def test_a_child_process_gets_this_environment_and_the_extra_values() -> None:
    env = child_environment(CITEWISE_TEST_EXTRA="1")
    assert env["CITEWISE_TEST_EXTRA"] == "1" and "PATH" in env
