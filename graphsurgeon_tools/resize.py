"""Find Resize/Upsample sites and where their scales come from.

``find_resize_sites(model) -> list[ResizeSite]`` walks the main graph in node order
and describes every Resize (opset 10, 11-12, 13+, 18+, 19) and Upsample (7, 9).
It only reads the model; it never changes it.

CONTRACT (shared by every pass, the CLI and the reports; do not rename fields):
see :class:`ResizeSite` and :class:`ValueSource` below.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Optional, Union

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from onnx import ModelProto


class ValueSource(str, Enum):
    """Where a Resize input (scales or sizes) gets its value."""

    ABSENT = "absent"  # input not given (or the empty-string placeholder)
    ATTRIBUTE = "attribute"  # Upsample-7: the `scales` attribute
    INITIALIZER = "initializer"
    CONSTANT = "constant"  # a Constant node
    IDENTITY = "identity"  # Identity (chain) of an initializer or Constant
    FOLDED = "folded"  # a constant subgraph that folds to a value
    GRAPH_INPUT = "graph_input"  # already dynamic
    RUNTIME = "runtime"  # computed from run-time data (e.g. Shape -> ... -> Concat)


@dataclass(frozen=True)
class ResizeSite:
    """One Resize or Upsample node and everything a pass or a report needs to know about it."""

    node_name: str
    node_index: int  # position in graph.node
    op_type: str  # "Resize" or "Upsample"
    opset: int  # the default-domain opset the model imports
    input_name: str  # the X tensor
    output_name: str
    mode: str  # nearest | linear | cubic (Upsample's "bilinear" reported as "linear")
    coordinate_transformation_mode: str
    cubic_coeff_a: float
    nearest_mode: str
    exclude_outside: int
    antialias: int
    extrapolation_value: float
    keep_aspect_ratio_policy: str
    axes: Optional[tuple[int, ...]]
    scales: Optional[tuple[float, ...]]  # the constant value, when known
    scales_source: ValueSource
    scales_tensor: str  # tensor name feeding the scales slot ("" if none / attribute)
    sizes: Optional[tuple[int, ...]]
    sizes_source: ValueSource
    sizes_tensor: str
    roi_tensor: str
    input_rank: Optional[int]  # rank of X when known from shapes
    input_shape: Optional[tuple[Any, ...]] = None  # ints for static dims, strings for symbolic, None unknown
    notes: tuple[str, ...] = field(default=())
    op_version: int = 0  # the op's schema version at this opset (Resize 10/11/13/18/19, Upsample 7/9)
    scales_nodes: tuple[str, ...] = field(default=())  # nodes computing the scales (Constant, Identity, folded)
    sizes_nodes: tuple[str, ...] = field(default=())
    problems: tuple[str, ...] = field(default=())  # why the constant scales/sizes make no sense (empty: fine)

    @property
    def has_constant_scales(self) -> bool:
        return self.scales is not None and self.scales_source not in (
            ValueSource.GRAPH_INPUT,
            ValueSource.RUNTIME,
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["scales_source"] = self.scales_source.value
        data["sizes_source"] = self.sizes_source.value
        return data



@dataclass(frozen=True)
class ValueTrace:
    """Where one tensor's value comes from, as found by :func:`trace_value`."""

    source: ValueSource
    value: Optional["np.ndarray"] = None  # the constant value (graph input: its default, if any)
    nodes: tuple[int, ...] = ()  # indices of the nodes computing it (Constant, Identity chain, folded subgraph)
    reason: str = ""  # why it is RUNTIME, for reports


#: A constant subgraph bigger than this is not folded (reported as runtime).
MAX_FOLD_NODES = 64

_RESIZE_OPS = ("Resize", "Upsample")


def _constant_node_value(node: Any, model: "ModelProto") -> Optional["np.ndarray"]:
    import numpy as np

    from graphsurgeon_tools.passes._graph import tensor_to_array

    for attr in node.attribute:
        if attr.name == "value":
            return tensor_to_array(attr.t, model)
        if attr.name == "value_float":
            return np.array(attr.f, dtype=np.float32)
        if attr.name == "value_floats":
            return np.array(list(attr.floats), dtype=np.float32)
        if attr.name == "value_int":
            return np.array(attr.i, dtype=np.int64)
        if attr.name == "value_ints":
            return np.array(list(attr.ints), dtype=np.int64)
    return None  # sparse_value / string values: not a scales vector


class _Tracer:
    """Resolves tensor values in the main graph, memoising across sites."""

    def __init__(self, model: "ModelProto") -> None:
        from graphsurgeon_tools.passes._graph import default_opset, producers

        self.model = model
        self.graph = model.graph
        self.producers = producers(model.graph)
        self.initializers = {init.name: init for init in model.graph.initializer}
        self.inputs = {inp.name for inp in model.graph.input}
        self.opset = default_opset(model)
        self.memo: dict[str, ValueTrace] = {}

    def trace(self, name: str) -> ValueTrace:
        if name in self.memo:
            return self.memo[name]
        result = self._trace(name)
        self.memo[name] = result
        return result

    def _trace(self, name: str) -> ValueTrace:
        from graphsurgeon_tools.passes._graph import (
            DEFAULT_DOMAINS,
            NONDETERMINISTIC_OPS,
            evaluate_subgraph,
            tensor_to_array,
        )

        if not name:
            return ValueTrace(ValueSource.ABSENT)
        if name in self.inputs:
            default = self.initializers.get(name)
            value = tensor_to_array(default, self.model) if default is not None else None
            return ValueTrace(ValueSource.GRAPH_INPUT, value)
        if name in self.initializers:
            return ValueTrace(ValueSource.INITIALIZER, tensor_to_array(self.initializers[name], self.model))
        index = self.producers.get(name)
        if index is None:
            return ValueTrace(ValueSource.RUNTIME, reason=f"{name!r} is produced by no node (outer scope?)")
        node = self.graph.node[index]
        if node.domain in DEFAULT_DOMAINS and node.op_type == "Constant":
            value = _constant_node_value(node, self.model)
            if value is None:
                return ValueTrace(ValueSource.RUNTIME, reason="Constant node without a numeric tensor value")
            return ValueTrace(ValueSource.CONSTANT, value, (index,))
        if node.domain in DEFAULT_DOMAINS and node.op_type == "Identity":
            if not node.input:  # invalid (the checker refuses it); not every caller runs the checker
                return ValueTrace(ValueSource.RUNTIME, reason="Identity node without an input")
            upstream = self.trace(node.input[0])
            if upstream.source in (ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.IDENTITY):
                return ValueTrace(ValueSource.IDENTITY, upstream.value, upstream.nodes + (index,))
            if upstream.source == ValueSource.FOLDED:
                return ValueTrace(ValueSource.FOLDED, upstream.value, upstream.nodes + (index,))
            return ValueTrace(upstream.source, upstream.value if upstream.source != ValueSource.RUNTIME else None,
                              (), upstream.reason)
        # A general producer: fold it if everything upstream is constant and small.
        subgraph: list[int] = []
        constants: dict[str, Any] = {}
        stack, seen = [name], set()
        while stack:
            tensor = stack.pop()
            if tensor in seen or not tensor:
                continue
            seen.add(tensor)
            if tensor in self.inputs:
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed from graph input {tensor!r}")
            if tensor in self.initializers:
                constants[tensor] = tensor_to_array(self.initializers[tensor], self.model)
                continue
            producer = self.producers.get(tensor)
            if producer is None:
                return ValueTrace(ValueSource.RUNTIME, reason=f"{tensor!r} comes from an outer scope")
            if producer in subgraph:
                continue
            upstream_node = self.graph.node[producer]
            if upstream_node.domain not in DEFAULT_DOMAINS:
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by custom op {upstream_node.op_type}")
            if upstream_node.op_type in NONDETERMINISTIC_OPS:
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by random op {upstream_node.op_type}")
            if any(attr.HasField("g") or attr.graphs for attr in upstream_node.attribute):
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by control flow ({upstream_node.op_type})")
            subgraph.append(producer)
            if len(subgraph) > MAX_FOLD_NODES:
                return ValueTrace(ValueSource.RUNTIME, reason=f"constant subgraph over {MAX_FOLD_NODES} nodes")
            stack.extend(upstream_node.input)
        order = sorted(subgraph)
        try:
            value = evaluate_subgraph(
                [self.graph.node[i] for i in order], constants, name, self.opset, self.model.opset_import
            )
        except Exception as exc:  # the reference evaluator refused: report, do not guess
            return ValueTrace(ValueSource.RUNTIME, reason=f"constant subgraph did not fold: {type(exc).__name__}")
        return ValueTrace(ValueSource.FOLDED, value, tuple(order))


def trace_value(model: "ModelProto", name: str) -> ValueTrace:
    """Where tensor ``name`` of the main graph gets its value. Reads the model, never changes it."""
    return _Tracer(model).trace(name)


def _attrs(node: Any) -> dict[str, Any]:
    import onnx

    return {attr.name: onnx.helper.get_attribute_value(attr) for attr in node.attribute}


def _text(value: Any, default: str) -> str:
    if value is None:
        return default
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


#: A scale above this is a typo or an attack, not a resize (it would ask for terabytes).
MAX_SCALE = 1.0e4
_KNOWN = (ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.IDENTITY, ValueSource.FOLDED,
          ValueSource.ATTRIBUTE)


def _problems(
    op_type: str,
    scales: Optional[tuple[float, ...]],
    scales_source: ValueSource,
    sizes: Optional[tuple[int, ...]],
    sizes_source: ValueSource,
    sizes_tensor: str,
    rank: Optional[int],
    axes: Optional[tuple[int, ...]],
) -> list[str]:
    """What makes a site's constant scales/sizes nonsense (the spec's rules plus sanity)."""
    import math

    found: list[str] = []
    has_scales = scales_source != ValueSource.ABSENT
    has_sizes = bool(sizes_tensor) and sizes_source != ValueSource.ABSENT and (
        sizes is not None or sizes_source not in _KNOWN
    )
    if has_scales and has_sizes:
        found.append("both scales and sizes are given; Resize takes exactly one of them")
    if not has_scales and not has_sizes:
        found.append("neither scales nor sizes is given (an empty scales tensor and no sizes)")
    if axes is not None:
        if len(set(axes)) != len(axes):
            found.append(f"axes {list(axes)} repeat an axis")
        if rank is not None and any(not -rank <= a < rank for a in axes):
            found.append(f"axes {list(axes)} are out of range for a rank-{rank} input")
    expected = len(axes) if axes is not None else rank
    what = f"len(axes)={expected}" if axes is not None else f"a rank-{expected} input"
    if scales is not None and scales_source in _KNOWN:
        bad = [v for v in scales if not math.isfinite(v) or v <= 0]
        if bad:
            found.append(f"scales {list(scales)} contain {bad[0]}, not a positive finite number")
        elif max(scales) > MAX_SCALE:
            found.append(f"scale {max(scales):g} in {list(scales)} is absurdly large (> {MAX_SCALE:g})")
        if expected is not None and len(scales) != expected:
            found.append(f"scales {list(scales)} have {len(scales)} entries for {what}")
    if sizes is not None and sizes_source in _KNOWN:
        if any(v <= 0 for v in sizes):
            found.append(f"sizes {list(sizes)} must all be positive")
        if expected is not None and len(sizes) != expected:
            found.append(f"sizes {list(sizes)} have {len(sizes)} entries for {what}")
    return found


def _inferred_value_infos(model: "ModelProto", infos: dict[str, Any]) -> dict[str, Any]:
    """Value infos with shape inference's answers added (on a weightless copy; model untouched)."""
    import onnx

    from graphsurgeon_tools.passes._graph import weightless_copy

    try:
        inferred = onnx.shape_inference.infer_shapes(weightless_copy(model), strict_mode=False, data_prop=True)
    except Exception:  # shape inference is a nicety for reports; a model it chokes on is still inspectable
        return infos
    merged = {v.name: v for v in inferred.graph.value_info}
    merged.update(infos)
    return merged


def find_resize_sites(model: Union["ModelProto", Any]) -> list[ResizeSite]:
    """Describe every Resize/Upsample node of the main graph, in graph order.

    ``model`` is a ModelProto or a path (loaded with :func:`graphsurgeon_tools.io.load_model`,
    weights left on disk). Constant scales/sizes are resolved through Constant nodes,
    Identity chains and small constant subgraphs (folded with ONNX's reference evaluator,
    at most :data:`MAX_FOLD_NODES` nodes). Reads the model; never changes it. Does NOT look
    inside subgraphs (If/Loop bodies) or functions, and does NOT validate the scales: the
    passes decide what is nonsense.

    Resize-10 and Upsample have no coordinate_transformation_mode/nearest_mode attributes;
    they are reported with the behaviour the spec gives them (asymmetric, floor).
    """
    from graphsurgeon_tools.errors import OnnxToolError
    from graphsurgeon_tools.io import load_model

    label = None if _is_proto(model) else str(model)
    try:
        return _find_resize_sites(load_model(model))
    except OnnxToolError as exc:
        # Errors name the file when there is one (io's own messages already do).
        if label is None or label in str(exc):
            raise
        raise type(exc)(f"{label}: {exc}") from None


def _is_proto(model: Any) -> bool:
    from onnx import ModelProto

    return isinstance(model, ModelProto)


def _find_resize_sites(model: "ModelProto") -> list[ResizeSite]:
    import onnx

    from graphsurgeon_tools.passes._graph import DEFAULT_DOMAINS, static_shape, value_info_map

    tracer = _Tracer(model)
    opset = tracer.opset
    infos = value_info_map(model.graph)
    declared = set(infos)
    resize_nodes = [n for n in model.graph.node if n.op_type in _RESIZE_OPS and n.domain in DEFAULT_DOMAINS]
    for node in resize_nodes:
        if not node.input or not node.input[0]:  # the checker says so too, but not every caller runs it
            from graphsurgeon_tools.errors import InvalidModelError

            label = node.name or (node.output[0] if node.output else "?")
            raise InvalidModelError(f"node {label!r}: {node.op_type} has no input X")
    resize_inputs = [n.input[0] for n in resize_nodes]
    if any(static_shape(infos.get(name)) is None for name in resize_inputs):
        infos = _inferred_value_infos(model, infos)
    sites: list[ResizeSite] = []
    for index, node in enumerate(model.graph.node):
        if node.domain not in DEFAULT_DOMAINS or node.op_type not in _RESIZE_OPS:
            continue
        try:
            op_version = onnx.defs.get_schema(node.op_type, opset, "").since_version
        except Exception:  # e.g. Upsample at an opset where the schema is gone (deprecated/removed)
            op_version = 0
        attrs = _attrs(node)
        notes: list[str] = []
        mode = _text(attrs.get("mode"), "nearest")
        if mode == "bilinear":
            mode = "linear"
            notes.append("Upsample mode 'bilinear' reported as 'linear'")
        legacy = node.op_type == "Upsample" or op_version == 10
        ctm = "asymmetric" if legacy else _text(attrs.get("coordinate_transformation_mode"), "half_pixel")
        nearest_mode = "floor" if legacy else _text(attrs.get("nearest_mode"), "round_prefer_floor")
        if legacy:
            notes.append(f"{node.op_type}-{op_version or '?'} has asymmetric coordinates and floor rounding by definition")
        axes = tuple(int(a) for a in attrs["axes"]) if "axes" in attrs else None
        inputs = list(node.input) + [""] * 4
        scales_tensor, sizes_tensor, roi_tensor = "", "", ""
        scales: Optional[tuple[float, ...]] = None
        sizes: Optional[tuple[int, ...]] = None
        scales_source = sizes_source = ValueSource.ABSENT
        scales_nodes: tuple[str, ...] = ()
        sizes_nodes: tuple[str, ...] = ()
        problems: list[str] = []

        def names(trace: ValueTrace) -> tuple[str, ...]:
            return tuple(model.graph.node[i].name or model.graph.node[i].output[0] for i in trace.nodes)

        if node.op_type == "Upsample" and "scales" in attrs:
            scales = tuple(float(s) for s in attrs["scales"])
            scales_source = ValueSource.ATTRIBUTE
        else:
            if node.op_type == "Upsample" or op_version == 10:
                scales_tensor = inputs[1]
            else:
                roi_tensor, scales_tensor, sizes_tensor = inputs[1], inputs[2], inputs[3]
            trace = tracer.trace(scales_tensor)
            scales_source = trace.source
            scales_nodes = names(trace)
            if trace.value is not None:
                if trace.value.ndim != 1 and trace.value.size:
                    problems.append(f"scales must be a 1-D tensor, got shape {list(trace.value.shape)}")
                flat = trace.value.reshape(-1)
                scales = tuple(float(s) for s in flat) if flat.size else None
                if not flat.size and scales_source != ValueSource.GRAPH_INPUT:
                    scales_source = ValueSource.ABSENT  # the empty-tensor placeholder exporters write
            if trace.reason:
                notes.append(f"scales: {trace.reason}")
            if sizes_tensor:
                size_trace = tracer.trace(sizes_tensor)
                sizes_source = size_trace.source
                sizes_nodes = names(size_trace)
                if size_trace.value is not None and size_trace.value.ndim != 1 and size_trace.value.size:
                    problems.append(f"sizes must be a 1-D tensor, got shape {list(size_trace.value.shape)}")
                if size_trace.value is not None and size_trace.value.size:
                    sizes = tuple(int(s) for s in size_trace.value.reshape(-1))
                if size_trace.reason:
                    notes.append(f"sizes: {size_trace.reason}")
        x_shape = static_shape(infos.get(inputs[0]))
        if x_shape is not None and inputs[0] not in declared:
            # names shape inference invents (unk__12) are not stable: report them as unknown
            x_shape = tuple(None if isinstance(d, str) and d.startswith("unk__") else d for d in x_shape)
        if x_shape is None and node.input[0] in tracer.initializers:
            x_shape = tuple(int(d) for d in tracer.initializers[node.input[0]].dims)
        rank = len(x_shape) if x_shape is not None else None
        if rank is None and scales is not None and axes is None:
            rank = len(scales)
        elif rank is None and sizes is not None and axes is None:
            rank = len(sizes)
        problems.extend(_problems(node.op_type, scales, scales_source, sizes, sizes_source, sizes_tensor,
                                  rank, axes))
        sites.append(
            ResizeSite(
                node_name=node.name,
                node_index=index,
                op_type=node.op_type,
                opset=opset,
                input_name=node.input[0],
                output_name=node.output[0],
                mode=mode,
                coordinate_transformation_mode=ctm,
                cubic_coeff_a=float(attrs.get("cubic_coeff_a", -0.75)),
                nearest_mode=nearest_mode,
                exclude_outside=int(attrs.get("exclude_outside", 0)),
                antialias=int(attrs.get("antialias", 0)),
                extrapolation_value=float(attrs.get("extrapolation_value", 0.0)),
                keep_aspect_ratio_policy=_text(attrs.get("keep_aspect_ratio_policy"), "stretch"),
                axes=axes,
                scales=scales,
                scales_source=scales_source,
                scales_tensor=scales_tensor,
                sizes=sizes,
                sizes_source=sizes_source,
                sizes_tensor=sizes_tensor,
                roi_tensor=roi_tensor,
                input_rank=rank,
                input_shape=x_shape,
                notes=tuple(notes),
                op_version=op_version,
                scales_nodes=scales_nodes,
                sizes_nodes=sizes_nodes,
                problems=tuple(problems),
            )
        )
    return sites
