"""The deterministic grounding check that runs on every answer: names, links and citations.

:func:`verify` reads an answer against the sections it was written from (and the
conversation) and reports what they do not support: identifier-like tokens found nowhere in
them, links that point at no retrieved section, citations whose section shares too few words
with the sentence they are attached to, and blocks no section supports. It is plain string
work, a few milliseconds per answer (``python -m benchmarks.verify``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from citewise.grounding.claimless import checkable_text, code_text, is_english
from citewise.grounding.contradiction import contradictions
from citewise.grounding.internal import internal_names
from citewise.grounding.markdown import (
    INLINE_CODE,
    Block,
    blocks,
    links,
    outside_links_text,
    sentence_around,
    without_links,
)
from citewise.grounding.overlap import content_words, support, union
from citewise.grounding.quoted_links import quotes_its_section
from citewise.grounding.tokens import answer_tokens, inline_code_tokens
from citewise.grounding.units import answer_units, check_units, known_manager
from citewise.grounding.vocabulary import Vocabulary, normalize_command, shell_words
from citewise.models import Citation, CitationSupport, Hit, Problem, Verification

CITATION_THRESHOLD = 0.5
"""A citation is supported when its section holds this share of its sentence's content
words (measured on the LGOS dev cases: see ``benchmarks/verify.md``)."""
BLOCK_THRESHOLD = 0.5
"""A block is supported (and may be cited by attribution) when one section holds this
share of its content words (``benchmarks/verify.md``)."""
MIN_SENTENCE_WORDS = 3
"""A sentence with fewer content words ("See [Install](…).") is judged with its block."""
MIN_CLAIM_WORDS = 3
"""A block with fewer content words (a greeting, a lead-in) makes no claim to support."""


@dataclass(frozen=True)
class Sources:
    """The retrieved sections and the conversation, prepared once per answer."""

    hits: Sequence[Hit]
    conversation: str = ""

    @cached_property
    def haystack(self) -> str:
        parts = [hit.passage for hit in self.hits] + [hit.url for hit in self.hits]
        # Markdown escapes in sources (``CITEWISE\_HOME``) are not part of the name.
        return "\n".join([*parts, self.conversation]).replace("\\_", "_").replace("\\*", "*")

    @cached_property
    def section_words(self) -> dict[str, frozenset[str]]:
        """The content words of each retrieved section URL (its chunks together)."""
        texts: dict[str, list[str]] = {}
        for hit in self.hits:
            texts.setdefault(hit.url, []).append(hit.passage)
        return {url: union(parts) for url, parts in texts.items()}

    @cached_property
    def heading_words(self) -> dict[str, frozenset[str]]:
        """The content words of each retrieved section's heading path."""
        found: dict[str, frozenset[str]] = {}
        for hit in self.hits:
            words = content_words(" ".join(hit.chunk.heading_path or (hit.chunk.title,)))
            found[hit.url] = found.get(hit.url, frozenset()) | words
        return found

    @cached_property
    def pages(self) -> frozenset[str]:
        return frozenset(hit.url.partition("#")[0] for hit in self.hits)

    @cached_property
    def vocabulary(self) -> Vocabulary:
        texts = [(hit.url, hit.passage) for hit in self.hits] + [("", self.conversation)]
        return Vocabulary(texts, [hit.url for hit in self.hits])

    def holds(self, token: str, *, attribute: bool = False) -> bool:
        """``token`` occurs whole in the sections or the conversation (see
        :mod:`citewise.grounding.vocabulary` for whole names and attributes)."""
        return self.vocabulary.holds_name(token, attribute=attribute)

    @cached_property
    def hosts(self) -> frozenset[str]:
        return frozenset(_host(hit.url) for hit in self.hits if _host(hit.url))

    def is_section(self, url: str) -> bool:
        return url in self.section_words or url.partition("#")[0] in self.pages

    def is_inside(self, url: str) -> bool:
        """A retrieved section or its page, or a page of the same site that a retrieved
        section links to itself (a quoted passage's own links)."""
        return self.is_section(url) or (_host(url) in self.hosts and self.holds(url))

    def best_section(self, words: frozenset[str]) -> tuple[str | None, float]:
        """The section URL that supports ``words`` best, and its support."""
        best: tuple[str | None, float] = (None, 0.0)
        for url, section in self.section_words.items():
            score = support(words, section)
            if score > best[1]:
                best = (url, score)
        return best


def _host(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if sep else ""


def unsupported_tokens(text: str, sources: Sources) -> tuple[str, ...]:
    """The answer's identifier-like tokens that the sources do not hold, each once."""
    missing: dict[str, None] = {}
    for link in links(text):
        if not sources.is_section(link.url) and link.url not in sources.vocabulary.haystack:
            missing[link.url] = None
    # Names the answer itself writes as attributes (``config.OPENAI_API_PREFIX``).
    attributes = set(_ATTRIBUTE.findall(text)) - set(_STANDALONE.findall(text))
    for token in answer_tokens(text):
        if token.startswith("`") and token.endswith("`") and len(token) > 1:
            span = " ".join(token[1:-1].split())
            if " " in span and sources.vocabulary.holds(span):
                continue
            for word in inline_code_tokens(span):
                if not _held(word, sources, word in attributes):
                    missing[word] = None
        elif not _held(token, sources, token in attributes):
            missing[token] = None
    return tuple(missing)


# Commands any shell has, as the standard library is any Python's: the docs need not show them.
SHELL_BUILTINS = frozenset("export cd echo source cp mv mkdir cat ls set unset env".split())
_ATTRIBUTE = re.compile(r"(?<=[\w)\]]\.)([A-Za-z_]\w*)")
_STANDALONE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")


def _held(token: str, sources: Sources, attribute: bool = False) -> bool:
    if token.startswith(("http://", "https://")):
        return token in sources.vocabulary.haystack
    if sources.holds(token, attribute=attribute) or token.split(".")[0] in sys.stdlib_module_names:
        return True
    if token in SHELL_BUILTINS or known_manager(token, sources.vocabulary):
        return True
    # ``app.add_middleware``: the receiver is the answer's own variable; the attribute
    # path after it is what the docs must show.
    head, dot, rest = token.partition(".")
    return bool(dot) and head[:1].islower() and sources.vocabulary.holds(f".{rest}")


def near_misses(names: Sequence[str], sources: Sources) -> list[Problem]:
    """A ``near_miss`` problem for each unsupported name close to a documented one."""
    found = []
    for name in names:
        if name.startswith(("http://", "https://")):
            continue
        documented = sources.vocabulary.near_miss(name)
        if documented:
            detail = f"not in the sections; did you mean `{documented}`?"
            found.append(Problem("near_miss", name, detail, documented))
    return found


def outside_links(text: str, sources: Sources) -> tuple[str, ...]:
    """Links in the answer that point outside the retrieved sections, each once (see
    :meth:`Sources.is_inside`), but the docs' own links in a passage the answer quotes
    (:mod:`citewise.grounding.quoted_links`)."""
    passages = [hit.passage for hit in sources.hits]
    found = (
        link.url
        for link in links(text)
        if not sources.is_inside(link.url) and not quotes_its_section(text, link, passages)
    )
    return tuple(dict.fromkeys(found))


def citation_support(text: str, citation: Citation, sources: Sources) -> CitationSupport:
    """How well the cited section supports the sentence the citation is attached to.

    An attributed citation is judged on the block it covers. A citation whose sentence has
    too few words of its own ("See [Install](…).", a "**[Heading](…)**" line over a quote)
    is judged on the block before or after it, whichever the section supports better.
    """
    section = sources.section_words.get(citation.url)
    if citation.attributed:
        spans = [(citation.start_index, citation.end_index)]
    else:
        spans = [sentence_around(text, citation.start_index, citation.end_index)]
        start, end = spans[0]
        if len(content_words(outside_links_text(text[start:end]))) < MIN_SENTENCE_WORDS:
            spans = _neighbour_spans(text, citation.start_index)
    score = max(support(_words(text, span), section) for span in spans) if section else 0.0
    supported = section is not None and score >= CITATION_THRESHOLD
    if not supported and not citation.attributed and sources.holds(citation.url):
        # A link the docs themselves make, inside a passage the answer quotes or restates
        # (an extractive answer quotes sections with their links): the retrieved section
        # that holds the text supports it, not the linked page.
        quoted = max(sources.best_section(_words(text, span))[1] for span in spans)
        if quoted >= CITATION_THRESHOLD:
            score, supported = quoted, True
    return CitationSupport(
        url=citation.url,
        start_index=citation.start_index,
        end_index=citation.end_index,
        score=score,
        supported=supported,
        attributed=citation.attributed,
    )


def _words(text: str, span: tuple[int, int]) -> frozenset[str]:
    return content_words(without_links(text[span[0] : span[1]]))


def _neighbour_spans(text: str, index: int) -> list[tuple[int, int]]:
    """The block holding ``index`` joined with the block before it, and with the one after."""
    found = blocks(text)
    for number, block in enumerate(found):
        if block.start <= index <= block.end:
            before = found[number - 1].start if number else block.start
            after = found[number + 1].end if number + 1 < len(found) else block.end
            return [(before, block.end), (block.start, after)]
    return [(0, len(text))]


# A paragraph wholly in italics is a note about the answer (the extractive label), not a claim.
_NOTE = re.compile(r"\s*([*_])(?!\1)[^*_].*(?<!\1)\1\s*", re.S)


def claims(text: str) -> list[Block]:
    """The blocks that make a claim: paragraphs, list items and code blocks with enough
    content words (headings, italic notes and one-line lead-ins do not)."""
    return [
        block
        for block in blocks(text)
        if block.kind != "heading"
        and not _NOTE.fullmatch(block.text)
        and len(content_words(without_links(block.text))) >= MIN_CLAIM_WORDS
    ]


def unsupported_blocks(text: str, sources: Sources) -> tuple[str, ...]:
    """The first words of each claim no retrieved section supports (none without hits)."""
    if not sources.hits:
        return ()
    found = []
    for block in claims(text):
        body = without_links(block.text)
        if block.kind != "code":
            body = checkable_text(body)
            if not is_english(body):
                # Another language: only its code can be matched against English sections
                # (its names and values are still checked by the name and unit checks).
                words = content_words(code_text(body))
                if words and sources.best_section(words)[1] < BLOCK_THRESHOLD:
                    found.append(_excerpt(block.text))
                continue
        words = content_words(body)
        if len(words) < MIN_CLAIM_WORDS:
            continue  # only small talk or a summary: no claim to support
        if sources.best_section(words)[1] < BLOCK_THRESHOLD:
            found.append(_excerpt(block.text))
    return tuple(found)


CONTEXT_THRESHOLD = 0.5
"""A command's lead-in ("To start the server, run:") is supported when the heading path of a
section that shows the command holds this share of its content words…"""


# Words a lead-in uses of the command itself ("using the `x` command"), not of its purpose.
_UNIT_WORDS = frozenset("command commands code snippet script line terminal shell".split())

CONTEXT_MARGIN = 1 / 3 - 1e-9
"""…and flagged only when another retrieved section holds at least a third more of them
(one more word of a three-word lead-in)."""


def misplaced_commands(text: str, sources: Sources) -> list[Problem]:
    """A ``context`` problem for each documented command offered for what no section that
    shows it says (``uv add x`` as the way to start a server)."""
    found = []
    for unit in answer_units(text):
        if unit.kind != "command" or not unit.lead_in:
            continue
        line = normalize_command(unit.text)
        words = shell_words(line)
        holding = {
            c.url
            for c in sources.vocabulary.together(words, first=words[0])
            if c.url in sources.section_words
        }
        said = content_words(without_links(INLINE_CODE.sub(" ", unit.lead_in)))
        said -= content_words(line) | _UNIT_WORDS
        if not holding or len(said) < 2:
            continue
        # What a section is about is its heading path ("Get Started › Install"); flagged
        # only when another retrieved section's headings say it clearly better: the
        # command was taken from one section for what another one does.
        headings = sources.heading_words
        score = max(support(said, headings[url]) for url in holding)
        elsewhere = max(support(said, words) for words in headings.values())
        if score < CONTEXT_THRESHOLD and elsewhere >= max(
            CONTEXT_THRESHOLD, score + CONTEXT_MARGIN
        ):
            found.append(
                Problem(
                    "context",
                    unit.text,
                    f"the sections that show it do not say what the answer says of it "
                    f"(“{_excerpt(unit.lead_in)}”)",
                )
            )
    return found


def list_problems(text: str, sources: Sources) -> list[Problem]:
    """A ``list`` problem for each list whose items one section holds while that section
    does not support the list's lead-in ("These services start:" over a diagram's nodes)."""
    found = []
    parts = blocks(text)
    for number, block in enumerate(parts):
        if block.kind != "paragraph" or not block.text.rstrip().endswith(":"):
            continue
        items = []
        for following in parts[number + 1 :]:
            if following.kind != "item":
                break
            items.append(following)
        lead = content_words(without_links(block.text))
        if len(items) < 2 or len(lead) < 2:
            continue
        words = content_words(without_links(" ".join(item.text for item in items)))
        url, score = sources.best_section(words)
        if url is None or score < BLOCK_THRESHOLD:
            continue
        if support(lead, sources.section_words[url]) < BLOCK_THRESHOLD:
            found.append(
                Problem(
                    "list",
                    _excerpt(block.text),
                    f"its items come from {url}, which does not say what the lead-in says",
                )
            )
    return found


def diagram_labels(text: str, sources: Sources) -> list[Problem]:
    """A ``diagram`` problem for a list whose items the sections hold only as a diagram's
    node labels ("OpenAI client", "Validate OpenAI request"): labels of a picture are not
    the documented names of things (services, settings, steps) a list presents."""
    found = []
    contexts = sources.vocabulary.contexts
    for run in _item_runs(blocks(text)):
        labels = []
        for item in run:
            label = _ITEM_TEXT.sub("", item.text).strip().strip("`*_ ").rstrip(".:;,")
            if len(label) < 3:
                continue
            pattern = re.compile(rf"(?<![\w-]){re.escape(label)}(?![\w-])", re.I)
            places = [c for c in contexts if pattern.search(c.text)]
            if places and all(c.diagram for c in places):
                labels.append((label, places[0].url))
        if len(labels) >= 2 or (labels and 2 * len(labels) >= len(run)):
            names = ", ".join(f"`{label}`" for label, _ in labels)
            found.append(
                Problem(
                    "diagram",
                    _excerpt(run[0].text),
                    f"{names}: only a diagram's labels in {labels[0][1]}",
                )
            )
    return found


_ITEM_TEXT = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+")


def _item_runs(parts: Sequence[Block]) -> list[list[Block]]:
    runs: list[list[Block]] = []
    current: list[Block] = []
    for block in parts:
        if block.kind == "item":
            current.append(block)
            continue
        if current:
            runs.append(current)
        current = []
    if current:
        runs.append(current)
    return runs


def _excerpt(text: str, size: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"


def verify(
    text: str,
    hits: Sequence[Hit],
    conversation: str = "",
    citations: Sequence[Citation] = (),
    *,
    mode: str = "report",
) -> Verification:
    """Check ``text`` against the sections it was written from and the conversation.

    Args:
        text: the answer.
        hits: the retrieved sections the answer call saw.
        conversation: the conversation's text (names the user wrote are supported).
        citations: the answer's ``url_citation`` annotations (attributed ones included).
        mode: the ``verify`` option the check runs under (recorded in the result).
    """
    return check(text, Sources(hits, conversation), citations, mode=mode)


def check(
    text: str, sources: Sources, citations: Sequence[Citation] = (), *, mode: str = "report"
) -> Verification:
    """:func:`verify` over sources already prepared (``ground`` shares them with
    attribution)."""
    unsupported = unsupported_tokens(text, sources)
    problems = [*near_misses(unsupported, sources), *check_units(text, sources.vocabulary)]
    if sources.hits:
        problems += misplaced_commands(text, sources)
        problems += contradictions(text, sources.vocabulary)
        problems += list_problems(text, sources)
        problems += diagram_labels(text, sources)
        problems += internal_names(text, sources.vocabulary)
    return Verification(
        unsupported=unsupported,
        outside_links=outside_links(text, sources),
        citations=tuple(citation_support(text, c, sources) for c in citations),
        attributed=sum(1 for c in citations if c.attributed),
        unsupported_blocks=unsupported_blocks(text, sources),
        mode=mode,
        problems=tuple(problems),
    )
