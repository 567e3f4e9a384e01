"""Internal names offered as the user-facing way, against the real LGOS 0.12.0 sections.

The sections are the LGOS docs parsed as citewise indexes them, API reference entries
generated from the package's source included (``reference/#langgraph_openai_serve.…``).
"""

from __future__ import annotations

import pytest

from citewise.grounding import verify
from citewise.grounding.internal import entry_path, offered_calls, public_path
from citewise.kb import parse_folder
from citewise.models import Chunk, Hit, Section
from citewise.sources.nav import folder_api_reference

from ..conftest import LGOS, LGOS_SITE, LGOS_VERSION, require

ROOT = f"{LGOS_SITE}{LGOS_VERSION}/"


@pytest.fixture(scope="module")
def sections() -> dict[str, Section]:
    folder = require(LGOS / "docs")
    parsed = parse_folder(
        folder, site_url=LGOS_SITE, version=LGOS_VERSION, api=folder_api_reference(folder)
    )
    return {section.url.removeprefix(ROOT): section for section in parsed}


def hits(sections: dict[str, Section], *paths: str) -> list[Hit]:
    found = []
    for n, path in enumerate(paths):
        s = sections[path]
        chunk = Chunk(
            s.url, s.doc_id, n, n, s.text, s.title, s.heading_path, s.anchor, s.url, s.page
        )
        found.append(Hit(chunk, 1.0, ("keyword",)))
    return found


STREAMING = (
    "reference/#citation-events",
    "explanation/langgraph-integration/#runner-behavior",
    "reference/#langgraph_openai_serve.graph.runner.stream_run",
)
PREFIX = (
    "reference/#openai-compatible-api",
    "reference/#langgraph_openai_serve.core.settings.normalize_openai_api_prefix",
    "reference/#langgraph_openai_serve.LanggraphOpenaiServe.bind_openai_api",
)


def kinds(text: str, found: list[Hit]) -> list[str]:
    return [problem.kind for problem in verify(text, found).problems]


def test_an_internal_runner_function_offered_for_streamed_citations_is_flagged(
    sections: dict[str, Section],
) -> None:
    found = hits(sections, *STREAMING)
    answer = "Call `stream_run()`; it streams the citation events to the client as they happen."

    result = verify(answer, found)

    assert result.unsupported == ()  # the name is in the sections: the name check passes it
    internal = [p for p in result.problems if p.kind == "internal"]
    assert [p.text for p in internal] == ["stream_run()"]
    assert "langgraph_openai_serve.graph.runner.stream_run" in internal[0].detail
    assert not result.ok


def test_a_call_the_sections_offer_the_reader_passes(sections: dict[str, Section]) -> None:
    found = hits(sections, *STREAMING)
    # The section itself says "Use `citation_slice(annotation, text)` to validate …".
    answer = "Use `citation_slice(annotation, text)` to turn a received annotation into a slice."

    assert "internal" not in kinds(answer, found)


def test_a_public_entry_passes_and_a_settings_helper_does_not(
    sections: dict[str, Section],
) -> None:
    found = hits(sections, *PREFIX)

    public = "Call `bind_openai_api(prefix=...)` on the server to mount the API elsewhere."
    assert "internal" not in kinds(public, found)
    helper = "Call `normalize_openai_api_prefix(...)` at startup to change the prefix."
    assert kinds(helper, found) == ["internal"]


def test_a_mention_that_describes_how_lgos_works_is_not_an_offer(
    sections: dict[str, Section],
) -> None:
    # "the route returns an SSE response backed by `stream_run()`": a description, and the
    # only place the name occurs once its API entry is not retrieved.
    found = hits(sections, "explanation/langgraph-integration/#runner-behavior")

    result = verify("Use `stream_run()` to stream the answer.", found)

    assert "internal" in [p.kind for p in result.problems]
    assert "a description of how it works" in result.problems[-1].detail


def test_a_call_in_the_answers_code_is_checked_too(sections: dict[str, Section]) -> None:
    found = hits(sections, *STREAMING)
    code = (
        "Stream the run yourself:\n\n```python\nasync for event in stream_run(run):\n"
        "    handle(event)\n```\n"
    )
    assert "internal" in kinds(code, found)
    shown = (
        "Emit one from a node:\n\n```python\nfrom langgraph.config import get_stream_writer\n"
        "from langgraph_openai_serve import citation_event\n\n"
        'get_stream_writer()(citation_event(url="https://example.com/source", '
        'title="Example source", span=(10, 14)))\n```\n'
    )
    assert "internal" not in kinds(shown, found)


def test_names_the_user_wrote_and_names_no_section_holds_are_not_this_checks() -> None:
    assert offered_calls("Call `stream_run()` or use `LGOS_OPENAI_API_PREFIX`.") == [
        ("stream_run", "stream_run()")
    ]
    assert offered_calls("import `langgraph_openai_serve.graph.runner`") == [
        ("runner", "langgraph_openai_serve.graph.runner")
    ]
    assert offered_calls("```python\ndef helper():\n    return helper()\n```") == []


def test_public_paths() -> None:
    assert entry_path(f"{ROOT}reference/#langgraph_openai_serve.graph.runner.stream_run")
    assert entry_path(f"{ROOT}reference/#citation-events") == ""
    assert public_path("langgraph_openai_serve.citation_slice")
    assert public_path("langgraph_openai_serve.LanggraphOpenaiServe.bind_openai_api")
    assert not public_path("langgraph_openai_serve.graph.runner.stream_run")
    assert not public_path("langgraph_openai_serve._private")
    assert public_path("requests.Session.get")
