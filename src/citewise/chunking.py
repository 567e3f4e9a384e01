"""Cut sections into chunks of at most ``max_chars``, each prefixed with its heading path."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from citewise.models import Chunk, Section
from citewise.parsing.markdown import fenced_blocks

__all__ = ["DEFAULT_MAX_CHARS", "chunk_id", "chunk_sections"]

DEFAULT_MAX_CHARS = 2000
_MIN_MAX_CHARS = 16
_PATH_SEPARATOR = " > "
_TABLE_SEPARATOR_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


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


def chunk_sections(sections: Sequence[Section], max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Cut ``sections`` into chunks of at most ``max_chars`` characters, heading prefix included.

    A section that fits is one chunk. A longer one is split between blocks (paragraphs, lists,
    fenced code, tables). A code block too long on its own is split between lines with its fence
    closed and re-opened (same info string) in each piece; a table too long on its own is split
    between rows with its header and separator rows repeated. Only a single line longer than the
    room left is cut inside the line. A section with no body still gives one chunk (its heading
    path), so every section can be found. ``position`` and ``section_index`` count per document.
    """
    if max_chars < _MIN_MAX_CHARS:
        raise ValueError(f"max_chars must be at least {_MIN_MAX_CHARS}, got {max_chars}")
    chunks: list[Chunk] = []
    positions: dict[str, int] = {}
    section_indexes: dict[str, int] = {}
    for section in sections:
        section_index = section_indexes.get(section.doc_id, 0)
        section_indexes[section.doc_id] = section_index + 1
        for text in _section_texts(section, max_chars):
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


def _section_texts(section: Section, max_chars: int) -> list[str]:
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
    pieces: list[str] = []
    for block in _blocks(body):
        pieces.extend(_split_block(block, budget))
    return [prefix + text for text in _pack(pieces, budget, "\n\n")]


def _blocks(body: str) -> list[_Block]:
    """Blank-line separated blocks, with fenced code and tables as blocks of their own."""
    lines = body.split("\n")
    blocks: list[_Block] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            blocks.append(_Block("text", tuple(pending)))
            pending.clear()

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
