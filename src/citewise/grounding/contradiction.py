"""Contradictions: an answer's sentence that a section says the opposite of.

Lexical overlap cannot tell "LGOS enforces authentication by default" from "The package does
not enforce authentication by default": they share every content word. Two checks read
what overlap ignores:

- *Polarity*: each prose sentence of the answer is aligned with the section sentence (or
  table row) sharing most of its content words (at least ``MIN_SHARED`` and
  ``MIN_COVERAGE`` of the sentence's); when one of the two is negated and the other not
  (negation words, and the states that negate: disabled, false), it is a
  contradiction.
- *Defaults*: a sentence naming a documented setting with "default" and a value, where a
  section's table gives that setting a different default (a "Default" column).

Measured on labelled claim/section pairs written from the LGOS docs
(the ``contradiction`` class of ``tests/data/grounding-answers.jsonl``: claims, right and
wrong, with their sections; ``benchmarks/grounding.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from citewise.grounding.markdown import INLINE_CODE, blocks, without_links
from citewise.grounding.overlap import content_words
from citewise.grounding.vocabulary import Context, Vocabulary
from citewise.models import Problem

MIN_SHARED = 3
MIN_COVERAGE = 0.5
NEGATORS = frozenset(
    "not no never without cannot neither nor none nothing isn't aren't doesn't "
    "don't didn't won't can't shouldn't mustn't wasn't".split()
)
NEGATIVE_STATES = frozenset("disabled disable disables false".split())
_STATES = NEGATORS | NEGATIVE_STATES | frozenset("enabled true required".split())
_WORD = re.compile(r"[a-z']+")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|,\s+(?=(?:and|but|so|while|whereas|although)\s)")


def polarity(text: str) -> int:
    """1 when ``text`` is negated (an odd number of negations), else 0."""
    words = _WORD.findall(text.lower().replace("’", "'"))
    count = sum(1 for w in words if w in NEGATORS or w.endswith("n't") or w in NEGATIVE_STATES)
    return count % 2


@lru_cache(maxsize=16384)
def _claim_words(text: str) -> frozenset[str]:
    return content_words(text) - _STATES


@dataclass(frozen=True)
class Contradiction:
    """An answer sentence and the section context that says the opposite."""

    sentence: str
    context: Context
    reason: str

    def problem(self) -> Problem:
        said = " ".join(self.context.text.split())
        said = said if len(said) <= 160 else said[:159] + "…"
        return Problem("contradiction", _short(self.sentence), f"{self.reason}: “{said}”")


def _short(text: str, size: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"


_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)


def _sentences(text: str) -> Iterator[str]:
    """The answer's prose clauses (a quoted passage read as its text; table rows skipped:
    a quoted table is the docs' own)."""
    for block in blocks(_QUOTE.sub("", text)):
        if block.kind in {"code", "heading"}:
            continue
        prose = " ".join(
            line for line in block.text.splitlines() if not line.lstrip().startswith("|")
        )
        for sentence in _SENTENCE.split(without_links(prose)):
            # A sentence cut short ("…") may have lost its negation: nothing to compare.
            if sentence.strip() and not sentence.rstrip().endswith(("…", "...")):
                yield sentence.strip()


@lru_cache(maxsize=16384)
def _clauses(context: Context) -> tuple[Context, ...]:
    # Split like the answer's sentences, so a clause meets a clause, not a sentence whose
    # other clause carries the negation.
    parts = (clause.strip() for clause in _SENTENCE.split(context.text))
    return tuple(Context(context.url, part, context.code) for part in parts if part)


def find(
    text: str, vocabulary: Vocabulary, urls: frozenset[str] | None = None
) -> list[Contradiction]:
    """The answer's sentences a section contradicts (``urls``: only those sections)."""
    contexts = [
        clause
        for c in vocabulary.contexts
        if c.url and not c.code and (urls is None or c.url in urls)
        for clause in _clauses(c)
    ]
    found = []
    for sentence in _sentences(text):
        contradiction = _opposite(sentence, contexts) or _other_default(sentence, vocabulary, urls)
        if contradiction:
            found.append(contradiction)
    return found


def _opposite(sentence: str, contexts: list[Context]) -> Contradiction | None:
    # Prose words only: a command or name in code is checked as a unit or a name, and a
    # sentence that shares only code with another says nothing of its polarity.
    claim = _claim_words(INLINE_CODE.sub(" ", sentence))
    if len(claim) < MIN_SHARED:
        return None
    best: tuple[float, Context | None] = (0.0, None)
    for context in contexts:
        if context.text.startswith("|"):
            continue  # a table row: its defaults are read by ``_other_default``
        words = _claim_words(INLINE_CODE.sub(" ", context.text))
        shared = len(claim & words)
        if shared < MIN_SHARED:
            continue
        # Coverage both ways: a long passage holding the claim's words among many others
        # is not the sentence that says it.
        score = shared / len(claim) + 0.1 * shared / len(words)
        if score > best[0]:
            best = (score, context)
    score, aligned = best
    if aligned is None or score < MIN_COVERAGE:
        return None
    if polarity(sentence) != polarity(aligned.text):
        said = "negated" if polarity(aligned.text) else "affirmed"
        return Contradiction(sentence, aligned, f"the section says it {said}")
    return None


_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")


def _defaults(
    vocabulary: Vocabulary, urls: frozenset[str] | None
) -> dict[str, tuple[str, Context]]:
    """Setting name -> (default value, its row), from tables with a "Default" column."""
    found: dict[str, tuple[str, Context]] = {}
    for url, text in vocabulary.texts:
        if not url or (urls is not None and url not in urls):
            continue
        column = -1
        for line in text.replace("\\_", "_").splitlines():
            row = _TABLE_ROW.match(line)
            if not row:
                column = -1
                continue
            cells = [c.strip().strip("`").strip() for c in row.group(1).split("|")]
            if column < 0:
                lowered = [c.lower() for c in cells]
                column = lowered.index("default") if "default" in lowered else -2
                continue
            if column >= 0 and len(cells) > column and not set(cells[0]) <= set("-: "):
                found.setdefault(cells[0], (cells[column], Context(url, line.strip(), False)))
    return found


def _other_default(
    sentence: str, vocabulary: Vocabulary, urls: frozenset[str] | None
) -> Contradiction | None:
    if "default" not in sentence.lower():
        return None
    values = [m.group(2).strip() for m in INLINE_CODE.finditer(sentence)]
    values += re.findall(r"(?<![\w`])(true|false|True|False|\d+)(?![\w`])", sentence)
    # "enabled by default" states a boolean default as much as "defaults to `true`".
    lowered = sentence.lower()
    if re.search(r"\b(?:enabled|on) by default\b", lowered):
        values.append("true" if not polarity(lowered) else "false")
    elif re.search(r"\b(?:disabled|off) by default\b", lowered):
        values.append("false" if polarity(lowered) else "true")
    for name, (default, row) in _defaults(vocabulary, urls).items():
        if not name or not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", sentence):
            continue
        given = [v for v in values if v != name]
        if given and _same(default) not in {_same(v) for v in given}:
            return Contradiction(
                sentence, row, f"the sections give `{name}` the default `{default}`"
            )
    return None


def _same(value: str) -> str:
    return value.strip("`\"' ").lower()


def contradictions(text: str, vocabulary: Vocabulary) -> list[Problem]:
    """A ``contradiction`` problem for each sentence a retrieved section contradicts."""
    return [c.problem() for c in find(text, vocabulary)]
