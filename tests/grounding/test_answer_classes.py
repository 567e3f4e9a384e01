"""The wrong answers that passed the check before (issue 37's classes), against real LGOS pages.

Each section is a real page of the LGOS 0.12.0 docs (``../shared/data``), given whole, as a
retrieved section; each wrong answer is one a small model wrote or could write.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.grounding import ground, verify
from citewise.models import Chunk, Hit, Verification

from ..conftest import LGOS, require

SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/0.12.0/"


def page(path: str) -> Hit:
    text = (require(LGOS / "docs") / path).read_text()
    name = path.removesuffix(".md").removesuffix("index").rstrip("/")
    url = f"{SITE}{name}/" if name else SITE
    title = text.lstrip("# ").splitlines()[0]
    chunk = Chunk(url, path, 0, 0, text, title, (title,), "", url, f"{name}/")
    return Hit(chunk, 1.0, ("keyword",))


@pytest.fixture(scope="module")
def hits() -> list[Hit]:
    pages = [
        "reference.md",
        "getting-started.md",
        "how-to-guides/authentication.md",
        "demo/reference.md",
        "tutorials/openai-clients.md",
        "explanation/architecture.md",
    ]
    return [page(path) for path in pages]


def kinds(result: Verification) -> set[str]:
    return {problem.kind for problem in result.problems}


def test_a_name_is_matched_whole_not_as_a_piece_of_an_attribute(hits: list[Hit]) -> None:
    # The sections have ``settings.OPENAI_API_PREFIX`` (an attribute) and the variable
    # ``LGOS_OPENAI_API_PREFIX``; a standalone ``OPENAI_API_PREFIX`` is neither.
    result = verify("Set the environment variable `OPENAI_API_PREFIX=/api`.", hits)

    assert result.unsupported == ("OPENAI_API_PREFIX",)
    assert [p.suggestion for p in result.problems] == ["LGOS_OPENAI_API_PREFIX"]
    assert not result.ok
    attribute = "The middleware reads `settings.OPENAI_API_PREFIX` and `LGOS_OPENAI_API_PREFIX`."
    assert verify(attribute, hits).unsupported == ()


def test_a_truncated_name_is_flagged_with_the_documented_spelling(hits: list[Hit]) -> None:
    result = verify("Set LGOS_OPENAI_API to the prefix you want.", hits)

    assert result.unsupported == ("LGOS_OPENAI_API",)
    assert "did you mean `LGOS_OPENAI_API_PREFIX`" in result.problems[0].detail


def test_a_command_made_of_parts_from_different_places_is_a_recombination(
    hits: list[Hit],
) -> None:
    result = verify("Run `lgos-demo-api --reload` to reload the demo API on changes.", hits)

    assert result.unsupported == ()  # each part occurs: the command does not
    assert kinds(result) == {"command"}
    assert verify("Run `uvicorn app:app --reload`.", hits).ok


def test_an_assignment_is_checked_with_its_value(hits: list[Hit]) -> None:
    result = verify("Set `LGOS_OPENAI_API_DOCS_ENABLED=false` to expose the docs.", hits)

    assert "assignment" in kinds(result)
    assert "`LGOS_OPENAI_API_DOCS_ENABLED=true`" in result.problems[0].detail
    assert verify("Set `LGOS_OPENAI_API_DOCS_ENABLED=true` to expose the docs.", hits).ok


@pytest.mark.parametrize(
    "answer",
    [
        "```bash\nnpm install langgraph-openai-serve\n```",
        "Install it with `yarn add langgraph-openai-serve`.",
        "```bash\npip install langgraph-openai-serve[magicauth]\n```",
    ],
)
def test_a_package_installed_with_another_ecosystem_or_extra_is_flagged(
    answer: str, hits: list[Hit]
) -> None:
    result = verify(answer, hits)

    assert "package" in kinds(result)
    assert not result.ok


def test_installs_of_the_same_ecosystem_pass(hits: list[Hit]) -> None:
    for answer in (
        "Install it with `pip install langgraph-openai-serve`.",
        'With poetry: `poetry add "langgraph-openai-serve[tracing]"`.',
        "For JavaScript clients: `npm install openai`.",
    ):
        assert verify(answer, hits).ok, answer


def test_an_invented_console_command_is_flagged(hits: list[Hit]) -> None:
    result = verify("Start it with `lgos serve --auth magic`.", hits)

    assert {"serve", "--auth"} <= set(result.unsupported)


def test_a_command_offered_for_what_another_section_does_is_flagged(hits: list[Hit]) -> None:
    sections = [h for h in hits if "getting-started" in h.url]
    install, run = (
        _section(sections[0], "## Install", "## Create"),
        _section(sections[0], "## Run The Server", "## Call"),
    )
    result = verify(
        "To start the server, run `pip install langgraph-openai-serve`.", [install, run]
    )

    assert kinds(result) == {"context"}
    assert verify("To install it, run `pip install langgraph-openai-serve`.", [install, run]).ok


def _section(hit: Hit, start: str, end: str) -> Hit:
    text = hit.chunk.text
    body = text[text.index(start) : text.index(end)]
    anchor = start.lstrip("# ").lower().replace(" ", "-")
    chunk = Chunk(
        f"{hit.url}#{anchor}", hit.chunk.doc_id, 0, 0, body, hit.chunk.title,
        (hit.chunk.title, start.lstrip("# ")), anchor, f"{hit.url}#{anchor}", hit.chunk.page,
    )  # fmt: skip
    return Hit(chunk, 1.0, ("keyword",))


def test_a_claim_its_section_contradicts_is_flagged_and_not_cited(hits: list[Hit]) -> None:
    answer = "LGOS enforces API key authentication by default."
    citations, result = ground(answer, hits)

    assert result is not None and "contradiction" in kinds(result)
    assert citations == ()  # no citation to the section that says the opposite
    assert verify("The package does not enforce authentication by default.", hits).ok


def test_a_default_other_than_the_documented_one_is_a_contradiction(hits: list[Hit]) -> None:
    result = verify("`LGOS_OPENAI_API_DOCS_ENABLED` defaults to `true`.", hits)

    assert "contradiction" in kinds(result)
    assert verify("`LGOS_OPENAI_API_DOCS_ENABLED` defaults to `false`.", hits).ok


def test_an_answer_no_section_supports_fails_the_check(hits: list[Hit]) -> None:
    result = verify("The capital of Australia is Canberra.", hits)

    assert result.unsupported_blocks and not result.ok
    assert result.unsupported == ()


def test_a_diagrams_node_labels_listed_as_services_are_flagged(hits: list[Hit]) -> None:
    answer = (
        "Docker Compose starts these services:\n\n- `OpenAI client`\n"
        "- `Validate OpenAI request`\n- `Run preparation`\n- `LGOS response rendering`"
    )
    result = verify(answer, hits)

    assert "diagram" in kinds(result)
    assert not result.ok


@pytest.mark.parametrize(
    ("answer", "name"),
    [
        ("Pass -w 4 to run several workers.", "-w"),
        ("Set `PORT=9000` before starting.", "PORT"),
        ("```python\nGraphConfig(graph=graph, magic_auth=True)\n```", "magic_auth"),
    ],
)
def test_short_flags_caps_names_and_snake_case_in_code_are_checked(
    answer: str, name: str, hits: list[Hit]
) -> None:
    assert name in verify(answer, hits).unsupported


def test_a_code_blocks_own_names_are_not_flagged(hits: list[Hit]) -> None:
    answer = (
        "```python\nfrom openai import OpenAI\n\n"
        'client = OpenAI(base_url="http://localhost:8000/v1", api_key="DUMMY")\n'
        "for choice_index, choice in enumerate(client.models.list()):\n"
        "    print(choice_index, choice)\n```"
    )
    assert verify(answer, hits).unsupported == ()


def test_an_import_from_another_module_is_a_recombination(hits: list[Hit]) -> None:
    answer = "```python\nfrom langgraph_openai_serve.core.settings import GraphRegistry\n```"
    result = verify(answer, hits)

    assert "import" in kinds(result)
    assert result.problems[0].suggestion == "langgraph_openai_serve"


def test_names_the_user_wrote_are_supported_whole(hits: list[Hit]) -> None:
    answer = "Yes, `MY_PREFIX` is not a setting the docs mention."

    assert verify(answer, hits, "Can I set MY_PREFIX?").unsupported == ()
    assert verify(answer, hits, "Can I set MY_PREFIX_X?").unsupported == ("MY_PREFIX",)


def test_the_pages_exist() -> None:
    assert Path(require(LGOS / "docs") / "reference.md").is_file()
