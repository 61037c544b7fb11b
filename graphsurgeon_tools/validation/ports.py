"""Model ports: which graph inputs carry data, which a factor drives, which are fed a fixed value.

:func:`model_ports` sorts the graph inputs of an ONNX model. A pass's declarations come first
(:mod:`graphsurgeon_tools.core.declared_inputs`, recorded in the model's metadata): a declared input
with a factor layout is a scale input of that layout driving the nodes it declares, one with the
``value`` layout is a :attr:`Ports.fixed_inputs` entry, fed its declared original (so a new pass is
driven by validate without any change here). Inputs nobody declared (models from elsewhere) are
found by walking the graph: a graph input is a scale input when it reaches the scales/sizes slot of
a Resize, Upsample or ``DynamicTRTResize`` node. :meth:`ScaleInput.feed` gives the value for an upscale factor
``f`` in the input's layout (a full scales vector ``[1, 1, f, f]``, a factor pair
``[f, f]``, a single factor, a ``sizes`` vector, or a size tensor whose *shape* is the
output size); :class:`Ports` also carries the factor a static model has baked in.

Requires: a ModelProto (not shape-inferred: declared input shapes are what is fed).
Ensures: every non-initializer graph input is exactly one of data, scale or fixed input; an input
of an element type validate cannot feed is an :class:`InvalidModelError`; a declaration whose
element type is not the graph input's (written for another model) is not trusted.
Does NOT run or modify the model.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
import onnx

from graphsurgeon_tools.core.declared_inputs import DeclaredInput, read_declared_inputs, vector_layout
from graphsurgeon_tools.core.dtypes import np_dtype
from graphsurgeon_tools.core.graph import scopes
from graphsurgeon_tools.core.opsets import default_opset
from graphsurgeon_tools.errors import InvalidModelError, InvalidScalesError, UsageError
from graphsurgeon_tools.resize.original_values import read_original_values
from graphsurgeon_tools.resize.semantics import PLUGIN_OP_TYPE, RESIZE_OPS, is_resize_node, op_version, scale_slots
from graphsurgeon_tools.validation.baked import sites_baked_scales

__all__ = ["PLUGIN_OP_TYPE", "DataInput", "DeclaredInput", "Ports", "ScaleInput", "model_opset", "model_ports"]

# Ops that move a value without computing a new one (a sizes input passes through them unchanged).
_VALUE_PRESERVING = frozenset(
    {"Identity", "Cast", "Concat", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Slice", "Gather"}
)


@dataclass(frozen=True)
class DataInput:
    name: str
    shape: tuple[Any, ...]  # ints for static dims, strings (or None) for symbolic ones
    dtype: np.dtype

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "shape": list(self.shape), "dtype": str(self.dtype)}


@dataclass(frozen=True)
class ScaleInput:
    """A graph input that drives the scales (or output size) of a resize node.

    ``layout`` is one of ``scales`` (one entry per axis of X: ``[1, 1, f, f]``),
    ``pair`` (one per spatial axis: ``[f, f]``), ``factor`` (scalar or ``[f]``),
    ``sizes`` (an int vector of output sizes) or ``size-tensor`` (only its shape is
    read, as in MMDeploy's ``DynamicTRTResize(X, size_tensor)``).
    """

    name: str
    layout: str
    length: Optional[int]  # entries of the vector; None for size tensors
    rank: int  # rank of the X it resizes, when known (4 for images)
    dtype: np.dtype
    nodes: tuple[str, ...]  # the resize nodes it drives
    shape: tuple[Any, ...] = ()  # as declared by the graph input (ints static, strings symbolic)

    def feed(self, factor: float, x_shape: Sequence[int]) -> np.ndarray:
        """The value to feed for upscale ``factor`` given the concrete shape of X."""
        spatial = max(len(x_shape) - 2, 1)
        if self.layout == "scales":
            n = self.length or len(x_shape) or self.rank
            values = [1.0] * max(n - spatial, 0) + [factor] * min(spatial, n)
            return np.asarray(values, dtype=self.dtype)
        if (
            self.layout in ("pair", "factor")
            and np.issubdtype(self.dtype, np.integer)
            and not float(factor).is_integer()
        ):
            raise InvalidScalesError(
                f"input {self.name!r} holds whole factors ({self.dtype}); factor {factor:g} is not whole"
            )
        if self.layout == "pair":
            return np.full((self.length or 2,), factor, dtype=self.dtype)
        if self.layout == "factor":
            return np.asarray(factor if self.length is None else [factor], dtype=self.dtype)
        out = [int(d) for d in x_shape[:-spatial]] + [int(math.floor(int(d) * factor)) for d in x_shape[-spatial:]]
        if self.layout == "sizes":
            return np.asarray(out[-(self.length or len(out)) :], dtype=self.dtype)
        return np.zeros(self._size_tensor_shape(out), dtype=self.dtype)  # only its shape is read

    def _size_tensor_shape(self, out: list[int]) -> list[int]:
        # The spatial dims carry the output size; the others may be pinned by the model
        # (MMDeploy's size tensor is N x 1 x H x W): honour those.
        if len(self.shape) != len(out):
            return out
        spatial = max(len(out) - 2, 1)
        return [
            declared if isinstance(declared, int) and axis < len(out) - spatial else value
            for axis, (declared, value) in enumerate(zip(self.shape, out))
        ]

    def feed_scales(self, scales: Sequence[float], x_shape: Sequence[int]) -> np.ndarray:
        """The value to feed so the node resizes by exactly ``scales`` (one per axis of X)."""
        spatial = list(scales)[2:] if len(scales) > 2 else list(scales)
        if self.layout == "scales":
            n = self.length or len(scales)
            return np.asarray(list(scales)[-n:], dtype=self.dtype)
        if self.layout == "pair":
            return np.asarray(spatial[-(self.length or 2) :], dtype=self.dtype)
        if self.layout == "factor":
            return np.asarray(spatial[0] if self.length is None else spatial[:1], dtype=self.dtype)
        out = [int(math.floor(int(d) * float(s))) for d, s in zip(x_shape, scales)]
        if self.layout == "sizes":
            return np.asarray(out[-(self.length or len(out)) :], dtype=self.dtype)
        return np.zeros(self._size_tensor_shape(out), dtype=self.dtype)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "layout": self.layout,
            "length": self.length,
            "dtype": str(self.dtype),
            "nodes": list(self.nodes),
        }


@dataclass(frozen=True)
class Ports:
    """How to drive a model: its data inputs, scale inputs and (when static) baked factor."""

    data_inputs: tuple[DataInput, ...]
    scale_inputs: tuple[ScaleInput, ...]
    outputs: tuple[str, ...]
    # Per resize node with constant scales: node name -> full scales (one per axis of X).
    baked_scales: dict[str, tuple[float, ...]] = field(default_factory=dict)
    # The single spatial factor every constant-scale resize shares, if they share one.
    baked_factor: Optional[float] = None
    # Why there is no single baked factor (mixed factors, sizes-driven, no resize at all).
    baked_note: str = ""
    resize_nodes: int = 0
    # Scale input -> the value that reproduces the original model, as make_dynamic_scale /
    # swap_plugin recorded it (metadata_props "onnxtool.original_values") or a pass declared it
    # (core.declared_inputs); see original_feeds.
    original_values: dict[str, Any] = field(default_factory=dict)
    # Declared inputs no factor drives (layout "value"): fed their original, or the user's value.
    fixed_inputs: tuple[DeclaredInput, ...] = ()
    # Every declaration the model carries that fits its inputs (scale and fixed ones).
    declared: tuple[DeclaredInput, ...] = ()

    @property
    def is_dynamic(self) -> bool:
        return bool(self.scale_inputs)

    def original_feeds(self, fixed: Any = ()) -> Optional[dict[str, np.ndarray]]:
        """One array per scale input not in ``fixed``: its recorded original value; None when one has none.

        A value entry is fed as recorded (shaped as the input declares); a ``{"shape": dims}``
        entry (a size tensor, only its shape is read) as zeros of that shape.
        """
        feeds: dict[str, np.ndarray] = {}
        for scale in self.scale_inputs:
            if scale.name in fixed:
                continue
            value = self.original_values.get(scale.name)
            if isinstance(value, dict) and isinstance(value.get("shape"), list):
                feeds[scale.name] = np.zeros([int(d) for d in value["shape"]], dtype=scale.dtype)
            elif isinstance(value, list) and value:
                array = np.asarray(value, dtype=scale.dtype)
                feeds[scale.name] = array.reshape(()) if scale.shape == () and array.size == 1 else array
            else:
                return None
        return feeds if feeds else None

    def fixed_feeds(self, given: Any = ()) -> dict[str, np.ndarray]:
        """One array per fixed input not in ``given``: its declared original.

        Raises :class:`UsageError` for one with no recorded original (the user must give it)."""
        feeds: dict[str, np.ndarray] = {}
        for spec in self.fixed_inputs:
            if spec.name in given:
                continue
            value = spec.original_array()
            if value is None:
                raise UsageError(
                    f"input {spec.name!r} (declared by {spec.by or 'a pass'}) has no recorded original "
                    f"value to feed: give it with inputs="
                )
            feeds[spec.name] = value
        return feeds

    def to_dict(self) -> dict[str, Any]:
        return {
            "data_inputs": [d.to_dict() for d in self.data_inputs],
            "scale_inputs": [s.to_dict() for s in self.scale_inputs],
            "fixed_inputs": [d.name for d in self.fixed_inputs],
            "declared_inputs": [d.to_dict() for d in self.declared],
            "outputs": list(self.outputs),
            "dynamic": self.is_dynamic,
            "baked_factor": self.baked_factor,
            "baked_note": self.baked_note,
        }


# The element types validate can draw random data for or cast a user's array to.
_FEEDABLE = (
    onnx.TensorProto.FLOAT,
    onnx.TensorProto.DOUBLE,
    onnx.TensorProto.FLOAT16,
    onnx.TensorProto.INT64,
    onnx.TensorProto.INT32,
    onnx.TensorProto.INT8,
    onnx.TensorProto.UINT8,
    onnx.TensorProto.BOOL,
)


def _value_info_shape(info: onnx.ValueInfoProto) -> tuple[Any, ...]:
    if not info.type.tensor_type.HasField("shape"):
        return ()
    dims: list[Any] = []
    for dim in info.type.tensor_type.shape.dim:
        if dim.HasField("dim_value") and dim.dim_value > 0:
            dims.append(int(dim.dim_value))
        else:
            dims.append(dim.dim_param or None)
    return tuple(dims)


def _value_info_dtype(info: onnx.ValueInfoProto, where: str) -> np.dtype:
    elem = info.type.tensor_type.elem_type
    if elem not in _FEEDABLE:
        raise InvalidModelError(
            f"input {info.name!r} of {where} has element type "
            f"{onnx.TensorProto.DataType.Name(elem) if elem else 'UNDEFINED'}, which validate cannot feed"
        )
    return np_dtype(elem)


def model_opset(model: onnx.ModelProto) -> int:
    """The default-domain opset, 0 when the model imports none (read as "newest" by the slots)."""
    try:
        return default_opset(model)
    except InvalidModelError:
        return 0


def _scale_slots(node: onnx.NodeProto, opset: int) -> list[tuple[int, str]]:
    """(input index, "scales" | "sizes") of the inputs that decide a resize node's output size."""
    version = op_version(node.op_type, opset) if opset and node.op_type in RESIZE_OPS else 0
    return scale_slots(node.op_type, version)


def _is_resize(node: onnx.NodeProto) -> bool:
    # Resize/Upsample in the default domain; the plugin in whatever domain the spec picked.
    return node.op_type == PLUGIN_OP_TYPE or is_resize_node(node)


def model_ports(model: onnx.ModelProto, where: str = "the model") -> Ports:
    """Find the data inputs, the scale inputs and the baked factor of ``model``.

    A graph input is a scale input when it reaches the scales/sizes slot of a
    Resize, Upsample or ``DynamicTRTResize`` node, directly or through a small
    subgraph (Concat, Cast, Unsqueeze ...); tracing stops at ``Shape``/``Size`` so a
    data input whose *shape* feeds a size computation stays a data input.
    Does not run shape inference and does not fold anything itself.
    """
    graph = model.graph
    initializer_names = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializer_names]
    input_names = {i.name for i in inputs}
    # Every graph but functions: a body's Resize may read a main-graph input from the outer
    # scope (make_dynamic_scale rewrites sites in If/Loop/Scan bodies that way); names are
    # unique model-wide.
    nodes_everywhere = [(i, n) for scope in scopes(model, functions=False) for i, n in enumerate(scope.graph.node)]
    producers = {out: node for _, node in nodes_everywhere for out in node.output}
    opset = model_opset(model)

    driven: dict[str, tuple[str, list[str]]] = {}  # input -> (slot kind, nodes)
    # Inputs reaching a sizes slot only through arithmetic (make_dynamic_scale layout="factor":
    # sizes = Concat(Shape(X)[:-2], Shape(X)[-2:] * factor)) hold whole factors, not sizes.
    via_math: set[str] = set()
    plugin_direct: set[str] = set()  # graph inputs that ARE a plugin node's second input
    x_rank: dict[str, int] = {}
    for index, node in nodes_everywhere:
        if not _is_resize(node):
            continue
        for slot, kind in _scale_slots(node, opset):
            if slot >= len(node.input) or not node.input[slot]:
                continue
            if node.op_type == PLUGIN_OP_TYPE:
                plugin_direct.add(node.input[slot])
            seen: set[str] = set()
            queue = deque([(node.input[slot], False)])
            while queue:
                tensor, math = queue.popleft()
                if tensor in seen or len(seen) > 64:
                    continue
                seen.add(tensor)
                if tensor in input_names:
                    entry = driven.setdefault(tensor, (kind, []))
                    entry[1].append(node.name or f"#{index}")
                    if math and kind == "sizes":
                        via_math.add(tensor)
                    if node.op_type == PLUGIN_OP_TYPE and not math:  # the V3 form's 1-D/3-D full-rank Concat
                        plugin_direct.add(tensor)
                    continue
                producer = producers.get(tensor)
                if producer is None or producer.op_type in ("Shape", "Size"):
                    continue
                math = math or producer.op_type not in _VALUE_PRESERVING
                queue.extend((t, math) for t in producer.input if t)
        # Rank of X when its graph input says so; SRCNN-like models resize the input itself.
        x_info = next((i for i in inputs if node.input and i.name == node.input[0]), None)
        if x_info is not None:
            for tensor, (_, nodes) in driven.items():
                if (node.name or f"#{index}") in nodes:
                    x_rank[tensor] = len(_value_info_shape(x_info))

    scale_inputs: list[ScaleInput] = []
    data_inputs: list[DataInput] = []
    fixed_inputs: list[DeclaredInput] = []
    declared = read_declared_inputs(model)
    for info in inputs:
        shape = _value_info_shape(info)
        dtype = _value_info_dtype(info, where)
        declaration = declared.get(info.name)
        if declaration is not None and np.dtype(declaration.dtype) != dtype:
            declared.pop(info.name)  # written for another model: not trusted
            declaration = None
        if declaration is not None and not declaration.factor_driven:
            fixed_inputs.append(declaration)
            continue
        if declaration is not None:  # the pass said what a factor is for this input
            length = shape[0] if len(shape) == 1 and isinstance(shape[0], int) else None
            rank = x_rank.get(info.name, 4)
            # The resize nodes it reaches, in validate's own naming, where the walk finds them (sites=,
            # baked scales per node); else the nodes the pass named (a pass whose input drives no resize).
            nodes = tuple(driven[info.name][1]) if info.name in driven else declaration.drives
            scale_inputs.append(ScaleInput(info.name, declaration.layout, length, rank, dtype, nodes, shape))
            continue
        if info.name not in driven:
            data_inputs.append(DataInput(info.name, shape, dtype))
            continue
        kind, nodes = driven[info.name]
        rank = x_rank.get(info.name, 4)
        length = shape[0] if len(shape) == 1 and isinstance(shape[0], int) else None
        if len(shape) >= 2:
            layout, length = "size-tensor", None
        else:  # a Resize's sizes, or the TensorRT V3 plugin form (sizes as values); else factors by length
            sizes = (kind == "sizes" and info.name not in via_math) or (
                info.name in plugin_direct and np.issubdtype(dtype, np.integer)
            )
            layout = vector_layout(length, rank, sizes=sizes, scalar=len(shape) == 0)
        scale_inputs.append(ScaleInput(info.name, layout, length, rank, dtype, tuple(nodes), shape))

    baked, unknown, count = sites_baked_scales(model)
    baked_factor: Optional[float] = None
    note = ""
    if scale_inputs:
        note = "dynamic: scales are graph inputs"
    elif count == 0:
        note = "no Resize/Upsample node"
    elif unknown:
        note = f"resize node(s) {', '.join(unknown[:3])} have no constant scales (sizes-driven or computed)"
    else:
        spatial = {s for scales in baked.values() for s in (scales[2:] if len(scales) > 2 else scales)}
        if len(spatial) == 1:
            baked_factor = spatial.pop()
        else:
            note = "resize nodes bake different factors: " + ", ".join(
                f"{name}={list(scales)}" for name, scales in list(baked.items())[:4]
            )
    # The passes' record of each new input's original value (the sweep's `original` point).
    originals = read_original_values(model) if scale_inputs else {}
    for declaration in declared.values():
        if declaration.original_shape is not None:
            originals[declaration.name] = {"shape": list(declaration.original_shape)}
        elif declaration.original is not None:
            originals[declaration.name] = list(declaration.original)
    return Ports(
        data_inputs=tuple(data_inputs),
        scale_inputs=tuple(scale_inputs),
        outputs=tuple(o.name for o in graph.output),
        baked_scales=baked,
        baked_factor=baked_factor,
        baked_note=note,
        resize_nodes=count,
        original_values=originals,
        fixed_inputs=tuple(fixed_inputs),
        declared=tuple(declared.values()),
    )
