"""Find Resize/Upsample sites and where their scales come from.

``find_resize_sites(model) -> list[ResizeSite]`` walks the main graph in node order and
describes every Resize (op versions 10, 11, 13, 18, 19) and Upsample (7, 9);
``find_resize_sites(model, nested=True)`` adds every site of If/Loop/Scan bodies (any
depth) and of model-local functions, each with ``scope`` saying where it lives. Per site: its
semantics (defaults filled per op version, see :mod:`.semantics`), where its scales and
sizes come from (:class:`~graphsurgeon_tools.core.constants.ConstantTracer`), and what
makes them nonsense (:mod:`.sanity`).

CONTRACT (shared by every pass, the CLI and the reports; do not rename fields): see
:class:`ResizeSite` and :class:`ValueSource`.

Requires: a ModelProto or a path. Ensures: reads the model, never changes it; one
tracer (memoised) per scope, a body's tracer asking its enclosing scope's for names it
reads from outside; shape inference at most once; graphs walked iteratively
(:func:`graphsurgeon_tools.core.graph.scopes`). ``node_index`` indexes the node in its own
scope's graph. ``problems`` holds what makes the scales/sizes nonsense
(:mod:`.sanity`) and what makes the attributes invalid
(:func:`.semantics.attribute_problems`). Does NOT refuse anything: the passes decide what to do with ``problems``
and with sites outside the main graph. Without ``nested=True`` (the default, kept for
callers that index ``model.graph.node`` by ``node_index``) bodies and functions are not
looked at: every caller that claims "every site" passes ``nested=True``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

from graphsurgeon_tools.core import dtypes
from graphsurgeon_tools.core.attributes import attributes
from graphsurgeon_tools.core.checker import inferred_copy, static_shape, value_info_map
from graphsurgeon_tools.core.constants import MAX_FOLD_NODES, ConstantTracer, ValueSource, ValueTrace, trace_value
from graphsurgeon_tools.core.graph import MAIN_GRAPH, Scope, scopes
from graphsurgeon_tools.core.graphs import as_model
from graphsurgeon_tools.errors import InvalidModelError, naming
from graphsurgeon_tools.resize import semantics
from graphsurgeon_tools.resize.sanity import scales_problems

if TYPE_CHECKING:  # pragma: no cover
    from onnx import ModelProto

__all__ = [
    "MAIN_GRAPH",
    "MAX_FOLD_NODES",
    "ResizeSite",
    "ValueSource",
    "ValueTrace",
    "find_resize_sites",
    "in_function",
    "trace_value",
]


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
    scope: str = MAIN_GRAPH  # where the node lives: "main graph", "If 'n' then_branch", "function 'd.f'"...

    @property
    def has_constant_scales(self) -> bool:
        return self.scales is not None and self.scales_source not in (
            ValueSource.GRAPH_INPUT,
            ValueSource.RUNTIME,
        )

    @property
    def in_main_graph(self) -> bool:
        return self.scope == MAIN_GRAPH

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["scales_source"] = self.scales_source.value
        data["sizes_source"] = self.sizes_source.value
        return data


def in_function(site: ResizeSite) -> bool:
    """True for a site inside a model-local function (rewritable only after inlining)."""
    return site.scope.startswith("function ")


def _value_infos(graphs: list[Any]) -> dict[str, Any]:
    """Declared value infos of ``graphs`` (the main graph, then bodies: names are unique
    model-wide)."""
    if len(graphs) == 1:
        return value_info_map(graphs[0])
    merged: dict[str, Any] = {}
    for graph in graphs:
        merged.update(value_info_map(graph))
    return merged


def _inferred_value_infos(
    model: "ModelProto", infos: dict[str, Any], nested: bool, inferred: Optional["ModelProto"] = None
) -> dict[str, Any]:
    """Value infos with shape inference's answers added (on a weightless copy; model untouched).
    ``nested``: the model has If/Loop/Scan bodies, whose answers are added too. ``inferred``:
    the caller's inference result for this model (not run again).
    Shape inference is a nicety for reports: a model it chokes on is still inspectable."""
    inferred = inferred if inferred is not None else inferred_copy(model)
    if inferred is None:
        return infos
    merged = {v.name: v for v in inferred.graph.value_info}
    if nested:
        for scope in scopes(inferred, functions=False):
            merged.update({v.name: v for v in scope.graph.value_info})
    merged.update(infos)
    return merged


def find_resize_sites(
    model: Union["ModelProto", Any],
    *,
    max_fold_bytes: Optional[int] = None,
    nested: bool = False,
    inferred: Optional["ModelProto"] = None,
) -> list[ResizeSite]:
    """Describe every Resize/Upsample node of the main graph, in graph order (``nested``: then
    those of every If/Loop/Scan body and model-local function, see :func:`~graphsurgeon_tools.
    core.graph.scopes` for the order and the ``scope`` names).

    Args:
        model: a ModelProto, a path (loaded with :func:`graphsurgeon_tools.io.load_model`,
            weights left on disk) or an ``onnx_graphsurgeon.Graph``.
        max_fold_bytes: byte bound of constant folding (None: the tracer's default; 0: none).
        nested: also report sites outside the main graph (``site.scope`` says where).
        inferred: :func:`graphsurgeon_tools.core.checker.inferred_copy` of this very model, when
            the caller has it (one shape inference instead of two on a big graph).

    Constant scales/sizes are resolved through Constant nodes, Identity chains and small
    constant subgraphs (folded with ONNX's reference evaluator, at most
    :data:`MAX_FOLD_NODES` nodes). Reads the model; never changes it.

    Resize-10 and Upsample have no coordinate_transformation_mode/nearest_mode attributes;
    they are reported with the behaviour the spec gives them (asymmetric, floor).
    """
    with naming(model if isinstance(model, (str, os.PathLike)) else None):  # errors name the file
        proto, _ = as_model(model)
        return _find_resize_sites(proto, max_fold_bytes, nested, inferred)


def _text(value: Any, default: str) -> str:
    return default if value is None else str(value)


def _find_resize_sites(
    model: "ModelProto",
    max_fold_bytes: Optional[int] = None,
    nested: bool = False,
    inferred: Optional["ModelProto"] = None,
) -> list[ResizeSite]:
    main = ConstantTracer(model, max_bytes=max_fold_bytes)
    # The one walk over every node: scopes and (index, node) of their sites.
    walked = [
        (s, [(i, n) for i, n in enumerate(s.graph.node) if semantics.is_resize_node(n)])
        for s in (scopes(model) if nested else [_main_scope(model)])
    ]
    for _, resize_nodes in walked:
        for _, node in resize_nodes:
            if not node.input or not node.input[0]:  # the checker says so too, but not every caller runs it
                label = node.name or (node.output[0] if node.output else "?")
                raise InvalidModelError(f"node {label!r}: {node.op_type} has no input X")
    graphs = [s.graph for s, _ in walked if not s.function]  # main graph, then its bodies
    infos = _value_infos(graphs)
    declared = set(infos)
    if any(static_shape(infos.get(n.input[0])) is None for _, nodes in walked for _, n in nodes):
        infos = _inferred_value_infos(model, infos, len(graphs) > 1, inferred)

    tracers: dict[str, ConstantTracer] = {}
    sites: list[ResizeSite] = []
    for scope, resize_nodes in walked:
        if scope.parent is None and not scope.function:
            tracer = main
        else:
            tracer = ConstantTracer(
                model,
                max_bytes=main.max_bytes or 0,
                graph=scope.graph,
                outer=tracers.get(scope.parent) if scope.parent else None,
            )
        tracers[scope.name] = tracer
        if not resize_nodes:
            continue
        versions = {op: semantics.op_version(op, tracer.opset) for op in semantics.RESIZE_OPS}
        for index, node in resize_nodes:
            sites.append(_describe(node, index, scope.name, tracer, versions[node.op_type], infos, declared))
    return sites


def _main_scope(model: "ModelProto") -> Any:
    return Scope(MAIN_GRAPH, model.graph, None, None, False)


def _dtype_of(tensor: str, trace: ValueTrace, infos: dict[str, Any]) -> str:
    """The numpy name of ``tensor``'s element type: its constant value's, else the declared/inferred
    one; "" when neither says (an empty placeholder is typeless: exporters write it as float)."""
    if not tensor:
        return ""
    if trace.value is not None:
        return trace.value.dtype.name if trace.value.size else ""
    info = infos.get(tensor)
    elem = info.type.tensor_type.elem_type if info is not None and info.type.HasField("tensor_type") else 0
    return dtypes.dtype_name(elem) if elem and dtypes.is_known(elem) else ""


def _describe(
    node: Any,
    index: int,
    scope: str,
    tracer: ConstantTracer,
    op_version: int,
    infos: dict[str, Any],
    declared: set[str],
) -> ResizeSite:
    """One site: semantics, where its scales and sizes come from, what is wrong with them."""
    graph = tracer.graph

    def names(trace: ValueTrace) -> tuple[str, ...]:
        return tuple(graph.node[i].name or graph.node[i].output[0] for i in trace.nodes)

    attrs = attributes(node)
    given = semantics.defaults(node.op_type, op_version)
    notes: list[str] = []
    mode = _text(attrs.get("mode"), given["mode"])
    if mode == "bilinear":
        mode = "linear"
        notes.append("Upsample mode 'bilinear' reported as 'linear'")
    legacy = semantics.is_legacy(node.op_type, op_version)
    if legacy:
        ctm, nearest_mode = given["coordinate_transformation_mode"], given["nearest_mode"]
        notes.append(f"{node.op_type}-{op_version or '?'} has asymmetric coordinates and floor rounding by definition")
    else:
        ctm = _text(attrs.get("coordinate_transformation_mode"), given["coordinate_transformation_mode"])
        nearest_mode = _text(attrs.get("nearest_mode"), given["nearest_mode"])
    axes = tuple(int(a) for a in attrs["axes"]) if "axes" in attrs else None
    inputs = list(node.input) + [""] * 4
    scales_tensor = sizes_tensor = roi_tensor = ""
    scales: Optional[tuple[float, ...]] = None
    sizes: Optional[tuple[int, ...]] = None
    scales_source = sizes_source = ValueSource.ABSENT
    scales_nodes: tuple[str, ...] = ()
    sizes_nodes: tuple[str, ...] = ()
    problems: list[str] = []
    if node.op_type == "Upsample" and "scales" in attrs:
        scales = tuple(float(s) for s in attrs["scales"])
        scales_source = ValueSource.ATTRIBUTE
    else:
        slots = semantics.input_slots(node.op_type, op_version)
        scales_tensor = inputs[slots.scales] if slots.scales is not None else ""
        roi_tensor = inputs[slots.roi] if slots.roi is not None else ""
        sizes_tensor = inputs[slots.sizes] if slots.sizes is not None else ""
        trace = tracer.trace(scales_tensor)
        scales_source = trace.source
        scales_nodes = names(trace)
        problems.extend(
            semantics.input_type_problems(node.op_type, op_version, "scales", _dtype_of(scales_tensor, trace, infos))
        )
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
            problems.extend(
                semantics.input_type_problems(
                    node.op_type, op_version, "sizes", _dtype_of(sizes_tensor, size_trace, infos)
                )
            )
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
    problems.extend(scales_problems(scales, scales_source, sizes, sizes_source, sizes_tensor, rank, axes))
    # Attributes out of range (mode="bogus"...) pass the checker but no runtime loads them:
    # the same gate refuses them, so no command writes (or describes as fine) such a node.
    problems.extend(semantics.attribute_problems(node, op_version))
    return ResizeSite(
        node_name=node.name,
        node_index=index,
        op_type=node.op_type,
        opset=tracer.opset,
        input_name=node.input[0],
        output_name=node.output[0],
        mode=mode,
        coordinate_transformation_mode=ctm,
        cubic_coeff_a=float(attrs.get("cubic_coeff_a", given["cubic_coeff_a"])),
        nearest_mode=nearest_mode,
        exclude_outside=int(attrs.get("exclude_outside", given["exclude_outside"])),
        antialias=int(attrs.get("antialias", given["antialias"])),
        extrapolation_value=float(attrs.get("extrapolation_value", given["extrapolation_value"])),
        keep_aspect_ratio_policy=_text(attrs.get("keep_aspect_ratio_policy"), given["keep_aspect_ratio_policy"]),
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
        scope=scope,
    )
