"""The answer without a chat model: the best-matching passages, quoted and cited."""

from __future__ import annotations

import re
from collections.abc import Sequence

from citewise.graph.citations import find_citations
from citewise.models import Answer, Hit

EXTRACTIVE_LABEL = (
    "*Extractive answer: no chat model is configured, so these are the passages of the "
    "documentation that best match the question, quoted as written.*"
)
NO_MATCH = "The documentation has no section that matches this question."
SMALL_TALK_REPLY = (
    "Hello! No chat model is configured, so I answer a question by quoting the passages of "
    "the documentation that best match it. Ask me about something the documentation covers: "
    "how to do a task, or what a name or setting means."
)
# The words of greetings, thanks and acknowledgements: a message made only of these asks the
# documentation nothing, and quoting sections at it would answer a question nobody asked.
_SMALL_TALK_WORDS = frozenset(
    "hi hello hey hiya howdy yo greetings good morning afternoon evening day night there all "
    "everyone folks thanks thank thx ty cheers you so much very lot lots many a ok okay k cool "
    "great nice awesome perfect excellent bye goodbye later see ciao welcome np no problem "
    "alright right sure yes yeah yep fine got it that's that is how are doing again".split()
)

_WORD = re.compile(r"\w+")
_FENCE = re.compile(r"^(`{3,}|~{3,})")
# An opening fence and its info string: ``python title="app.py" hl_lines="2"`` or
# ``{ .yaml title="c.yml" }`` (attributes the site's build reads; only the language means
# anything in a quote).
_FENCE_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*(.*)$")
_FENCE_LANGUAGE = re.compile(r"^\{?[ \t]*\.?([\w+#.-]+)")
# reST docstring fields left raw by a docstring parser: ``:param url: …``, ``:rtype: T``.
_FIELD = re.compile(
    r"^:(param|parameter|arg|argument|key|keyword|ivar|var|cvar|type|returns?|rtype|"
    r"raises?|except|exception)(?:[ \t]+([^:]+?))?[ \t]*:[ \t]*(.*)$"
)
# mkdocstrings' pointer to an object's source file, a link on the site and noise in a quote.
_SOURCE_CODE = re.compile(r"^Source code in `[^`]+`[ \t]*$")
_HEADING = re.compile(r"^#{1,6}[ \t]")
# Site-only markup (MkDocs Material, Python-Markdown extensions) that means nothing outside
# the site: attribute lists ``{ .lg .middle }``, icon shortcodes ``:material-api:`` and raw
# layout HTML ``<div class="grid cards" markdown>``; the text they decorate stays.
_ATTR_LIST = re.compile(
    r"[ \t]*\{:?[ \t]*(?:[.#][\w-]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|\S+))"
    r"(?:[ \t]+(?:[.#][\w-]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|\S+)))*[ \t]*\}"
)
_ICON = re.compile(r":(?:material|fontawesome|octicons|simple|fa|si)-[\w-]+:[ \t]?")
_LAYOUT_TAG = re.compile(
    r"</?(?:div|span|section|article|aside|nav|figure|figcaption|center|p|br|hr|picture|"
    r"source)\b[^>]*>",
    re.IGNORECASE,
)
# MkDocs Material's code annotation markers at the end of a code line: ``  # (1)!``.
_CODE_ANNOTATION = re.compile(r"[ \t]*(?:#|//|--|;)[ \t]*\(\d+\)!?[ \t]*$")
# ``!!! note "Title"`` / ``??? tip`` (admonitions) and ``=== "Tab"`` (content tabs): their
# body is indented four spaces, which plain Markdown would show as a code block.
_CONTAINER = re.compile(r"^(!!!|\?\?\?\+?|===)[ \t]*([\w-]*)[^\"\n]*(?:\"([^\"]*)\")?[ \t]*$")
_STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it me my of on or the this "
    "to what when where which who why will with you your".split()
)


def _terms(text: str) -> set[str]:
    """Lower-cased words with a light suffix strip, so "settings" meets "setting"."""
    terms = set()
    for word in _WORD.findall(text.lower()):
        if word in _STOPWORDS:
            continue
        for suffix in ("ing", "es", "s", "ed"):
            if len(word) > len(suffix) + 3 and word.endswith(suffix):
                word = word[: -len(suffix)]
                break
        terms.add(word)
    return terms


def is_small_talk(message: str) -> bool:
    """Whether ``message`` is only a greeting, thanks or an acknowledgement ("hi", "thanks a
    lot!", "ok, cool"): every word one of those, so there is nothing to look up."""
    words = re.findall(r"[a-z']+", message.lower())
    return bool(words) and all(word in _SMALL_TALK_WORDS for word in words)


def _fence_opening(line: str) -> str:
    """An opening fence line with its info string cut to the language."""
    found = _FENCE_OPEN.match(line)
    if found is None:
        return line
    indent, fence, info = found.groups()
    language = _FENCE_LANGUAGE.match(info.strip())
    return f"{indent}{fence}{language.group(1) if language else ''}"


def _fields(lines: list[str]) -> list[str]:
    """reST docstring fields as a Markdown list: ``:param url: URL.`` with ``:type url:
    str`` becomes ``- `url` (`str`): URL.``; ``:rtype: T`` becomes ``- Return type: `T```."""
    in_code, fence = [], None  # the lines of code blocks are left as written
    for line in lines:
        marker = _FENCE.match(line.strip())
        in_code.append(fence is not None or marker is not None)
        if fence is None and marker:
            fence = marker.group(1)[0] * 3
        elif fence is not None and line.strip().startswith(fence):
            fence = None
    types: dict[str, str] = {}
    for line, code in zip(lines, in_code, strict=True):
        found = None if code else _FIELD.match(line)
        if found and found.group(1) == "type" and found.group(2):
            types[found.group(2).strip()] = found.group(3).strip()
    out = []
    for line, code in zip(lines, in_code, strict=True):
        found = None if code else _FIELD.match(line)
        if found is None:
            out.append(line)
            continue
        field, argument, text = found.group(1), (found.group(2) or "").strip(), found.group(3)
        if field == "type":
            continue
        name = argument.split()[-1].replace("\\", "") if argument else ""
        if field in ("return", "returns"):
            out.append(f"- Returns: {text}".rstrip())
        elif field == "rtype":
            out.append(f"- Return type: `{text.strip()}`")
        elif field in ("raise", "raises", "except", "exception"):
            out.append(f"- Raises `{name}`: {text}".rstrip() if name else f"- Raises: {text}")
        elif name:
            typed = types.get(argument) or (" ".join(argument.split()[:-1]) or None)
            out.append(f"- `{name}`{f' (`{typed}`)' if typed else ''}: {text}".rstrip())
        else:
            out.append(line)
    return out


def _blocks(body: str) -> list[str]:
    """Paragraphs, lists and whole fenced code blocks of a chunk body, in order."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        marker = _FENCE.match(line.strip())
        if fence is None and marker:
            fence = marker.group(1)[0] * 3
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        if fence is None and not marker and not line.strip():
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def clean_markup(markdown: str) -> str:
    """``markdown`` without site-only markup: outside code blocks, attribute lists, icon
    shortcodes and layout HTML go, and admonitions and content tabs become a bold title over
    their dedented body; inside them, only code annotation markers (``# (1)!``) go."""
    lines: list[str] = []
    fence: str | None = None
    container = False  # inside an admonition or tab body: dedent by four spaces
    for line in markdown.split("\n"):
        body = line[4:] if container and line.startswith("    ") else line
        if container and line.strip() and not line.startswith("    "):
            container = False
        marker = _FENCE.match(body.strip())
        if fence is not None:
            if body.strip().startswith(fence):
                fence = None
            lines.append(_CODE_ANNOTATION.sub("", body))
            continue
        if marker:
            fence = marker.group(1)[0] * 3
            lines.append(_fence_opening(body))
            continue
        if _SOURCE_CODE.match(body.strip()):
            continue
        found = _CONTAINER.match(body.strip())
        if found:
            kind, title = found.group(2), found.group(3)
            label = title if title is not None else kind.capitalize()
            if found.group(1) != "===" and kind and title:
                label = f"{kind.capitalize()}: {title}"
            lines += [f"**{label}**", ""] if label else [""]
            container = True
            continue
        cleaned = _LAYOUT_TAG.sub("", _ICON.sub("", _ATTR_LIST.sub("", body)))
        if cleaned.strip() or not body.strip():
            lines.append(cleaned.rstrip())
    text = "\n".join(_fields(lines))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def best_passage(question: str, chunk_text: str, max_chars: int = 700) -> str:
    """The run of consecutive blocks of a chunk that shares most terms with the question."""
    head, _, body = chunk_text.partition("\n\n")
    blocks = _blocks(clean_markup(body or chunk_text))
    titles = {_plain(part) for part in re.split(r" › | > ", head)} | {_plain(head)}
    # A heading alone, or a block that only repeats the title, says nothing to quote.
    candidates = [
        i for i, block in enumerate(blocks)
        if not all(_HEADING.match(line) for line in block.splitlines())
        and _plain(block) not in titles
    ]  # fmt: skip
    if not candidates:
        return ""
    wanted = _terms(question)
    start = max(candidates, key=lambda i: (len(wanted & _terms(blocks[i])), -i))
    passage = [blocks[start]]
    size = len(blocks[start])
    # Grow forward while it fits: a lead-in sentence is often followed by the code it describes.
    for block in blocks[start + 1 :]:
        if size + len(block) + 2 > max_chars:
            break
        passage.append(block)
        size += len(block) + 2
    text = "\n\n".join(passage)
    if len(text) > max_chars and not _FENCE.match(text.lstrip()):
        text = text[:max_chars].rsplit(" ", 1)[0] + " …"
    return text


def _plain(text: str) -> str:
    """``text`` without Markdown heading marks, emphasis and case, to compare with a title."""
    return re.sub(r"^#+[ \t]*|[*_`]", "", text.strip()).strip().lower()


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.split("\n"))


def extractive_answer(question: str, hits: Sequence[Hit], passages: int = 3) -> Answer:
    """Quote the best passage of each of the top sections (one per section), each linked."""
    chosen: list[tuple[Hit, str]] = []
    seen: set[str] = set()
    for hit in hits:
        if hit.url in seen:
            continue
        seen.add(hit.url)
        passage = best_passage(question, hit.passage)
        if not passage:  # a bare title: nothing to quote
            continue
        chosen.append((hit, passage))
        if len(chosen) == passages:
            break
    if not chosen:
        return Answer(text=NO_MATCH, citations=(), hits=tuple(hits), kind="extractive")
    parts = [EXTRACTIVE_LABEL]
    for hit, passage in chosen:
        heading = clean_markup(" › ".join(hit.chunk.heading_path) or hit.chunk.title)
        parts.append(f"**[{heading}]({hit.url})**\n\n{_quote(passage)}")
    text = "\n\n".join(parts)
    titles = {hit.url: " › ".join(hit.chunk.heading_path) or hit.chunk.title for hit in hits}
    return Answer(
        text=text,
        citations=tuple(find_citations(text, titles)),
        hits=tuple(hits),
        kind="extractive",
        queries=(question,),
    )
