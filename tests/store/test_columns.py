"""A chunk's row values: the heading path's JSON is json.dumps's, bit for bit, and reads back."""

from __future__ import annotations

import json

import pytest

from citewise.models import Chunk
from citewise.store.columns import CHUNK_FIELDS, chunk_from_values, chunk_values


@pytest.mark.parametrize(
    "path",
    [
        (),
        ("Guide",),
        ("Guide", "Keys › Rotation"),
        ('quote " and \\ backslash', "tab\there", "new\nline", "nul\x00"),
        ("中文 标题", "emoji 😀", "lone \ud800 surrogate"),
    ],
)
def test_the_heading_path_is_stored_as_json_dumps_writes_it(path: tuple[str, ...]) -> None:
    chunk = Chunk("d#0", "d", 0, 0, "text", "Title", path, "a", "u", "p", "s", None)
    values = chunk_values(chunk)
    assert values[CHUNK_FIELDS.index("heading_path")] == json.dumps(list(path))
    assert chunk_from_values(values).heading_path == path
