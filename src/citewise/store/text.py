"""Free text as keyword-search terms: words, stop words and the cap on a query's length."""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have how i if in into is it its "
    "me my of on or so than that the their then there these this to was what when where which "
    "who why will with you your s t".split()
)
MAX_TERMS = 64
# Letters and digits only: SQLite's unicode61 tokenizer treats "_" and punctuation as
# separators, and every engine should split text the same way.
WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """The lowercase words of ``text`` (NFKC-normalised, so full-width forms match)."""
    return WORD.findall(unicodedata.normalize("NFKC", text).lower())


def query_terms(text: str) -> list[str]:
    """A query's distinct words without stop words (kept when there is nothing else)."""
    found = words(text)
    content = [w for w in found if w not in STOPWORDS]
    return list(dict.fromkeys(content or found))[:MAX_TERMS]
