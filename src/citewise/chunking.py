"""Cut sections into chunks of at most ``max_chars``, each prefixed with its heading path.

With an :class:`Overlap`, each chunk after a section's first starts with the end of the one
before it (whole words, in characters or tokens), so a sentence cut at a chunk boundary is
whole in one of them; :func:`without_overlap` takes it off again when chunks are joined.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from citewise.models import Chunk, Section

__all__ = [
    "DEFAULT_MAX_CHARS",
    "NO_OVERLAP",
    "OVERLAP_UNITS",
    "Overlap",
    "chunk_id",
    "chunk_sections",
    "without_overlap",
]

DEFAULT_MAX_CHARS = 2000
OVERLAP_UNITS = ("chars", "tokens")
# A token here is a word, a punctuation mark or one CJK character: what a subword tokenizer
# keeps whole or splits further, so N of them is a model-independent stand-in for N tokens.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
# Compiled on first use (re caches them), not on import: every search imports this module
# (strategies, kb) and only an ingest with overlap needs them; each costs 3 ms to compile.
_CJK_CLASS = f"[{_CJK}]"
_TOKEN = rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]"
_FENCE_RE = re.compile(r"^\s*(?:```|~~~).*$", re.MULTILINE)
# An overlap shorter than this is never taken off when chunks are joined (a fence's three
# backticks ending one piece and starting the next is not an overlap).
_MIN_JOIN_OVERLAP = 16
_MIN_MAX_CHARS = 16
_PATH_SEPARATOR = " > "
_TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Overlap:
    """How much of a chunk's end the next chunk of the same section repeats: ``size``
    characters or tokens (``unit``), 0 for none. At most half a chunk is repeated."""

    size: int = 0
    unit: str = "chars"

    def __post_init__(self) -> None:
        if self.unit not in OVERLAP_UNITS:
            raise ValueError(f"overlap unit must be one of {', '.join(OVERLAP_UNITS)}")
        if self.size < 0:
            raise ValueError(f"overlap must be ≥ 0, not {self.size}")

    def tail(self, text: str, room: int) -> str:
        """The end of ``text`` to repeat, starting at a word, at most ``room`` characters;
        never a fence (a repeated end of a code block would open one)."""
        if self.size <= 0 or room <= 0:
            return ""
        if self.unit == "tokens":
            starts = [m.start() for m in re.finditer(_TOKEN, text)]
            start = starts[-self.size] if len(starts) >= self.size else 0
        else:
            start = len(text) - self.size
        start = max(start, len(text) - room, 0)
        if start > 0 and not text[start - 1].isspace() and not re.match(_CJK_CLASS, text[start]):
            # Mid-word: begin at the next word (CJK text has no spaces: any character will do).
            space = re.search(r"\s", text[start:])
            start = start + space.end() if space is not None else len(text)
        tail = text[start:]
        fences = [m.end() for m in _FENCE_RE.finditer(tail)]
        return (tail[fences[-1] :] if fences else tail).strip()

    def reserve(self, budget: int) -> int:
        """Characters to keep free in each piece for the repeated end (≤ half the budget)."""
        if self.size <= 0:
            return 0
        # A token averages under six characters in English docs; ``tail`` trims to fit.
        wanted = self.size if self.unit == "chars" else self.size * 6
        return min(wanted, budget // 2)


NO_OVERLAP = Overlap()


def without_overlap(previous: str, text: str) -> str:
    """``text`` without the start it repeats from the end of ``previous`` (its overlap)."""
    for size in range(min(len(previous), len(text)), _MIN_JOIN_OVERLAP - 1, -1):
        if previous.endswith(text[:size]) and (size == len(text) or text[size].isspace()):
            return text[size:].lstrip()
    return text


@dataclass(frozen=True)
class _Block:
    kind: str  # "code", "table" or "text"
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def chunk_id(doc_id: str, position: int, text: str) -> str:
    """A stable id: the same document, position and text always give the same 20 hex digits."""
    digest = hashlib.sha256(f"{doc_id}\x00{position}\x00{text}".encode())
    return digest.hexdigest()[:20]


def chunk_sections(
    sections: Sequence[Section],
    max_chars: int = DEFAULT_MAX_CHARS,
    overlap: Overlap = NO_OVERLAP,
) -> list[Chunk]:
    """Cut ``sections`` into chunks of at most ``max_chars`` characters, heading prefix included.

    A section that fits is one chunk. A longer one is split between blocks (paragraphs, lists,
    fenced code, tables). A code block too long on its own is split between lines with its fence
    closed and re-opened (same info string) in each piece; a table too long on its own is split
    between rows with its header and separator rows repeated. Only a single line longer than the
    room left is cut inside the line. A section with no body still gives one chunk (its heading
    path), so every section can be found. ``position`` and ``section_index`` count per document.
    With ``overlap``, each chunk of a split section after the first starts with the end of
    the chunk before it (still within ``max_chars``).
    """
    if max_chars < _MIN_MAX_CHARS:
        raise ValueError(f"max_chars must be at least {_MIN_MAX_CHARS}, got {max_chars}")
    chunks: list[Chunk] = []
    positions: dict[str, int] = {}
    section_indexes: dict[str, int] = {}
    for section in sections:
        section_index = section_indexes.get(section.doc_id, 0)
        section_indexes[section.doc_id] = section_index + 1
        for text in _section_texts(section, max_chars, overlap):
            position = positions.get(section.doc_id, 0)
            positions[section.doc_id] = position + 1
            chunks.append(
                Chunk(
                    chunk_id=chunk_id(section.doc_id, position, text),
                    doc_id=section.doc_id,
                    position=position,
                    section_index=section_index,
                    text=text,
                    title=section.title,
                    heading_path=section.heading_path,
                    anchor=section.anchor,
                    url=section.url,
                    page=section.page,
                    scope=section.scope,
                    page_number=section.page_number,
                )
            )
    return chunks


def _section_texts(section: Section, max_chars: int, overlap: Overlap) -> list[str]:
    path = _PATH_SEPARATOR.join(section.heading_path) or section.title
    # A pathological heading path must not crowd the body out: keep it to half the budget.
    limit = max_chars // 2
    if len(path) > limit:
        path = path[: limit - 1] + "…"
    body = section.text.strip("\n")
    if not body.strip():
        return [path]
    prefix = f"{path}\n\n" if path else ""
    budget = max_chars - len(prefix)
    if len(body) <= budget:
        return [prefix + body]
    reserve = overlap.reserve(budget)
    pieces: list[str] = []
    for block in _blocks(body):
        pieces.extend(_split_block(block, budget - reserve))
    packed = _pack(pieces, budget - reserve, "\n\n")
    texts = packed[:1]
    for before, piece in zip(packed, packed[1:], strict=False):
        tail = overlap.tail(before, budget - len(piece) - 2)
        texts.append(f"{tail}\n\n{piece}" if tail else piece)
    return [prefix + text for text in texts]


def _blocks(body: str) -> list[_Block]:
    """Blank-line separated blocks, with fenced code and tables as blocks of their own."""
    lines = body.split("\n")
    blocks: list[_Block] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            blocks.append(_Block("text", tuple(pending)))
            pending.clear()

    # Imported here: a search imports this module, only chunking needs the Markdown parser.
    from citewise.parsing.markdown import fenced_blocks

    fences = dict(fenced_blocks(lines))
    i = 0
    while i < len(lines):
        line = lines[i]
        if i in fences:
            flush()
            blocks.append(_Block("code", tuple(lines[i : fences[i]])))
            i = fences[i]
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if "|" in line and "-" in following and _TABLE_SEPARATOR_RE.match(following):
            flush()
            end = i + 2
            while end < len(lines) and lines[end].strip() and "|" in lines[end]:
                end += 1
            blocks.append(_Block("table", tuple(lines[i:end])))
            i = end
            continue
        if line.strip():
            pending.append(line)
        else:
            flush()
        i += 1
    flush()
    return blocks


def _split_block(block: _Block, budget: int) -> list[str]:
    """``block`` as pieces of at most ``budget`` characters, each valid Markdown on its own."""
    if len(block.text) <= budget:
        return [block.text]
    if block.kind == "code":
        # Close and re-open the same fence (info string and all) so each piece renders as code.
        opener, closer = block.lines[0], block.lines[-1]
        room = budget - len(opener) - len(closer) - 2
        if room >= 1:
            pieces = _pack_lines(block.lines[1:-1], room)
            return [f"{opener}\n{body}\n{closer}" for body in pieces]
    if block.kind == "table" and len(block.lines) >= 3:
        header = "\n".join(block.lines[:2])
        room = budget - len(header) - 1
        if room >= 1 and all(len(row) <= room for row in block.lines[2:]):
            return [f"{header}\n{rows}" for rows in _pack(list(block.lines[2:]), room, "\n")]
    return _pack_lines(block.lines, budget)


def _pack_lines(lines: Sequence[str], budget: int) -> list[str]:
    """Pack lines into pieces of at most ``budget``, cutting only lines longer than that."""
    parts: list[str] = []
    for line in lines:
        parts.extend(_cut(line, budget) if len(line) > budget else [line])
    return _pack(parts, budget, "\n")


def _cut(line: str, width: int) -> list[str]:
    """Cut an over-long line, at a space in the second half of each piece where there is one."""
    pieces: list[str] = []
    while len(line) > width:
        space = line.rfind(" ", width // 2, width + 1)
        end = space if space > 0 else width
        pieces.append(line[:end])
        line = line[end + 1 :] if space > 0 else line[end:]
    if line:
        pieces.append(line)
    return pieces


def _pack(parts: Sequence[str], budget: int, separator: str) -> list[str]:
    """Greedily join consecutive parts (each at most ``budget``) while the result fits."""
    packed: list[str] = []
    current: str | None = None  # not "": blank lines inside code are parts worth keeping
    for part in parts:
        if current is None:
            current = part
        elif len(current) + len(separator) + len(part) <= budget:
            current = f"{current}{separator}{part}"
        else:
            packed.append(current)
            current = part
    if current is not None:
        packed.append(current)
    return packed
