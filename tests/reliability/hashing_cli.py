"""``python -m tests.reliability.hashing_cli ARGS``: the citewise CLI with a fast embedder.

Registers ``hashing`` (words hashed into 64 dimensions, L2-normalised: deterministic, no
model to load) and makes it the default, so the subprocess tests of the store phase (kills,
readers during rebuilds) spend their time writing, not embedding. ``CITEWISE_TEST_FSIZE``
caps the size of any file written (RLIMIT_FSIZE, a full disk without a small filesystem).
"""

from __future__ import annotations

import os
import re
import sys
import zlib
from collections.abc import Sequence

import numpy as np

from citewise.embedding.base import Vectors, l2_normalise, register_embedder

DIM = 64
WORD = re.compile(r"\w+")


class HashingEmbedder:
    """A bag of hashed words: texts sharing words are near, the same text is the same vector."""

    model_id = "test-hashing-64"
    dim = DIM
    window_chars = 2000

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                matrix[row, zlib.crc32(word.encode()) % DIM] += 1.0
            matrix[row, 0] += 0.01  # never an all-zero row
        return l2_normalise(matrix)

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]


def main(argv: Sequence[str]) -> int:
    limit = os.environ.get("CITEWISE_TEST_FSIZE")
    if limit:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
    register_embedder("hashing", HashingEmbedder)
    os.environ.setdefault("CITEWISE_EMBEDDER", "hashing")
    from citewise.cli import main as cli

    return cli(list(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
