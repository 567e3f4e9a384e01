"""Internal names offered as the user-facing way: a call no retrieved section presents.

A small model that reads an API reference offers whatever callable it finds there: "call
`stream_run()`" for streamed citations, while the section in front of it says the client
reads `delta.annotations` and the reference lists `stream_run` as a function of the internal
module `langgraph_openai_serve.graph.runner`. The name is in the sections, so the name check
passes it; what is wrong is the role. A call the answer offers (``call``/``use``/``run``/
``import`` … a callable in inline code, or a call in the answer's own code) is checked here:

- a retrieved section *presents* the name to the reader when it shows it in code (an
  example, an import line) other than the name's own API entry, or offers it in prose the
  same way ("Use `citation_slice(annotation, text)` to validate …");
- an API entry presents it when the object is public: reached from the top-level package
  (``pkg.name``, ``pkg.Class.name``), not from a submodule (``pkg.graph.runner.name``) and
  not underscore-private.

A name the sections only mention ("the route returns an SSE response backed by
`stream_run()`") or list as an internal entry is an ``internal`` problem. A name found in no
section is the name check's (``unsupported``), not this one's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from citewise.grounding.markdown import blocks
from citewise.grounding.vocabulary import Context, Vocabulary
from citewise.models import Problem

# An offer: a verb (or "with"/"via") then, at most an article and a noun later, inline code.
_OFFER = re.compile(
    r"\b(?P<verb>call|calls|calling|invoke|invokes|invoking|use|uses|using|run|runs|running"
    r"|import|imports|importing|try|with|via|through)\s+(?:(?:the|a|an|its|their)\s+)?"
    r"(?:(?:function|method|helper|coroutine|callable|API)\s+)?`(?P<span>[^`\n]+)`",
    re.I,
)
_CALLING_VERBS = frozenset({"call", "calls", "calling", "invoke", "invokes", "invoking"})
_IMPORTING_VERBS = frozenset({"import", "imports", "importing"})
_CALLABLE = re.compile(r"\s*(?:await\s+)?(?P<path>[A-Za-z_][\w.]*)\s*(?P<call>\()?")
_CODE_CALL = re.compile(r"(?<![\w])(?P<path>[A-Za-z_][\w.]*)\s*\(")
_DEFINED = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.M)
_PYTHON_WORDS = frozenset(
    "if elif while for return print len str int float dict list set tuple range isinstance "
    "super type open not and or in await lambda yield assert".split()
)


def offered_calls(text: str) -> list[tuple[str, str]]:
    """The callables the answer offers to the reader, as ``(name, what it wrote)``, each
    name once: inline code after an offering verb in prose (a call, or a dotted path
    after "import"), and the calls of its code blocks (minus what the block defines)."""
    found: dict[str, str] = {}
    for block in blocks(text):
        if block.kind == "code":
            body = block.text.split("\n", 1)[1] if "\n" in block.text else ""
            defined = set(_DEFINED.findall(body))
            for match in _CODE_CALL.finditer(body):
                name = match.group("path").rpartition(".")[2]
                if name not in defined and name not in _PYTHON_WORDS:
                    found.setdefault(name, match.group(0).rstrip("( ") + "()")
            continue
        for offer in _OFFER.finditer(block.text):
            called = _CALLABLE.match(offer.group("span"))
            if called is None:
                continue
            verb = offer.group("verb").lower()
            path = called.group("path").rstrip(".")
            if not (
                called.group("call")
                or verb in _CALLING_VERBS
                or (verb in _IMPORTING_VERBS and "." in path)
            ):
                continue
            name = path.rpartition(".")[2]
            if name and name not in _PYTHON_WORDS:
                found.setdefault(name, offer.group("span"))
    return list(found.items())


@lru_cache(maxsize=1024)
def _whole(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


def entry_path(url: str) -> str:
    """The dotted object path an API-reference section's anchor names ("" for a prose
    section): ``…/reference/#langgraph_openai_serve.graph.runner.stream_run``."""
    anchor = url.partition("#")[2]
    if "." in anchor and re.fullmatch(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+", anchor):
        return anchor
    return ""


def public_path(path: str) -> bool:
    """An object reached from the top-level package: ``pkg.name`` or ``pkg.Class.name``
    (classes capitalized), no part underscore-private."""
    parts = path.split(".")
    if any(part.startswith("_") and not part.startswith("__") for part in parts):
        return False
    modules = 0
    for part in parts[:-1]:
        if part[:1].isupper():
            break
        modules += 1
    return modules <= 1


def _presents(context: Context, name: str) -> bool:
    if context.diagram or _whole(name).search(context.text) is None:
        return False
    if context.code:
        return True
    for offer in _OFFER.finditer(context.text):
        if _whole(name).search(offer.group("span")):
            return True
    return False


def _places(name: str, vocabulary: Vocabulary) -> Iterator[Context]:
    for context in vocabulary.contexts:
        if _whole(name).search(context.text):
            yield context


def internal_names(text: str, vocabulary: Vocabulary) -> list[Problem]:
    """An ``internal`` problem for each call the answer offers that the sections hold but
    no section presents to the reader (module docstring)."""
    found = []
    for name, written in offered_calls(text):
        places = list(_places(name, vocabulary))
        if not places:
            continue  # not in the sections at all: the name check reports it
        own_entries = [c.url for c in places if entry_path(c.url).rpartition(".")[2] == name]
        presented = any(
            c.url == ""  # the user wrote it
            or (c.url not in own_entries and _presents(c, name))
            or (c.url in own_entries and public_path(entry_path(c.url)))
            for c in places
        )
        if presented:
            continue
        if own_entries:
            where = (
                f"only as an API entry of an internal module (`{entry_path(own_entries[0])}`)"
                if not public_path(entry_path(own_entries[0]))
                else "only as an API entry"
            )
        else:
            where = f"only in a description of how it works ({places[0].url})"
        found.append(
            Problem(
                "internal",
                written,
                f"offered as the way to do it, but the sections show `{name}` {where}, "
                "not as something the reader calls",
            )
        )
    return found
