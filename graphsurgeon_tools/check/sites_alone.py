"""Each plugin site run alone: the check that a site still matches its Resize where a quantized
model's whole-model comparison cannot say (a requantization flip upstream moved everything after it).

``sites_alone(original, rewritten, feeds, session, tolerance) -> [OutputComparison] | None``;
``plugin_or_cpu_session(blob, options)`` (from :mod:`graphsurgeon_tools.check.sessions`): the
session factory both swap-plugin's check and ``validate`` hand it (plugin nodes through
:func:`graphsurgeon_tools.runtime.make_session`, a plain CPU session otherwise); ``with_outputs``: a
copy of a model whose graph outputs are the given tensors.

Shared by swap-plugin's quantized check (:mod:`graphsurgeon_tools.passes.swap_plugin.requantized`)
and validate's (:mod:`graphsurgeon_tools.validation.quantized`).

Requires: both models loaded; ``original`` runs in ONNX Runtime. Ensures: None (not a failure)
wherever a site cannot be run alone. Does NOT change either model or write files.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import numpy as np
import onnx
from onnx import ModelProto

from graphsurgeon_tools.check.compare import compare_arrays
from graphsurgeon_tools.check.sessions import check_options, plugin_or_cpu_session, session_for
from graphsurgeon_tools.check.tolerance import UlpTolerance
from graphsurgeon_tools.core.dtypes import elem_type
from graphsurgeon_tools.errors import OnnxToolError
from graphsurgeon_tools.resize.qdq import UNFUSED_LEVEL
from graphsurgeon_tools.runtime.session import ort_errors

__all__ = ["plugin_or_cpu_session", "sites_alone", "with_outputs"]


def with_outputs(model: ModelProto, names: list[str]) -> ModelProto:
    """A copy of ``model`` whose graph outputs are ``names`` (the check compares graph outputs)."""
    copy = ModelProto()
    copy.CopyFrom(model)
    del copy.graph.output[:]
    copy.graph.output.extend(onnx.ValueInfoProto(name=name) for name in names)
    return copy


def sites_alone(
    original: ModelProto,
    rewritten: ModelProto,
    feeds: Mapping[str, np.ndarray],
    session: Callable[[bytes, Any], Any],
    tolerance: UlpTolerance,
    op_type: str = "DynamicTRTResize",
    *,
    key: object = None,
) -> Optional[list[Any]]:
    """Each plugin node of ``rewritten`` run alone on the tensor its Resize reads in the original
    (one run of the original at UNFUSED_LEVEL on ``feeds``, each model taking the inputs it has),
    compared with that Resize's output there; None when no plugin node has a counterpart.
    ``key``: the object the check ran the original as (its kept session is reused when it exposes
    the sites' inputs, :mod:`graphsurgeon_tools.check.reuse`); each cut site is a model of its own."""
    plugins = [n for n in rewritten.graph.node if n.op_type == op_type and n.input and n.output]
    originals = {o for n in original.graph.node for o in n.output}
    plugins = [n for n in plugins if n.input[0] in originals and n.output[0] in originals]
    if not plugins:
        return None
    wanted = sorted({n.input[0] for n in plugins} | {n.output[0] for n in plugins})
    options = check_options(UNFUSED_LEVEL)
    try:
        first, _ = session_for(original if key is None else key, original, UNFUSED_LEVEL, wanted, session)
        takes = {i.name for i in first.get_inputs()}
        values = dict(zip(wanted, first.run(wanted, {k: v for k, v in feeds.items() if k in takes})))
    except (*ort_errors(), OnnxToolError, ValueError):
        return None
    given = dict(feeds)
    compared = []
    for node in plugins:
        cut = _cut(rewritten, node.input[0], node.output[0], values[node.input[0]])
        try:
            run = session(cut.SerializeToString(), options)
            needed = {i.name for i in run.get_inputs()}
            feed = {k: v for k, v in {**given, node.input[0]: values[node.input[0]]}.items() if k in needed}
            (got,) = run.run([node.output[0]], feed)
        except (*ort_errors(), OnnxToolError, ValueError):  # a site that cannot run alone proves nothing
            return None
        want = values[node.output[0]]
        atol, rtol = tolerance.bounds(got, want)
        compared.append(compare_arrays(got, want, atol=atol, rtol=rtol, name=node.output[0], kind="site"))
    return compared


def _cut(model: ModelProto, x: str, out: str, x_value: np.ndarray) -> ModelProto:
    """The nodes computing ``out`` from ``x`` (a graph input of the cut, typed from ``x_value``), the
    graph inputs and initializers they read: one site and its in-graph second input (scales, size tensor)."""
    producer = {name: index for index, node in enumerate(model.graph.node) for name in node.output if name}
    initializers = {t.name: t for t in model.graph.initializer}
    graph_inputs = {i.name: i for i in model.graph.input}
    keep: set[int] = set()
    used: set[str] = set()
    stack, seen = [out], set()
    while stack:
        name = stack.pop()
        if not name or name == x or name in seen:
            continue
        seen.add(name)
        if name in initializers or name in graph_inputs:
            used.add(name)
        elif name in producer:
            keep.add(producer[name])
            stack.extend(model.graph.node[producer[name]].input)
    x_info = onnx.helper.make_tensor_value_info(x, elem_type(x_value.dtype), list(x_value.shape))
    inputs = [x_info, *(graph_inputs[n] for n in sorted(used) if n in graph_inputs and n not in initializers)]
    graph = onnx.helper.make_graph(
        [model.graph.node[i] for i in sorted(keep)],
        "site",
        inputs,
        [onnx.ValueInfoProto(name=out)],
        initializer=[initializers[n] for n in sorted(used) if n in initializers],
    )
    return onnx.helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
