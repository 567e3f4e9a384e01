"""The block check skips small talk and summaries, and judges other languages by code."""

from __future__ import annotations

from citewise.grounding import verify
from citewise.grounding.claimless import checkable_text, is_english

from ..fakes import make_hit

SECTION = make_hit(
    "guide/",
    "settings",
    "Set `EXAMPLE_HOME` to a folder, then run `example serve --port 8000` to start the "
    "server. The server answers on port 8000 and reads its keys from the environment.",
)
ANSWER = "Run `example serve --port 8000` to start the server; it answers on port 8000."


def test_a_closing_pleasantry_is_not_an_unsupported_claim() -> None:
    reply = f"{ANSWER}\n\nI hope this helps! Feel free to ask if you have more questions."
    result = verify(reply, [SECTION])
    assert result.unsupported_blocks == ()
    assert result.ok


def test_a_closing_summary_sentence_is_not_an_unsupported_claim() -> None:
    reply = f"{ANSWER}\n\nIn summary, this gives you a quick and convenient way to get going."
    assert verify(reply, [SECTION]).unsupported_blocks == ()


def test_an_invented_claim_after_a_summary_opening_is_still_flagged() -> None:
    # Only the closing sentence is dropped; the block's other sentence is still judged.
    reply = f"{ANSWER}\n\nOverall, easy. Mars colonies harvest frozen methane during winter."
    assert verify(reply, [SECTION]).unsupported_blocks != ()


def test_a_closing_sentence_with_code_is_still_judged() -> None:
    assert "EXAMPLE_TURBO" in checkable_text("In summary, set `EXAMPLE_TURBO` and go.")


def test_a_german_block_is_judged_by_its_code_not_its_words() -> None:
    reply = (
        "Starte den Server mit dem Befehl `example serve --port 8000`, dann ist er unter "
        "dem Port erreichbar und liest die Schlüssel aus der Umgebung."
    )
    assert verify(reply, [SECTION]).unsupported_blocks == ()


def test_a_german_block_with_code_no_section_holds_is_flagged() -> None:
    reply = (
        "Starte den Server mit dem Befehl `quantum warp drive engage`, dann ist er unter "
        "dem Port erreichbar und liest die Schlüssel aus der Umgebung."
    )
    assert verify(reply, [SECTION]).unsupported_blocks != ()


def test_a_short_english_sentence_without_function_words_is_english() -> None:
    # Such a sentence keeps the English word check (an unrelated fact is still flagged).
    assert is_english("Tokyo has about 14 million inhabitants.")
    assert not is_english("Die Basis-URL ist unter dem Port erreichbar und nicht geschützt.")
    reply = f"{ANSWER}\n\nTokyo has about 14 million inhabitants."
    assert verify(reply, [SECTION]).unsupported_blocks != ()
