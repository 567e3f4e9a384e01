"""The deterministic check: planted fabrications are flagged, grounded names pass."""

from __future__ import annotations

import pytest

from citewise.grounding import verify
from citewise.models import Citation

from ..fakes import SITE, make_hit

SETTINGS = make_hit(
    "guide/",
    "settings",
    "Set `EXAMPLE_HOME` to a folder, then run `example serve --port 8000`.\n\n"
    "```python\nfrom example.server import create_app\n\napp = create_app()\n```\n\n"
    "The `Client` class reads `EXAMPLE_KEY`. See https://example.org/keys for keys.",
)
HITS = [SETTINGS]
GROUNDED = (
    "Set `EXAMPLE_HOME`, then start the server with `example serve --port 8000` "
    f"([Settings]({SETTINGS.url})):\n\n"
    "```python\nfrom example.server import create_app\nimport os\n\n"
    'app = create_app()\nprint(os.environ["EXAMPLE_KEY"])\n```\n\n'
    "The Client class reads EXAMPLE_KEY; keys are at https://example.org/keys."
)


def test_an_answer_whose_names_all_come_from_the_sections_passes() -> None:
    result = verify(GROUNDED, HITS)

    assert result.unsupported == ()
    # The docs' own link to another site, in a sentence that restates the section's.
    assert result.outside_links == ()
    assert result.ok


@pytest.mark.parametrize(
    ("planted", "token"),
    [
        ("Also set `EXAMPLE_CACHE_DIR`.", "EXAMPLE_CACHE_DIR"),
        ("Also set EXAMPLE_CACHE_DIR in the environment.", "EXAMPLE_CACHE_DIR"),
        ("Add `--workers 4` for more throughput.", "--workers"),
        ("Pass --reload while developing.", "--reload"),
        ("Run `example migrate` first.", "migrate"),
        ("Import it with `from example.auth import require_key`.", "example.auth"),
        ("Call example.server.create_router() instead.", "example.server.create_router"),
        ("The ApiKeyGuard class checks keys.", "ApiKeyGuard"),
        ("Details: https://example.org/api-keys/rotate", "https://example.org/api-keys/rotate"),
    ],
)
def test_a_planted_fabrication_is_flagged(planted: str, token: str) -> None:
    result = verify(f"{GROUNDED}\n\n{planted}", HITS)

    assert token in result.unsupported
    assert not result.ok


def test_fabrications_in_code_blocks_are_flagged() -> None:
    code = (
        "```python\nfrom example.auth import KeyStore\n\n"
        'store = KeyStore(os.environ["EXAMPLE_SECRET"])\n```\n\n'
        "```bash\nexample serve --port 8000 --tls\n```"
    )
    result = verify(code, HITS)

    assert set(result.unsupported) == {"example.auth", "KeyStore", "EXAMPLE_SECRET", "--tls"}


def test_names_the_user_wrote_are_supported() -> None:
    answer = "Yes: `MY_CUSTOM_FLAG` is not something the docs mention."

    assert verify(answer, HITS).unsupported == ("MY_CUSTOM_FLAG",)
    assert verify(answer, HITS, "Does MY_CUSTOM_FLAG exist?").unsupported == ()


def test_links_outside_the_retrieved_sections_are_flagged() -> None:
    answer = (
        f"See [Settings]({SETTINGS.url}), [the page]({SITE}guide/) and "
        "[our partner](https://evil.example.com/offer)."
    )
    result = verify(answer, HITS)

    assert result.outside_links == ("https://evil.example.com/offer",)
    assert "https://evil.example.com/offer" in result.unsupported


def test_each_citation_is_scored_against_the_sentence_it_is_attached_to() -> None:
    supported = f"Set `EXAMPLE_HOME` to a folder before you serve ([Settings]({SETTINGS.url}))."
    unrelated = f"Billing runs monthly and invoices arrive by post ([Settings]({SETTINGS.url}))."
    answer = f"{supported} {unrelated}"
    citations = [
        Citation(SETTINGS.url, "Settings", answer.index("[Settings]"), len(supported) - 1),
        Citation(SETTINGS.url, "Settings", answer.rindex("[Settings]"), len(answer) - 1),
    ]

    first, second = verify(answer, HITS, citations=citations).citations

    assert first.supported and first.score >= 0.6
    assert not second.supported and second.score < 0.2


def test_a_citation_of_a_section_that_was_not_retrieved_is_unsupported() -> None:
    answer = f"Set it up ([Other]({SITE}other/#x))."
    citation = Citation(f"{SITE}other/#x", "Other", answer.index("["), len(answer) - 1)

    (support,) = verify(answer, HITS, citations=[citation]).citations

    assert support.score == 0.0 and not support.supported


def test_the_result_is_reported_as_json() -> None:
    result = verify("Use `EXAMPLE_NOPE`.", HITS, mode="warn")

    assert result.as_json() == {
        "ok": False,
        "mode": "warn",
        "unsupported": ["EXAMPLE_NOPE"],
        "outside_links": [],
        "citations": [],
        "attributed": 0,
        "unsupported_blocks": [],
        "problems": [],
        "regenerated": False,
    }


def test_a_link_inside_a_quoted_passage_is_supported_by_the_section_quoted() -> None:
    from citewise.grounding import verify
    from citewise.models import Chunk, Citation, Hit

    def hit(page: str, text: str) -> Hit:
        chunk = Chunk(page, page, 0, 0, text, page, (page,), f"https://d.io/{page}/", "", "")
        return Hit(chunk, 1.0, ("dense",))

    guide = "https://d.io/guide/"
    quoted = (
        f"Use the [runtime settings guide]({guide}) to publish safe per-request graph "
        "settings and the authentication guide to add bearer tokens to every request."
    )
    hits = [hit("index", f"Index\n\n{quoted}"), hit("guide", "Guide\n\nPorts, hosts and workers.")]
    text = f"> {quoted}"
    start = text.index("[runtime")
    citation = Citation(guide, "Guide", start, text.index(")", start) + 1)
    [support] = verify(text, hits, citations=[citation]).citations
    assert support.supported
    # A claim of the answer's own, citing a page that does not say it, is still unsupported.
    own = f"Compiled graphs are cached in Redis between deployments, see the [guide]({guide})."
    start = own.index("[guide")
    citation = Citation(guide, "Guide", start, len(own) - 1)
    [support] = verify(own, hits, citations=[citation]).citations
    assert not support.supported
