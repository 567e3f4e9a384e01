"""MiniLM's weight-only int8 ONNX graph rewritten to compute its matrix products in int8."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from citewise.errors import EmbeddingError

# The packaged model stores each weight as int8 with a float scale per output column and
# turns it back into float32 inside the graph (Cast, then Mul): onnxruntime folds that into
# float32 weights when the session loads, so every product runs in float32. Here each
#     MatMul(x, Mul(Cast(W_int8), scale)) [+ Add(bias)]
# becomes onnxruntime's DynamicQuantizeMatMul(x, W_int8, scale[, bias]): the same int8
# weights, x quantized to uint8 per call, the product in int8 (VNNI where the CPU has it).
# Products that narrow (more inputs than outputs: the feed-forward's down projection, a third
# of the work) stay float32: their input, GELU's output, has the widest range for one uint8
# scale. All in int8, SciFact windows kept cosine 0.9957 to the float32 products but hybrid
# nDCG@10 fell to 0.7323 (main 0.7329); without those, cosine 0.9982
# (benchmarks/embed-throughput.md).
MICROSOFT = "com.microsoft"


def int8_compute_graph(path: Path, *, narrowing: bool = False) -> bytes:
    """The model at ``path`` with its weight-only int8 MatMuls computing in int8, serialized
    (``narrowing``: see :func:`rewrite_int8_matmuls`).

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
    rewritten = rewrite_int8_matmuls(model, narrowing=narrowing)
    if rewritten == 0:
        raise EmbeddingError(f"the model at {path} has no weight-only int8 MatMul to run in int8")
    return bytes(model.SerializeToString())


def rewrite_int8_matmuls(model: Any, *, narrowing: bool = False) -> int:
    """Rewrite ``model`` (an ``onnx.ModelProto``) in place; returns how many MatMuls changed.

    ``narrowing``: also the products with more inputs than outputs (kept float32 by default).
    """
    from onnx import helper, numpy_helper

    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    initializers = {init.name: init for init in graph.initializer}

    replaced: dict[int, Any] = {}
    dropped: set[int] = set()
    scales: list[Any] = []
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
        scales.append(numpy_helper.from_array(flat.astype(np.float32), scale_name))
        inputs = [node.input[0], cast.input[0], scale_name, ""]
        output = node.output[0]
        add = _bias_add(output, consumers, initializers, weight.shape[1])
        if add is not None:
            inputs.append(add.input[1] if add.input[0] == output else add.input[0])
            output = add.output[0]
            dropped.add(id(add))
        dropped.update((id(mul), id(cast)))
        replaced[id(node)] = helper.make_node(
            "DynamicQuantizeMatMul", inputs, [output], name=f"{node.name}_int8", domain=MICROSOFT
        )
    if not replaced:
        return 0
    nodes = [replaced.get(id(n), n) for n in graph.node if id(n) not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(scales)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(opset.domain == MICROSOFT for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MICROSOFT, 1))
    return len(replaced)


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
