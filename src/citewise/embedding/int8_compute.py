"""MiniLM's weight-only int8 ONNX graph rewritten to compute its matrix products in int8."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from citewise.errors import EmbeddingError

# The packaged model stores each weight as int8 with a float scale per output column and
# turns it back into float32 inside the graph (Cast, then Mul): onnxruntime folds that into
# float32 weights when it loads, so every product runs in float32. Here each
#     MatMul(x, Mul(Cast(W_int8), scale)) [+ Add(bias)]
# becomes onnxruntime's DynamicQuantizeMatMul(x, W_int8, scale[, bias]): the same int8
# weights, x quantized to uint8 per call (one scale for the whole input), the product in
# int8 (VNNI where the CPU has it).
#
# The first token apart: in BERT-like models the first token ([CLS], always there) carries
# outlier activations in one or two channels: 20-30 at MiniLM's LayerNorm outputs before the
# feed-forward and at its first four GELU outputs, where the other tokens stay under 6-13
# (most channels under 2), on SciFact and docs windows alike. One uint8 scale stretched over
# that leaves every other token a 2-4x coarser grid. So each product quantizes the first
# token's row and the other rows separately (two DynamicQuantizeMatMul on the same weights,
# joined again): data-free, no calibration, per call. All 36 products in int8 that way kept
# mean cosine 0.9991 to the float32 products on SciFact windows, against 0.9957 quantizing
# all rows together and 0.9981 keeping the feed-forward's down projections float32 (the
# previous compromise, ``first_token_apart=False, narrowing=False``)
# (benchmarks/embed-throughput.md).
MICROSOFT = "com.microsoft"
# Slice bounds on the token axis (1): [0, 1) is the first token, [1, end) the rest.
_FIRST, _SECOND, _END = "int8_compute__0", "int8_compute__1", "int8_compute__end"


def int8_compute_graph(
    path: Path, *, narrowing: bool = True, first_token_apart: bool = True, simplified: bool = True
) -> bytes:
    """The model at ``path`` with its weight-only int8 MatMuls computing in int8, serialized
    (the options: see :func:`rewrite_int8_matmuls`); ``simplified``: also the exact
    simplifications of embedding/onnx_simplify.py.

    Raises ``EmbeddingError`` when the graph has no such MatMul (another export: nothing to
    rewrite, and running it unchanged would silently not be what was asked for).
    """
    try:
        import onnx
    except ImportError as exc:  # a dependency; only a broken install lacks it
        raise EmbeddingError(f"int8 compute needs the onnx package: {exc}") from exc
    try:
        model = onnx.load(str(path))
    except Exception as exc:  # onnx raises its own (protobuf) errors
        raise EmbeddingError(f"cannot read the model at {path}: {exc}") from exc
    rewritten = rewrite_int8_matmuls(
        model, narrowing=narrowing, first_token_apart=first_token_apart
    )
    if rewritten == 0:
        raise EmbeddingError(f"the model at {path} has no weight-only int8 MatMul to run in int8")
    if simplified:
        from citewise.embedding.onnx_simplify import simplify

        simplify(model)
    return bytes(model.SerializeToString())


def rewrite_int8_matmuls(
    model: Any, *, narrowing: bool = True, first_token_apart: bool = True
) -> int:
    """Rewrite ``model`` (an ``onnx.ModelProto``) in place; returns how many MatMuls changed.

    ``narrowing``: also the products with more inputs than outputs (False keeps them
    float32). ``first_token_apart``: quantize the first token's row of each product's input
    on its own (inputs ``[batch, tokens, features]``, at least 2 tokens: [CLS] ... [SEP]).
    """
    from onnx import helper, numpy_helper

    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    initializers = {init.name: init for init in graph.initializer}

    replaced: dict[int, list[Any]] = {}
    dropped: set[int] = set()
    added: list[Any] = []
    for node in graph.node:
        if node.op_type != "MatMul" or len(node.input) != 2:
            continue
        found = _dequantized_weight(node.input[1], producer, consumers, initializers)
        if found is None:
            continue
        mul, cast, weight, scale = found
        if weight.shape[0] > weight.shape[1] and not narrowing:
            continue
        # A per-tensor scale stays a scalar; per column it becomes the 1-D vector the op wants.
        flat = scale.reshape(-1) if scale.size > 1 else scale.reshape(())
        scale_name = f"{mul.input[1]}__int8_compute"
        added.append(numpy_helper.from_array(flat.astype(np.float32), scale_name))
        weights = [cast.input[0], scale_name, ""]
        output = node.output[0]
        add = _bias_add(output, consumers, initializers, weight.shape[1])
        if add is not None:
            weights.append(add.input[1] if add.input[0] == output else add.input[0])
            output = add.output[0]
            dropped.add(id(add))
        dropped.update((id(mul), id(cast)))
        name = f"{node.name}_int8"
        if first_token_apart:
            replaced[id(node)] = _first_token_apart(node.input[0], weights, output, name)
        else:
            replaced[id(node)] = [
                helper.make_node(
                    "DynamicQuantizeMatMul",
                    [node.input[0], *weights],
                    [output],
                    name=name,
                    domain=MICROSOFT,
                )
            ]
    if not replaced:
        return 0
    if first_token_apart:
        bounds = {_FIRST: 0, _SECOND: 1, _END: np.iinfo(np.int64).max}
        for bound, value in bounds.items():
            added.append(numpy_helper.from_array(np.array([value], dtype=np.int64), bound))
    nodes = []
    for node in graph.node:
        if id(node) not in dropped:
            nodes.extend(replaced.get(id(node), [node]))
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(added)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(opset.domain == MICROSOFT for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MICROSOFT, 1))
    return len(replaced)


def _first_token_apart(x: str, weights: list[str], output: str, name: str) -> list[Any]:
    """``x``'s first token row and the other rows through the int8 product separately (each
    quantized on its own range), joined back along the token axis into ``output``."""
    from onnx import helper

    first, rest = f"{name}__first", f"{name}__rest"
    return [
        helper.make_node("Slice", [x, _FIRST, _SECOND, _SECOND], [first], name=f"{first}_x"),
        helper.make_node("Slice", [x, _SECOND, _END, _SECOND], [rest], name=f"{rest}_x"),
        helper.make_node(
            "DynamicQuantizeMatMul",
            [first, *weights],
            [f"{first}_y"],
            name=first,
            domain=MICROSOFT,
        ),
        helper.make_node(
            "DynamicQuantizeMatMul",
            [rest, *weights],
            [f"{rest}_y"],
            name=rest,
            domain=MICROSOFT,
        ),
        helper.make_node("Concat", [f"{first}_y", f"{rest}_y"], [output], name=name, axis=1),
    ]


def _dequantized_weight(
    name: str, producer: dict[str, Any], consumers: dict[str, list[Any]], inits: dict[str, Any]
) -> tuple[Any, Any, np.ndarray, np.ndarray] | None:
    """``(mul, cast, weight, scale)`` when ``name`` is ``Mul(Cast(int8 [K, N]), scale)`` with
    a per-tensor or per-column scale, used by this MatMul alone; else None."""
    from onnx import numpy_helper

    mul = producer.get(name)
    if mul is None or mul.op_type != "Mul" or len(consumers.get(name, [])) != 1:
        return None
    cast = producer.get(mul.input[0])
    if cast is None or cast.op_type != "Cast" or mul.input[1] not in inits:
        return None
    if cast.input[0] not in inits or len(consumers.get(cast.output[0], [])) != 1:
        return None
    weight = numpy_helper.to_array(inits[cast.input[0]])
    scale = numpy_helper.to_array(inits[mul.input[1]])
    if weight.dtype != np.int8 or weight.ndim != 2:
        return None
    columns = weight.shape[1]
    per_column = scale.ndim <= 2 and scale.size == columns and scale.shape[-1] == columns
    if scale.size != 1 and not per_column:
        return None  # a per-row scale cannot move past the product
    return mul, cast, weight, scale


def _bias_add(
    output: str, consumers: dict[str, list[Any]], inits: dict[str, Any], columns: int
) -> Any | None:
    """The ``Add`` of a constant bias of ``columns`` values that alone reads ``output``."""
    users = consumers.get(output, [])
    if len(users) != 1 or users[0].op_type != "Add":
        return None
    add = users[0]
    other = add.input[1] if add.input[0] == output else add.input[0]
    bias = inits.get(other)
    if bias is None or list(bias.dims) != [columns]:
        return None
    return add
