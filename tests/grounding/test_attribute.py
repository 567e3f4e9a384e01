"""Attributed citations: claims the model left uncited are matched to a supporting section."""

from __future__ import annotations

from citewise.grounding import attribute, ground
from citewise.models import Citation

from ..fakes import make_hit

AUTH = make_hit(
    "guide/",
    "authentication",
    "The package does not enforce authentication by default. Add an API key middleware "
    "at the FastAPI host layer and keep health checks public for unauthenticated probes.",
)
LOGS = make_hit(
    "ops/",
    "request-ids",
    "Every request gets an X-Request-ID header: accepted from the client or generated as "
    "a UUID4, returned on every response and added to the log context as request_id.",
)
HITS = [AUTH, LOGS]
NO_LINKS = (
    "Authentication is not enforced by default: add an API key middleware at the FastAPI "
    "host layer, keeping health checks public for probes.\n\n"
    "- Each request carries an X-Request-ID header, generated as a UUID4 when missing.\n"
    "- The request ID is returned on every response and added to the log context.\n\n"
    "Billing invoices are emailed monthly to the account owner by the finance team."
)


def test_an_answer_without_links_gets_a_citation_per_supported_claim() -> None:
    citations = attribute(NO_LINKS, HITS)

    assert [c.url for c in citations] == [AUTH.url, LOGS.url, LOGS.url]
    assert all(c.attributed for c in citations)
    # Each span covers its whole paragraph or list item.
    spans = [NO_LINKS[c.start_index : c.end_index] for c in citations]
    assert spans[0].startswith("Authentication is not") and spans[0].endswith("probes.")
    assert (
        spans[1] == "- Each request carries an X-Request-ID header, generated as a UUID4 "
        "when missing."
    )
    assert spans[2].startswith("- The request ID")
    assert citations[0].title == "Guide › Authentication"


def test_a_claim_no_section_supports_is_reported_not_cited() -> None:
    citations, verification = ground(NO_LINKS, HITS)

    assert verification is not None
    assert verification.attributed == 3
    assert verification.unsupported_blocks == (
        "Billing invoices are emailed monthly to the account owner by the finance team.",
    )
    assert all(c.supported and c.attributed for c in verification.citations)
    assert not any("Billing" in NO_LINKS[c.start_index : c.end_index] for c in citations)


def test_an_answer_that_cites_every_claim_gets_nothing_added() -> None:
    text = f"Add an API key middleware at the FastAPI host layer ([Auth]({AUTH.url}))."
    written = (Citation(AUTH.url, "Auth", text.index("[Auth]"), len(text) - 1),)

    assert attribute(text, HITS, written) == written


def test_a_cited_heading_line_covers_the_quote_under_it() -> None:
    quote = "> The package does not enforce authentication by default. Add an API key middleware."
    text = (
        f"**[Authentication]({AUTH.url})**\n\n{quote}\n\nAnd the ops side: X-Request-ID is "
        "returned on every response and added to the log context."
    )
    written = (Citation(AUTH.url, "Auth", 2, text.index(")**") + 1),)

    citations = attribute(text, HITS, written)

    assert [(c.url, c.attributed) for c in citations] == [(AUTH.url, False), (LOGS.url, True)]


def test_verify_off_checks_and_adds_nothing() -> None:
    assert ground(NO_LINKS, HITS, mode="off") == ((), None)
