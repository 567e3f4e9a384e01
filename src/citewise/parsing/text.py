"""Plain text and CSV files: one section each, a CSV's rows as one Markdown table."""

from __future__ import annotations

import csv
import io

from citewise.config import Limits
from citewise.errors import SourceError
from citewise.limits import check_table_shape
from citewise.models import Section
from citewise.parsing.common import markdown_table, single_section

__all__ = ["CsvParser", "TextParser", "parse_csv", "parse_text"]

# The sniffer only needs the first rows; reading a whole big file would be slow for nothing.
_SNIFF_CHARS = 64 * 1024
_DELIMITERS = ",;\t|"


class TextParser:
    """Plain text files (``.txt``): see :func:`parse_text`."""

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]:
        return parse_text(text, doc_id=doc_id, site_url=site_url, version=version, scope=scope)


class CsvParser:
    """Comma- (or otherwise) separated values (``.csv``, ``.tsv``): see :func:`parse_csv`."""

    takes_limits = True

    def parse(
        self,
        text: str,
        *,
        doc_id: str,
        site_url: str,
        version: str | None,
        scope: str = "",
        limits: Limits | None = None,
    ) -> list[Section]:
        return parse_csv(
            text, doc_id=doc_id, site_url=site_url, version=version, scope=scope, limits=limits
        )


def parse_text(
    text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
) -> list[Section]:
    """The whole file as one section titled after its name; the chunker splits it if long.

    Blank lines separate paragraphs, which is where the chunker prefers to cut.
    """
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    body = "\n".join(lines).strip("\n")
    return single_section(body, doc_id=doc_id, site_url=site_url, version=version, scope=scope)


def parse_csv(
    text: str,
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    limits: Limits | None = None,
) -> list[Section]:
    """The file as one section holding a Markdown table, its first row as the header.

    The dialect (delimiter, quoting) is sniffed from the start of the file; quoted fields
    may hold delimiters and line breaks. Each record is one table row, so when the chunker
    splits a long table it cuts between records and repeats the header in every chunk.

    Raises:
        SourceError: the file is not valid CSV in the sniffed dialect.
        TooLargeError: a row is wider than ``limits.max_table_columns`` or the table holds
            more than ``limits.max_table_cells`` cells (default: :class:`Limits`' defaults).
    """
    limits = limits or Limits()
    text = text.lstrip("\ufeff")
    dialect = _dialect(text[:_SNIFF_CHARS], tab=doc_id.lower().endswith(".tsv"))
    rows: list[list[str]] = []
    cells = 0
    try:
        for row in csv.reader(io.StringIO(text, newline=""), dialect):
            if any(row):
                # Checked as the rows come: a refused table is never held whole.
                cells += len(row)
                check_table_shape(limits, doc_id, len(row), cells)
                rows.append(row)
    except csv.Error as error:
        raise SourceError(f"{doc_id}: not valid CSV ({error})") from None
    table = markdown_table(rows)
    return single_section(table, doc_id=doc_id, site_url=site_url, version=version, scope=scope)


def _dialect(sample: str, *, tab: bool) -> type[csv.Dialect] | csv.Dialect:
    fallback: type[csv.Dialect] = csv.excel_tab if tab else csv.excel
    if not sample.strip():
        return fallback
    # A sample cut mid-record would confuse the sniffer: end it at the last line break.
    if len(sample) == _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rfind("\n")]
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        return fallback
