"""Generators of the hostile files of issue 26: small on disk, each a lot of work to parse.

Each function returns the file's bytes; the tests write them to a temporary folder, so the
repository holds no fixture files. Sizes are those the probe reported.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
)
_DOC_HEAD = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    "<w:body>"
)
_DOC_TAIL = "</w:body></w:document>"
_PARAGRAPH = "<w:p><w:r><w:t>All work and no play makes a dull parser.</w:t></w:r></w:p>"


def _docx(document_xml: Callable[[zipfile.ZipFile], None]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        document_xml(archive)
    return buffer.getvalue()


def docx_inflating(size: int = 10 * 1024 * 1024) -> bytes:
    """A DOCX (about 29 KB) whose ``word/document.xml`` inflates to ``size`` bytes of
    paragraphs."""
    count = (size - len(_DOC_HEAD) - len(_DOC_TAIL)) // len(_PARAGRAPH)
    body = _DOC_HEAD + _PARAGRAPH * count + _DOC_TAIL

    def write(archive: zipfile.ZipFile) -> None:
        archive.writestr("word/document.xml", body)

    return _docx(write)


def docx_bomb(expanded: int) -> bytes:
    """A DOCX zip bomb: ``word/document.xml`` is ``expanded`` bytes of paragraphs, under the
    unpacked-size limit that only reads the sizes the archive declares (292 KB for 85 MB,
    728 KB for 210 MB).

    The deflate stream is one block of about 1 MiB of paragraphs compressed once and
    repeated: after a full flush each block stands alone, so the bomb is made in a second.
    """
    block = (_PARAGRAPH * (1024 * 1024 // len(_PARAGRAPH))).encode()
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed_block = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    head = (_DOC_HEAD + "<w:p><w:r><w:t>").encode()
    tail = ("</w:t></w:r></w:p>" + _DOC_TAIL).encode()
    count = expanded // len(block)
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(tail, crc)
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed_head = first.compress(head) + first.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed_tail = last.compress(tail) + last.flush(zlib.Z_FINISH)
    packed = packed_head + packed_block * count + packed_tail
    size = len(head) + len(block) * count + len(tail)
    small = _docx(lambda archive: None)
    return _with_raw_member(small, "word/document.xml", packed, crc, size)


def _with_raw_member(archive: bytes, name: str, packed: bytes, crc: int, size: int) -> bytes:
    """``archive`` with one more member whose deflated bytes are given (zipfile cannot
    write pre-compressed data, so the member is copied in by rebuilding the archive)."""
    source = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    entries: list[tuple[bytes, int, int, int, int]] = []
    for info in source.infolist():
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        raw = compressor.compress(source.read(info)) + compressor.flush()
        entries.append(_local(out, info.filename.encode(), info.CRC, info.file_size, raw))
    entries.append(_local(out, name.encode(), crc, size, packed))
    directory = out.tell()
    for filename, entry_crc, packed_size, full_size, offset in entries:
        out.write(
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                8,
                0,
                0x21,
                entry_crc,
                packed_size,
                full_size,
                len(filename),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + filename
        )
    end = out.tell()
    out.write(
        struct.pack(
            "<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), end - directory, directory, 0
        )
    )
    return out.getvalue()


def _local(
    out: io.BytesIO, filename: bytes, crc: int, size: int, raw: bytes
) -> tuple[bytes, int, int, int, int]:
    """Writes one deflated member's local header and data; its central directory entry."""
    packed_size = len(raw)
    offset = out.tell()
    out.write(
        struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, packed_size, size, len(filename), 0
        )
        + filename
        + raw
    )
    return (filename, crc, packed_size, size, offset)


def _pdf(pages: list[int], streams: list[bytes]) -> bytes:
    """A PDF of pages (each naming the index of its content stream in ``streams``, Flate
    compressed), written by hand so the tests need no PDF writer."""
    objects: list[bytes] = []
    # 1 catalog, 2 page tree, 3 font, then the streams, then the pages.
    first_stream = 4
    first_page = first_stream + len(streams)
    kids = " ".join(f"{first_page + n} 0 R" for n in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for stream in streams:
        packed = zlib.compress(stream, 9)
        objects.append(
            f"<< /Length {len(packed)} /Filter /FlateDecode >>\nstream\n".encode()
            + packed
            + b"\nendstream"
        )
    for stream_index in pages:
        objects.append(
            (
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                f"<< /Font << /F1 3 0 R >> >> /Contents {first_stream + stream_index} 0 R >>"
            ).encode()
        )
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out.getvalue()


def _text_ops(count: int) -> bytes:
    lines = [b"BT /F1 10 Tf 72 720 Td"]
    line = b"(All work and no play makes a dull parser.) Tj 0 -12 Td"
    lines.extend([line] * count)
    lines.append(b"ET")
    return b"\n".join(lines)


def pdf_shared_stream(pages: int = 25, size: int = 5 * 1024 * 1024) -> bytes:
    """A PDF (about 18 KB) whose ``pages`` pages all draw the same ``size``-byte content
    stream of text operators."""
    stream = _text_ops(size // 56)
    return _pdf([0] * pages, [stream])


def pdf_drawing(size: int = 4 * 1024 * 1024, pages: int = 1) -> bytes:
    """A PDF of ``pages`` pages sharing one content stream: ``size`` bytes of drawing
    operators (small rectangles, stroked) and one line of text."""
    ops = [b"BT /F1 10 Tf 72 720 Td (A page of lines.) Tj ET"]
    rectangle = b"10 10 5 5 re S"
    ops.extend([rectangle] * (size // (len(rectangle) + 1)))
    return _pdf([0] * pages, [b"\n".join(ops)])


def pdf_many_pages(pages: int = 1000) -> bytes:
    """A PDF (about 177 KB) of ``pages`` pages, each with a line of text and a ruled box
    (so each is a table candidate)."""
    streams = [
        b"BT /F1 10 Tf 72 720 Td (Page %d.) Tj ET 72 600 200 50 re S" % (n + 1)
        for n in range(pages)
    ]
    return _pdf(list(range(pages)), streams)


def wide_csv(columns: int = 50_000, rows: int = 4) -> bytes:
    """A CSV (about 889 KB) of a few rows of ``columns`` short cells each."""
    header = ",".join(f"c{n}" for n in range(columns))
    body = "\n".join(",".join(str((n * r) % 97) for n in range(columns)) for r in range(rows))
    return (header + "\n" + body + "\n").encode()


HOSTILE_FILES: dict[str, Callable[[], bytes]] = {
    "inflating.docx": docx_inflating,
    "bomb-292k.docx": lambda: docx_bomb(85 * 1024 * 1024),
    "bomb-728k.docx": lambda: docx_bomb(210 * 1024 * 1024),
    "shared-stream.pdf": pdf_shared_stream,
    "drawing-2m.pdf": lambda: pdf_drawing(2 * 1024 * 1024),
    "drawing-10m.pdf": lambda: pdf_drawing(10 * 1024 * 1024),
    "many-pages.pdf": pdf_many_pages,
    "wide.csv": wide_csv,
}
