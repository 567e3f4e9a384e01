"""Two processes saving the ANN index at once never leave one's file tagged with the other's
generation (``store/ann.py`` describes the file before renaming it into place)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import pytest

from citewise.store import ann

pytestmark = pytest.mark.skipif(not ann.ann_available(), reason="the ann extra (usearch)")

DIM = 8
REPO = Path(__file__).resolve().parents[2]
# The other process: saves an index of 200 windows as generation "b".
OTHER = """
import sys
from pathlib import Path
import numpy as np
from citewise.store import ann
index = ann._new_index(8)
index.add(np.arange(200, dtype=np.uint64), np.random.default_rng(2).standard_normal((200, 8)))
assert ann._save(Path(sys.argv[1]), index, "b")
"""
SIZES = {"a": 10, "b": 200}


def test_a_save_racing_another_process_never_mistags_the_file(tmp_path: Path) -> None:
    db = tmp_path / "kb.sqlite"
    mine = ann._new_index(DIM)
    mine.add(np.arange(10, dtype=np.uint64), np.random.default_rng(1).standard_normal((10, DIM)))
    raced: list[bool] = []

    def other_saves_right_after_my_rename(frame: FrameType, event: str, arg: Any) -> None:
        # The moment two savers collide: this process has renamed its file into place and
        # not yet written the tag when the other process renames its own over it.
        if event == "c_return" and arg is os.replace and not raced:
            raced.append(True)
            subprocess.run([sys.executable, "-c", OTHER, str(db)], cwd=REPO, check=True)

    sys.setprofile(other_saves_right_after_my_rename)
    try:
        assert ann._save(db, mine, "a")
    finally:
        sys.setprofile(None)
    assert raced

    tag = ann._read_tag(db)
    on_disk = ann._load(ann.index_path(db), DIM, view=False)
    assert on_disk is not None and len(on_disk) == SIZES["b"]
    # The tag is refused (it describes the other file), or it names the generation on disk.
    assert tag == {} or SIZES[tag["generation"]] == len(on_disk), tag
