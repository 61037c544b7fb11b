"""The size tensor MMDeploy's DynamicTRTResize reads, built and recognised side by side.

::

    build (forward):   size_tensor = ConstantOfShape(Concat(1..1, Slice(Floor(Cast(Shape(X)) * scales), -2)))
                       size_tensor = ConstantOfShape(Concat(1..1, Slice(sizes, -2)))
                       size_tensor = a graph input [1.., H_out, W_out]          (size_input=NAME)
    recognise (reverse): the first two subgraphs above -> (scales tensor, None) | (None, sizes tensor)

Only the size tensor's shape is read: its last two dims are the output H, W; its element
type is X's (the plugin's supportsFormatCombination demands it). Output dims are computed
exactly as ONNX Runtime's Resize does: float32(in) * scale, truncated.

Requires: a :class:`~.edit.Builder` on the working model. Does NOT decide whether a size
tensor is exact for a site (that is :mod:`.refusals`).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from graphsurgeon_tools.core import dtypes, opsets
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.passes.swap_plugin.edit import Builder

__all__ = ["from_scales", "from_sizes", "size_input", "trace_size_tensor"]


def from_scales(builder: Builder, nodes: list[NodeProto], base: str, x: str, scales: str, rank: int, elem: int) -> str:
    shape = builder.node(nodes, "Shape", [x], f"{base}/size_tensor/in_shape")
    shape_f = builder.node(nodes, "Cast", [shape], f"{base}/size_tensor/in_shape_f", to=TensorProto.FLOAT)
    out_f = builder.node(nodes, "Mul", [shape_f, scales], f"{base}/size_tensor/out_f")
    floor = builder.node(nodes, "Floor", [out_f], f"{base}/size_tensor/out_floor")
    out_i = builder.node(nodes, "Cast", [floor], f"{base}/size_tensor/out_shape", to=TensorProto.INT64)
    return _finish(builder, nodes, base, out_i, rank, elem)


def from_sizes(builder: Builder, nodes: list[NodeProto], base: str, sizes: str, rank: int, elem: int) -> str:
    return _finish(builder, nodes, base, sizes, rank, elem)


def _finish(builder: Builder, nodes: list[NodeProto], base: str, full_shape: str, rank: int, elem: int) -> str:
    if opsets.default_opset(builder.model) >= 10:
        starts = builder.initializer(f"{base}/size_tensor/starts", np.array([-2], dtype=np.int64))
        ends = builder.initializer(f"{base}/size_tensor/ends", np.array([np.iinfo(np.int64).max], dtype=np.int64))
        hw = builder.node(nodes, "Slice", [full_shape, starts, ends], f"{base}/size_tensor/hw")
    else:  # Slice-1: starts/ends are attributes
        big = int(np.iinfo(np.int64).max)
        hw = builder.node(nodes, "Slice", [full_shape], f"{base}/size_tensor/hw", starts=[-2], ends=[big], axes=[0])
    ones = builder.initializer(f"{base}/size_tensor/ones", np.ones(rank - 2, dtype=np.int64))
    dims = builder.node(nodes, "Concat", [ones, hw], f"{base}/size_tensor/dims", axis=0)
    zero = numpy_helper.from_array(np.zeros(1, dtype=dtypes.np_dtype(elem)), "value")
    return builder.node(nodes, "ConstantOfShape", [dims], f"{base}/size_tensor", value=zero)


def size_input(
    model: ModelProto,
    builder: Builder,
    site: Any,
    base: str,
    count: int,
    rank: int,
    elem: int,
    new_inputs: list[dict[str, Any]],
) -> str:
    """A new graph input whose last two dims are the output H, W (MMDeploy's tutorial layout)."""
    name = builder.name(base if count == 1 else f"{base}_{len(new_inputs)}")
    dims: list[Any] = [1] * (rank - 2) + [f"{name}_height", f"{name}_width"]
    model.graph.input.append(helper.make_tensor_value_info(name, elem, dims))
    at_original: Optional[list[int]] = None
    shape, scales = site.input_shape, site.scales
    if shape is not None and scales is not None and all(isinstance(d, int) for d in shape[-2:]):
        at_original = [1] * (rank - 2) + [
            int(np.floor(np.float32(d) * np.float32(f))) for d, f in zip(shape[-2:], scales[-2:])
        ]
    elif site.sizes is not None:
        at_original = [1] * (rank - 2) + [int(v) for v in site.sizes[-2:]]
    new_inputs.append(
        {
            "name": name,
            "dtype": dtypes.dtype_name(elem),
            "shape": dims,
            "value": None,  # only the shape is read
            "shape_at_original_factor": at_original,
        }
    )
    return name


def trace_size_tensor(
    model: ModelProto, name: str, producers: Optional[dict[str, int]] = None
) -> tuple[Optional[str], Optional[str]]:
    """Recognise the subgraphs :func:`from_scales` / :func:`from_sizes` build.

    Returns (scales tensor, None), (None, sizes tensor) or (None, None). ``producers``: the
    tensor -> node-index map, when the caller has one (built once per pass).
    """
    graph = model.graph
    prod = producers if producers is not None else core_graph.producers(graph)

    def node_of(tensor: str, op: str) -> Optional[NodeProto]:
        index = prod.get(tensor)
        if index is None or graph.node[index].op_type != op:
            return None
        return graph.node[index]

    cos = node_of(name, "ConstantOfShape")
    concat = cos and node_of(cos.input[0], "Concat")
    if not concat or len(concat.input) != 2:
        return None, None
    sl = node_of(concat.input[1], "Slice")
    if not sl:
        return None, None
    full = sl.input[0]
    cast = node_of(full, "Cast")
    floor = cast and node_of(cast.input[0], "Floor")
    mul = floor and node_of(floor.input[0], "Mul")
    shape_cast = mul and node_of(mul.input[0], "Cast")
    shape = shape_cast and node_of(shape_cast.input[0], "Shape")
    if mul and shape:
        return mul.input[1], None
    return None, full
