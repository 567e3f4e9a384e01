"""Exact simplifications of the MiniLM ONNX export that onnxruntime does not make by itself."""

from __future__ import annotations

import math
from typing import Any

from onnx import helper, numpy_helper

# Both leave the numbers as they were and drop elementwise passes from every layer; with the
# products in int8 those passes were a third of a window's time (onnxruntime's profile,
# benchmarks/embed-throughput.md).
#
# - GELU is exported as x * 0.5 * (1 + erf(x / sqrt 2)): five ops, five passes over the
#   feed-forward's widest tensor. onnxruntime fuses that pattern when a MatMul + Add feed
#   it, not after DynamicQuantizeMatMul; its own Gelu op (com.microsoft) computes the same.
# - Attention's softmax is followed by Where(IsNaN(p), 0, p), a full pass over every head's
#   scores twice. The export's mask adds float32's lowest finite value (not -inf), so a
#   softmax of finite scores is never NaN: the guard never fires.
MICROSOFT = "com.microsoft"


def simplify(model: Any) -> dict[str, int]:
    """Apply both to ``model`` (an ``onnx.ModelProto``) in place; how many of each."""
    done = {"gelu": fuse_gelu(model), "nan_guards": drop_softmax_nan_guards(model)}
    # Constants only the removed ops read would make onnxruntime warn on every load.
    used = {name for node in model.graph.node for name in node.input}
    kept = [init for init in model.graph.initializer if init.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    return done


def fuse_gelu(model: Any) -> int:
    """``x * 0.5 * (1 + erf(x / sqrt 2))`` (either Mul order) → ``Gelu(x)``; how many."""
    graph = model.graph
    consumers = _consumers(graph)
    constants = {init.name: init for init in graph.initializer}

    def scalar(name: str, value: float) -> bool:
        init = constants.get(name)
        if init is None:
            return False
        array = numpy_helper.to_array(init)
        return bool(array.size == 1 and math.isclose(float(array), value, rel_tol=1e-6))

    def sole(output: str, op_type: str) -> Any | None:
        users = consumers.get(output, [])
        return users[0] if len(users) == 1 and users[0].op_type == op_type else None

    def other(node: Any, name: str) -> str:
        return str(node.input[1] if node.input[0] == name else node.input[0])

    replaced: dict[int, Any] = {}
    dropped: set[int] = set()
    for div in graph.node:
        if div.op_type != "Div" or not scalar(div.input[1], math.sqrt(2)):
            continue
        x = div.input[0]
        erf = sole(div.output[0], "Erf")
        plus = None if erf is None else sole(erf.output[0], "Add")
        if erf is None or plus is None or not scalar(other(plus, erf.output[0]), 1.0):
            continue
        first = sole(plus.output[0], "Mul")
        second = None if first is None else sole(first.output[0], "Mul")
        if first is None or second is None:
            continue
        factors = {other(first, plus.output[0]), other(second, first.output[0])}
        if x not in factors or not any(scalar(f, 0.5) for f in factors - {x}):
            continue
        replaced[id(div)] = helper.make_node(
            "Gelu", [x], [second.output[0]], name=f"{div.name}_gelu", domain=MICROSOFT
        )
        dropped.update(id(node) for node in (erf, plus, first, second))
    if replaced:
        nodes = [replaced.get(id(n), n) for n in graph.node if id(n) not in dropped]
        del graph.node[:]
        graph.node.extend(nodes)
        _declare(model, MICROSOFT)
    return len(replaced)


def drop_softmax_nan_guards(model: Any) -> int:
    """``Where(IsNaN(p), c, p)`` with ``p`` a Softmax output → ``p``; how many."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    consumers = _consumers(graph)
    outputs = {out.name for out in graph.output}
    renamed: dict[str, str] = {}
    dropped: set[int] = set()
    for where in graph.node:
        if where.op_type != "Where" or where.output[0] in outputs:
            continue
        isnan = producer.get(where.input[0])
        if isnan is None or isnan.op_type != "IsNaN" or isnan.input[0] != where.input[2]:
            continue
        softmax = producer.get(where.input[2])
        if softmax is None or softmax.op_type != "Softmax":
            continue
        if len(consumers.get(isnan.output[0], [])) != 1:
            continue
        renamed[where.output[0]] = where.input[2]
        dropped.update((id(where), id(isnan)))
    if renamed:
        nodes = [n for n in graph.node if id(n) not in dropped]
        for node in nodes:
            for i, name in enumerate(node.input):
                node.input[i] = renamed.get(name, name)
        del graph.node[:]
        graph.node.extend(nodes)
    return len(renamed)


def _consumers(graph: Any) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            found.setdefault(name, []).append(node)
    return found


def _declare(model: Any, domain: str) -> None:
    if not any(opset.domain == domain for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid(domain, 1))
