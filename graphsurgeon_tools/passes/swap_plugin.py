"""Swap ONNX nodes for TensorRT plugin nodes, and back.

Built-in (spec ``DynamicTRTResize``, the ``resize`` handler)::

    Resize(X, roi, scales)            -> DynamicTRTResize(X, scales')            signature "scales"
    Resize(X, roi, scales)            -> DynamicTRTResize(X, size_tensor)        signature "size-tensor"
        size_tensor = ConstantOfShape(Concat(1..1, Slice(Floor(Cast(Shape(X)) * scales'), -2)))
    Resize(X, roi, "", sizes)         -> DynamicTRTResize(X, ConstantOfShape(Concat(1..1, sizes[-2:])))
    DynamicTRTResize(X, scales | size_tensor) -> Resize(...)                     reverse=True

``scales'`` is a graph input made by :func:`make_dynamic_scale` (called, not
duplicated), or the constant itself with ``keep_constant=True``. The size tensor is
what MMDeploy's plugin reads: only its shape's last two dims (the output H, W), with
the same element type as X (the plugin's supportsFormatCombination demands it).
The plugin node carries ``plugin_version``/``plugin_namespace`` (TensorRT's parser
looks plugins up by op_type + those two; it ignores the domain) and the Resize
semantics; the default domain ``trt.plugins`` is only there so ONNX tools accept
a non-standard op (any domain works; ``--domain`` changes it).

A size tensor carries an output size, not a scale: the plugin then resizes with
scale = out / in, which equals the original Resize only where in * scale is a whole
number. Statically known cases where it is not are skipped with that reason; for
dynamic shapes it is a note in the report.

Generic specs (``handler = "generic"``, e.g. GridSample -> grid_sampler) map inputs and
attributes as the TOML says (:mod:`graphsurgeon_tools.plugins`); they have no reverse.

Not in place: the caller's model is never modified; the result holds a new model.
Writes value_info (element type, rank, symbolic dims) for every plugin output so
shape inference continues past it, and checks the result with
``onnx.checker.check_model(full_check=True)`` (a failure is a bug: PostconditionError).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from graphsurgeon_tools.errors import OnnxToolError, PostconditionError, UsageError
from graphsurgeon_tools.plugins import PluginSpec, builtin_spec, load_spec

__all__ = ["SIGNATURES", "SwapPluginResult", "SwappedNode", "SkippedNode", "swap_plugin"]

SIGNATURES = ("scales", "size-tensor")
_DEFAULT_DOMAINS = ("", "ai.onnx")
# The Resize semantics the resize handler hands to the spec's attribute rules.
_RESIZE_SEMANTICS = ("mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "nearest_mode")
_RESIZE_DEFAULTS = {
    "mode": "nearest",
    "coordinate_transformation_mode": "half_pixel",
    "cubic_coeff_a": -0.75,
    "exclude_outside": 0,
    "nearest_mode": "round_prefer_floor",
}


@dataclass(frozen=True)
class SwappedNode:
    """One node that was rewritten."""

    node: str
    op_type_before: str
    op_type_after: str
    domain_after: str
    signature: str  # "scales" | "size-tensor" | "generic"
    inputs: tuple[str, ...]
    attributes: dict[str, Any]
    scales_before: Optional[tuple[float, ...]] = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "op_type_before": self.op_type_before,
            "op_type_after": self.op_type_after,
            "domain_after": self.domain_after,
            "signature": self.signature,
            "inputs": list(self.inputs),
            "attributes": dict(self.attributes),
            "scales_before": list(self.scales_before) if self.scales_before is not None else None,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class SkippedNode:
    """A matching node left unchanged, and why (the pattern/check/rewrite idea: check says why not)."""

    node: str
    op_type: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "op_type": self.op_type, "reason": self.reason}


@dataclass
class SwapPluginResult:
    """What :func:`swap_plugin` did. ``model`` is a new ModelProto; the input is untouched."""

    model: ModelProto
    plugin: str
    domain: str
    signature: str
    reverse: bool
    swapped: list[SwappedNode] = field(default_factory=list)
    skipped: list[SkippedNode] = field(default_factory=list)
    new_inputs: list[dict[str, Any]] = field(default_factory=list)
    removed_nodes: list[str] = field(default_factory=list)
    spec_source: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.swapped)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pass": "swap-plugin",
            "plugin": self.plugin,
            "domain": self.domain,
            "signature": self.signature,
            "reverse": self.reverse,
            "spec": self.spec_source,
            "swapped": [s.to_dict() for s in self.swapped],
            "skipped": [s.to_dict() for s in self.skipped],
            "new_inputs": list(self.new_inputs),
            "removed_nodes": list(self.removed_nodes),
        }


# --------------------------------------------------------------------------- helpers


def _attr_dict(node: NodeProto) -> dict[str, Any]:
    out = {}
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode()
        elif isinstance(value, list) and value and isinstance(value[0], bytes):
            value = [v.decode() for v in value]
        out[attr.name] = value
    return out


def _make_attr(name: str, value: Any) -> onnx.AttributeProto:
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, (np.integer,)):
        value = int(value)
    if isinstance(value, (np.floating,)):
        value = float(value)
    if isinstance(value, list) and any(isinstance(v, float) for v in value):
        value = [float(v) for v in value]
    return helper.make_attribute(name, value)


def _plugin_attributes(spec: PluginSpec, values: dict[str, Any], from_inputs: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    attrs = spec.attributes.apply(values)
    attrs.update(from_inputs or {})  # real node data beats [attributes.defaults]
    attrs["plugin_version"] = spec.plugin_version
    attrs["plugin_namespace"] = spec.plugin_namespace
    return attrs


def _matches(patterns: Optional[list[str]], name: str) -> bool:
    return patterns is None or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _elem_types_and_shapes(model: ModelProto) -> dict[str, onnx.TypeProto]:
    """Tensor name -> TypeProto, from declarations plus (weightless) shape inference."""
    from graphsurgeon_tools.passes._graph import weightless_copy

    types: dict[str, onnx.TypeProto] = {}
    try:
        inferred = onnx.shape_inference.infer_shapes(
            weightless_copy(model), check_type=False, strict_mode=False, data_prop=True
        )
        graph = inferred.graph
    except Exception:  # shape inference only refines types here; declarations still count
        graph = model.graph
    for init in model.graph.initializer:
        types[init.name] = helper.make_tensor_type_proto(init.data_type, list(init.dims))
    for info in list(graph.value_info) + list(graph.input) + list(graph.output):
        if info.type.HasField("tensor_type"):
            types[info.name] = info.type
    return types


def _set_value_info(model: ModelProto, name: str, elem_type: int, rank: Optional[int], dims: Optional[tuple] = None, prefix: str = "") -> None:
    """Replace value_info for ``name``: element type, rank, named dims (not for graph outputs)."""
    graph = model.graph
    kept = [v for v in graph.value_info if v.name != name]
    del graph.value_info[:]
    graph.value_info.extend(kept)
    if name in {o.name for o in graph.output} or not elem_type:
        return
    shape = None
    if dims is not None:
        shape = list(dims)
    elif rank is not None:
        shape = [f"{prefix or name}_d{i}" for i in range(rank)]
    graph.value_info.append(helper.make_tensor_value_info(name, elem_type, shape))


def _ensure_opset(model: ModelProto, domain: str) -> None:
    if not any(op.domain == domain for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid(domain, 1))


def _drop_unused_opset(model: ModelProto, domain: str) -> None:
    if domain in _DEFAULT_DOMAINS or any(n.domain == domain for n in model.graph.node):
        return
    kept = [op for op in model.opset_import if op.domain != domain]
    del model.opset_import[:]
    model.opset_import.extend(kept)


def _resolve_spec(spec: Union[None, str, Path, PluginSpec]) -> PluginSpec:
    if spec is None:
        return builtin_spec("DynamicTRTResize")
    if isinstance(spec, PluginSpec):
        return spec
    return load_spec(spec)


def _copy(model: ModelProto) -> ModelProto:
    copy = ModelProto()
    copy.CopyFrom(model)
    return copy


class _Builder:
    """Adds nodes/initializers with unique names; collects nodes to insert before an index."""

    def __init__(self, model: ModelProto) -> None:
        from graphsurgeon_tools.passes._graph import all_tensor_names

        self.model = model
        self.taken = all_tensor_names(model.graph)
        self.pending: list[tuple[int, list[NodeProto]]] = []

    def name(self, base: str) -> str:
        from graphsurgeon_tools.passes._graph import unique_name

        return unique_name(self.taken, base)

    def initializer(self, base: str, array: np.ndarray) -> str:
        name = self.name(base)
        self.model.graph.initializer.append(numpy_helper.from_array(array, name))
        return name

    def node(self, nodes: list[NodeProto], op_type: str, inputs: list[str], base: str, **attrs: Any) -> str:
        out = self.name(base)
        nodes.append(helper.make_node(op_type, inputs, [out], name=self.name(f"{base}/{op_type}"), **attrs))
        return out

    def insert_all(self) -> None:
        """Insert the collected nodes before their anchors (back to front, so indices stay valid)."""
        graph = self.model.graph
        for index, nodes in sorted(self.pending, key=lambda item: item[0], reverse=True):
            for offset, node in enumerate(nodes):
                graph.node.insert(index + offset, node)
        self.pending.clear()


# --------------------------------------------------------------------------- the pass


def swap_plugin(
    model: Union[ModelProto, str, Path],
    *,
    plugin: Optional[str] = None,
    signature: str = "scales",
    domain: Optional[str] = None,
    nodes: Optional[list[str]] = None,
    reverse: bool = False,
    spec: Union[None, str, Path, PluginSpec] = None,
    keep_constant: bool = False,
    size_input: Optional[str] = None,
) -> SwapPluginResult:
    """Replace matching nodes by plugin nodes (or, with ``reverse=True``, plugin nodes by Resize).

    ``spec``: a :class:`PluginSpec`, a TOML path, or None for the built-in DynamicTRTResize.
    ``plugin`` / ``domain`` override the spec's emitted op_type / domain (for reverse,
    ``plugin`` names the op_type to turn back). ``signature`` ("scales" | "size-tensor")
    applies to the resize handler. ``nodes``: exact names or glob patterns; a pattern that
    matches no candidate is a UsageError. ``keep_constant``: constant scales stay constants
    instead of becoming graph inputs. ``size_input`` (size-tensor signature only): make the
    size tensor itself a graph input of that name (``NAME_0``, ``NAME_1``... for several
    nodes), as in MMDeploy's tutorial, instead of computing it from the scales: TensorRT
    then only needs the input's dims (an execution tensor), not float scale values on its
    shape path, which TensorRT does not accept as a network input.

    Preconditions: a topologically sorted main graph. Does NOT look into subgraphs or
    functions; does NOT modify ``model``; does NOT save anything (use io.save_model).
    """
    from graphsurgeon_tools.io import load_model

    if signature not in SIGNATURES:
        raise UsageError(f"unknown signature {signature!r} (choose from: {', '.join(SIGNATURES)})")
    if size_input is not None and (signature != "size-tensor" or reverse):
        raise UsageError("--size-input needs --signature size-tensor (and no --reverse)")
    if size_input is not None and not size_input.strip():
        raise UsageError("--size-input must not be empty")
    the_spec = _resolve_spec(spec)
    op_type = plugin or the_spec.op_type
    the_domain = domain if domain is not None else the_spec.domain
    if the_domain in _DEFAULT_DOMAINS:
        raise UsageError(f"--domain {the_domain!r} is the standard ONNX domain; a plugin node needs its own")
    label = str(model) if isinstance(model, (str, Path)) else "the model"
    source = load_model(model)
    _precheck(source, label)
    work = _copy(source)
    result = SwapPluginResult(
        model=work,
        plugin=op_type,
        domain=the_domain,
        signature=signature if the_spec.handler == "resize" else "generic",
        reverse=reverse,
        spec_source=the_spec.source,
    )
    if reverse:
        if the_spec.handler != "resize":
            raise UsageError(f"--reverse only exists for the resize handler; spec {the_spec.source} is generic")
        _reverse(work, the_spec, op_type, nodes, result, label)
    elif the_spec.handler == "resize":
        result.model = work = _forward_resize(
            work, the_spec, op_type, the_domain, signature, nodes, keep_constant, result, label, size_input
        )
    else:
        _forward_generic(work, the_spec, op_type, the_domain, nodes, result, label)
    if result.swapped:
        _postcheck(result.model, op_type)
    return result


def _precheck(model: ModelProto, label: str) -> None:
    """The input must pass the full checker: a broken input is the user's problem (exit 3), not ours."""
    from graphsurgeon_tools.errors import PreconditionError, UnsupportedModelError
    from graphsurgeon_tools.passes._graph import check_model_full, default_opset

    opset = default_opset(model)
    if opset > onnx.defs.onnx_opset_version():
        raise UnsupportedModelError(f"{label}: default-domain opset {opset} is newer than this onnx ({onnx.defs.onnx_opset_version()}) knows")
    try:
        check_model_full(model)
    except Exception as exc:
        raise PreconditionError(f"{label} fails the ONNX checker: {' '.join(str(exc).split())[:300]}") from None
    _check_initializer_sizes(model, label)


# 4-bit and string tensors do not pack one element per itemsize: not checked here.
_UNSIZED_TYPES = {TensorProto.STRING, TensorProto.UNDEFINED, 21, 22, 23}


def _check_initializer_sizes(model: ModelProto, label: str) -> None:
    """Inline initializers whose bytes do not fill their shape (the checker lets that through)."""
    from graphsurgeon_tools.errors import InvalidModelError

    for init in model.graph.initializer:
        if init.data_location == TensorProto.EXTERNAL or not init.HasField("raw_data") or init.data_type in _UNSIZED_TYPES:
            continue
        try:
            itemsize = np.dtype(helper.tensor_dtype_to_np_dtype(init.data_type)).itemsize
        except Exception:  # an element type numpy has no dtype for: nothing to compare
            continue
        needed = int(np.prod(list(init.dims), dtype=np.int64)) * itemsize
        if len(init.raw_data) != needed:
            raise InvalidModelError(
                f"{label}: initializer {init.name!r} holds {len(init.raw_data)} bytes, but its shape "
                f"{list(init.dims)} needs {needed}"
            )


def _validate_site(model: ModelProto, site: Any, label: str) -> None:
    """Nonsense scales/sizes are the user's error (exit 3), whatever the pass would do with the node."""
    from graphsurgeon_tools.errors import InvalidScalesError
    from graphsurgeon_tools.resize import ValueSource, trace_value

    where = f"{label}: node {site.node_name or site.output_name!r}"
    problems = getattr(site, "problems", None)
    if problems is not None:  # find_resize_sites judges the scales/sizes: one set of rules for every pass
        if problems:
            raise InvalidScalesError(f"{where}: {problems[0]}")
        return
    # An older ResizeSite without `problems`: the same rules, checked here.
    try:
        from graphsurgeon_tools.resize import MAX_SCALE  # type: ignore[attr-defined]
    except ImportError:
        MAX_SCALE = 1.0e4
    has_scales = site.scales_source != ValueSource.ABSENT
    has_sizes = site.sizes_source != ValueSource.ABSENT
    if has_scales and has_sizes:
        raise InvalidScalesError(f"{where}: both scales and sizes are set; Resize takes exactly one of them")
    if not has_scales and not has_sizes:
        raise InvalidScalesError(f"{where}: neither scales nor sizes are set")
    expected = len(site.axes) if site.axes is not None else site.input_rank
    if site.scales is not None and site.has_constant_scales:
        if site.scales_tensor:
            value = trace_value(model, site.scales_tensor).value
            if value is not None and np.asarray(value).ndim != 1:
                raise InvalidScalesError(f"{where}: scales must be a 1-D tensor, got shape {list(np.shape(value))}")
        for scale in site.scales:
            if not np.isfinite(scale) or scale <= 0:
                raise InvalidScalesError(f"{where}: scales {list(site.scales)} contain {scale}, not a positive finite number")
            if scale > MAX_SCALE:
                raise InvalidScalesError(f"{where}: scale {scale} in {list(site.scales)} is absurdly large (> {MAX_SCALE:g})")
        if expected is not None and len(site.scales) != expected:
            raise InvalidScalesError(f"{where}: scales {list(site.scales)} have {len(site.scales)} entries, expected {expected}")
    if site.sizes is not None:
        if any(size <= 0 for size in site.sizes):
            raise InvalidScalesError(f"{where}: sizes {list(site.sizes)} must all be positive")
        if expected is not None and len(site.sizes) != expected:
            raise InvalidScalesError(f"{where}: sizes {list(site.sizes)} have {len(site.sizes)} entries, expected {expected}")


def _postcheck(model: ModelProto, op_type: str) -> None:
    from graphsurgeon_tools.passes._graph import check_model_full

    try:
        check_model_full(model)
    except Exception as exc:
        raise PostconditionError(f"swap-plugin ({op_type}) produced a model the ONNX checker rejects: {exc}") from exc


def _check_patterns(nodes: Optional[list[str]], names: list[str], what: str, label: str) -> None:
    for pattern in nodes or []:
        if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
            shown = ", ".join(repr(n) for n in names[:8]) or "none"
            raise UsageError(f"--nodes {pattern!r} matches no {what} node in {label} (candidates: {shown})")


_PLUGIN_CTMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric")


def _resize_refusal(site: Any, signature: str) -> Optional[str]:
    """Why a Resize site cannot become a DynamicTRTResize node (None: it can)."""
    if site.antialias:
        return "antialias=1: DynamicTRTResize has no antialias field"
    if site.axes is not None:
        return "the axes attribute is not supported (scales must cover every axis)"
    if site.keep_aspect_ratio_policy != "stretch":
        return f"keep_aspect_ratio_policy={site.keep_aspect_ratio_policy!r} is not supported"
    if site.coordinate_transformation_mode == "tf_crop_and_resize":
        return "tf_crop_and_resize needs roi and extrapolation_value, which the plugin does not take"
    if site.coordinate_transformation_mode not in _PLUGIN_CTMS:
        return (
            f"coordinate_transformation_mode={site.coordinate_transformation_mode!r} (dropped from ONNX in "
            "opset 13) has no kernel behind the plugin"
        )
    legacy = site.op_type == "Upsample" or getattr(site, "op_version", 11) == 10
    if legacy and site.mode == "nearest" and site.scales is not None and any(s < 1 for s in site.scales):
        return f"{site.op_type}-10/Upsample nearest downsampling rounds up, which no Resize-11+ nearest_mode reproduces"
    rank = site.input_rank
    if signature == "size-tensor":
        if site.opset < 9:
            return f"the size-tensor signature needs ConstantOfShape (opset >= 9); the model imports opset {site.opset}"
        if rank is not None and rank != 4:
            # MMDeploy's plugin: getOutputDimensions builds 4 dims from (in0.d0, in0.d1, in1.d2, in1.d3)
            return f"the size-tensor signature is 4-D only (N, C, H, W), this input has rank {rank}"
        if site.scales is not None and any(float(s) != 1.0 for s in site.scales[:-2]):
            return "the size-tensor signature resizes only the last two axes; this node scales others"
        shape = site.input_shape
        if site.scales is not None:
            dims = list(shape[-2:]) if shape is not None and len(shape) >= 2 else [None, None]
            for dim, scale in zip(dims, site.scales[-2:]):
                if isinstance(dim, int) and dim > 0:
                    if (np.float32(dim) * np.float32(scale)) % 1 != 0:
                        return (
                            f"input size {dim} x scale {scale} is not a whole number: a size tensor carries only "
                            "the output size, so the plugin would resize with scale out/in instead"
                        )
                elif float(scale) % 1 != 0:
                    # unknown size: exact for some sizes only, and nothing at run time would say so
                    return (
                        f"scale {scale} on an input dim of unknown size: in x scale is whole only for some "
                        "sizes, and a size tensor carries only the output size; use --signature scales"
                    )
        if site.sizes is not None:
            leading = list(shape[:-2]) if shape is not None else [None] * (len(site.sizes) - 2)
            for axis, (dim, size) in enumerate(zip(leading, site.sizes[:-2])):
                if dim != size:
                    known = f"{dim}" if isinstance(dim, int) else "of unknown size"
                    return (
                        f"sizes fix axis {axis} to {size} while the input's is {known}; the size-tensor "
                        "signature resizes only the last two axes"
                    )
    return None


def _forward_resize(
    model: ModelProto,
    spec: PluginSpec,
    op_type: str,
    domain: str,
    signature: str,
    nodes: Optional[list[str]],
    keep_constant: bool,
    result: SwapPluginResult,
    label: str,
    size_input: Optional[str] = None,
) -> ModelProto:
    from graphsurgeon_tools.resize import ValueSource, find_resize_sites

    sites = [s for s in find_resize_sites(model) if s.op_type in spec.match.op_types]
    _check_patterns(nodes, [n for s in sites for n in (s.node_name, s.output_name) if n], "/".join(spec.match.op_types), label)
    chosen = []
    for site in sites:
        if not (_matches(nodes, site.node_name) or _matches(nodes, site.output_name)):
            continue
        if not _name_matches(spec, site.node_name):
            continue
        _validate_site(model, site, label)
        if not _attribute_conditions_hold(spec, _site_semantics(site)):
            result.skipped.append(SkippedNode(site.node_name or site.output_name, site.op_type, "the spec's [match.attributes] conditions do not hold"))
            continue
        refusal = _resize_refusal(site, signature)
        if refusal is None and site.scales_source == ValueSource.ABSENT and site.sizes_source == ValueSource.ABSENT:
            refusal = "neither scales nor sizes are given"
        if refusal is None and signature == "scales" and site.scales_source == ValueSource.ABSENT and (
            keep_constant or site.sizes is None
        ):
            refusal = "driven by sizes, not scales: use --signature size-tensor (or make-dynamic-scale --from-sizes first)"
        if refusal:
            result.skipped.append(SkippedNode(site.node_name or site.output_name, site.op_type, refusal))
        else:
            chosen.append(site)
    if not chosen:
        return model

    # Keyed by output name: unique and kept by make_dynamic_scale (node names may be empty).
    before = {s.output_name: s for s in chosen}
    dynamic = (ValueSource.GRAPH_INPUT, ValueSource.RUNTIME)
    to_dynamic = [
        s for s in chosen
        if not keep_constant and size_input is None and s.scales_source not in dynamic
        and (s.scales_source != ValueSource.ABSENT or signature == "scales")
    ]
    if to_dynamic:
        try:
            model = _make_dynamic(model, to_dynamic, result)
        except OnnxToolError as exc:  # its messages name the node; ours also name the file
            message = str(exc) if label in str(exc) else f"{label}: {exc}"
            raise type(exc)(message) from None
        sites_now = {s.output_name: s for s in find_resize_sites(model)}
        for old in to_dynamic:
            site = sites_now.get(old.output_name)
            if site is None or site.scales_source not in dynamic:
                # make_dynamic_scale refused it; its skip reason is already in the result
                chosen = [s for s in chosen if s.output_name != old.output_name]
        chosen = [sites_now[s.output_name] for s in chosen if s.output_name in sites_now]

    types = _elem_types_and_shapes(model)
    builder = _Builder(model)
    graph = model.graph
    index_of = {node.output[0]: i for i, node in enumerate(graph.node) if node.output}
    replaced_inputs: list[str] = []
    for site in chosen:
        position = index_of[site.output_name]
        node = graph.node[position]
        notes: list[str] = []
        extra: list[NodeProto] = []
        x_type = types.get(site.input_name)
        elem = x_type.tensor_type.elem_type if x_type is not None else TensorProto.FLOAT
        rank = site.input_rank or (len(site.scales) if site.scales else None)
        base = site.node_name or site.output_name
        scales_name = site.scales_tensor
        if site.scales_source == ValueSource.ATTRIBUTE:
            # Upsample-7 with keep_constant: its attribute becomes an initializer the plugin can read
            scales_name = builder.initializer(f"{base}_scales", np.array(site.scales, dtype=np.float32))
        if signature == "scales":
            second = scales_name
        else:
            if rank is None:
                result.skipped.append(SkippedNode(site.node_name or site.output_name, site.op_type, "the input's rank is unknown; the size tensor needs it"))
                continue
            if size_input is not None:
                second = _size_tensor_input(model, builder, site, size_input, len(chosen), rank, elem, result)
            elif site.scales_source != ValueSource.ABSENT:
                second = _size_tensor_from_scales(builder, extra, base, site.input_name, scales_name, rank, elem)
                if site.input_shape is None or any(not isinstance(d, int) for d in site.input_shape[-2:]) or site.scales is None:
                    notes.append("size tensor from dynamic shapes/scales: equals Resize only where in*scale is whole")
            else:
                second = _size_tensor_from_sizes(builder, extra, base, site.sizes_tensor, rank, elem)
                if site.sizes is None:
                    notes.append("dynamic sizes: only their last two entries are used")
        legacy = site.op_type == "Upsample" or getattr(site, "op_version", 11) == 10
        if legacy and site.mode == "nearest" and not site.has_constant_scales:
            notes.append(f"{site.op_type} nearest rounds up when downsampling; the plugin floors (same result for factors >= 1)")
        values = _site_semantics(site)
        attrs = _plugin_attributes(spec, values)
        new = helper.make_node(op_type, [site.input_name, second], [site.output_name], name=node.name, domain=domain)
        new.attribute.extend(_make_attr(k, v) for k, v in attrs.items())
        replaced_inputs.extend(i for i in list(node.input)[1:] if i and i != second)
        graph.node[position].CopyFrom(new)
        if extra:
            builder.pending.append((position, extra))
        _set_value_info(model, site.output_name, elem, rank)
        orig = before.get(site.output_name, site)
        result.swapped.append(
            SwappedNode(
                node=site.node_name or site.output_name,
                op_type_before=site.op_type,
                op_type_after=op_type,
                domain_after=domain,
                signature=signature,
                inputs=(site.input_name, second),
                attributes=attrs,
                scales_before=orig.scales if orig.has_constant_scales else None,
                notes=tuple(notes) + tuple(site.notes),
            )
        )
    builder.insert_all()
    if result.swapped:
        from graphsurgeon_tools.passes._graph import remove_unused

        _ensure_opset(model, domain)
        result.removed_nodes.extend(remove_unused(graph, replaced_inputs))
    return model


def _site_semantics(site: Any) -> dict[str, Any]:
    return {
        "mode": site.mode,
        "coordinate_transformation_mode": site.coordinate_transformation_mode,
        "cubic_coeff_a": float(site.cubic_coeff_a),
        "exclude_outside": int(site.exclude_outside),
        "nearest_mode": site.nearest_mode,
        "antialias": int(site.antialias),
        "extrapolation_value": float(site.extrapolation_value),
        "keep_aspect_ratio_policy": site.keep_aspect_ratio_policy,
    }


def _name_matches(spec: PluginSpec, name: str) -> bool:
    return not spec.match.name_patterns or any(fnmatch.fnmatchcase(name, p) for p in spec.match.name_patterns)


def _attribute_conditions_hold(spec: PluginSpec, attrs: dict[str, Any]) -> bool:
    for name, allowed in spec.match.attributes.items():
        if attrs.get(name) not in allowed:
            return False
    return True


def _make_dynamic(model: ModelProto, sites: list[Any], result: SwapPluginResult) -> ModelProto:
    """Constant scales -> graph inputs via make_dynamic_scale (the one implementation of that).

    Its ORT self-check is off (check=False): swap-plugin's own tests and ``onnxtool validate``
    prove the end result; running ORT twice per swap would double the cost on big models.
    Sizes-driven sites are converted only when exact (from_sizes=True).
    """
    from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale

    selection = [s.output_name for s in sites]
    dyn = make_dynamic_scale(model, nodes=selection, from_sizes=True, check=False, inplace=True)
    report = dyn.to_dict()
    result.new_inputs.extend(report.get("new_inputs", []))
    for item in report.get("skipped", []):
        result.skipped.append(
            SkippedNode(item.get("node", ""), item.get("op_type", "Resize"), f"make-dynamic-scale: {item.get('reason', '')}")
        )
    return dyn.model


def _size_tensor_from_scales(builder: _Builder, nodes: list[NodeProto], base: str, x: str, scales: str, rank: int, elem: int) -> str:
    # Output dims exactly as ONNX Runtime's Resize computes them: float32(in) * scale, truncated.
    shape = builder.node(nodes, "Shape", [x], f"{base}/size_tensor/in_shape")
    shape_f = builder.node(nodes, "Cast", [shape], f"{base}/size_tensor/in_shape_f", to=TensorProto.FLOAT)
    scales_f = scales
    out_f = builder.node(nodes, "Mul", [shape_f, scales_f], f"{base}/size_tensor/out_f")
    floor = builder.node(nodes, "Floor", [out_f], f"{base}/size_tensor/out_floor")
    out_i = builder.node(nodes, "Cast", [floor], f"{base}/size_tensor/out_shape", to=TensorProto.INT64)
    return _finish_size_tensor(builder, nodes, base, out_i, rank, elem)


def _size_tensor_input(model: ModelProto, builder: _Builder, site: Any, base: str, count: int, rank: int, elem: int,
                       result: SwapPluginResult) -> str:
    """A new graph input whose last two dims are the output H, W (MMDeploy's tutorial layout)."""
    name = builder.name(base if count == 1 else f"{base}_{len(result.new_inputs)}")
    dims: list[Any] = [1] * (rank - 2) + [f"{name}_height", f"{name}_width"]
    model.graph.input.append(helper.make_tensor_value_info(name, elem, dims))
    at_original: Optional[list[int]] = None
    shape, scales = site.input_shape, site.scales
    if shape is not None and scales is not None and all(isinstance(d, int) for d in shape[-2:]):
        at_original = [1] * (rank - 2) + [int(np.floor(np.float32(d) * np.float32(f))) for d, f in zip(shape[-2:], scales[-2:])]
    elif site.sizes is not None:
        at_original = [1] * (rank - 2) + [int(v) for v in site.sizes[-2:]]
    result.new_inputs.append({
        "name": name,
        "dtype": helper.tensor_dtype_to_np_dtype(elem).name,
        "shape": dims,
        "value": None,  # only the shape is read
        "shape_at_original_factor": at_original,
    })
    return name


def _size_tensor_from_sizes(builder: _Builder, nodes: list[NodeProto], base: str, sizes: str, rank: int, elem: int) -> str:
    return _finish_size_tensor(builder, nodes, base, sizes, rank, elem)


def _finish_size_tensor(builder: _Builder, nodes: list[NodeProto], base: str, full_shape: str, rank: int, elem: int) -> str:
    from graphsurgeon_tools.passes._graph import default_opset

    if default_opset(builder.model) >= 10:
        starts = builder.initializer(f"{base}/size_tensor/starts", np.array([-2], dtype=np.int64))
        ends = builder.initializer(f"{base}/size_tensor/ends", np.array([np.iinfo(np.int64).max], dtype=np.int64))
        hw = builder.node(nodes, "Slice", [full_shape, starts, ends], f"{base}/size_tensor/hw")
    else:  # Slice-1: starts/ends are attributes
        big = int(np.iinfo(np.int64).max)
        hw = builder.node(nodes, "Slice", [full_shape], f"{base}/size_tensor/hw", starts=[-2], ends=[big], axes=[0])
    ones = builder.initializer(f"{base}/size_tensor/ones", np.ones(rank - 2, dtype=np.int64))
    dims = builder.node(nodes, "Concat", [ones, hw], f"{base}/size_tensor/dims", axis=0)
    zero = numpy_helper.from_array(np.zeros(1, dtype=helper.tensor_dtype_to_np_dtype(elem)), "value")
    return builder.node(nodes, "ConstantOfShape", [dims], f"{base}/size_tensor", value=zero)


# --------------------------------------------------------------------------- reverse


def _trace_size_tensor(model: ModelProto, name: str) -> tuple[Optional[str], Optional[str]]:
    """Recognise our own size-tensor subgraph: -> (scales tensor, None) or (None, sizes tensor)."""
    from graphsurgeon_tools.passes._graph import producers

    graph = model.graph
    prod = producers(graph)

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


def _reverse(model: ModelProto, spec: PluginSpec, op_type: str, nodes: Optional[list[str]], result: SwapPluginResult, label: str) -> None:
    from graphsurgeon_tools.passes._graph import default_opset, remove_unused

    graph = model.graph
    candidates = [n for n in graph.node if n.op_type == op_type and n.domain not in _DEFAULT_DOMAINS]
    _check_patterns(nodes, [n for c in candidates for n in (c.name, c.output[0]) if n], op_type, label)
    opset = default_opset(model)
    if opset < 9:
        raise UsageError(f"--reverse needs opset >= 9 (Upsample with a scales input); {label} imports opset {opset}")
    types = _elem_types_and_shapes(model)
    builder = _Builder(model)
    inverse = {new: old for old, new in spec.attributes.rename.items()}
    domains = set()
    dropped: list[str] = []
    for position, node in enumerate(list(graph.node)):
        if node.op_type != op_type or node.domain in _DEFAULT_DOMAINS:
            continue
        if not (_matches(nodes, node.name) or _matches(nodes, node.output[0] if node.output else "")):
            continue
        plugin_domain = node.domain  # `node` is rewritten in place below
        if len(node.input) != 2 or len(node.output) != 1:
            result.skipped.append(SkippedNode(node.name or node.output[0], node.op_type, f"expected 2 inputs and 1 output, got {len(node.input)} and {len(node.output)}"))
            continue
        x, second = node.input
        attrs = {inverse.get(k, k): v for k, v in _attr_dict(node).items()}
        semantics = {k: attrs.get(k, _RESIZE_DEFAULTS[k]) for k in _RESIZE_SEMANTICS}
        second_type = types.get(second)
        second_rank = (
            len(second_type.tensor_type.shape.dim)
            if second_type is not None and second_type.tensor_type.HasField("shape") else None
        )
        scales, sizes = (second, None) if second_rank == 1 else _trace_size_tensor(model, second)
        extra: list[NodeProto] = []
        base = node.name or node.output[0]
        if scales is None and sizes is None:
            if second_rank is None:
                result.skipped.append(SkippedNode(node.name or node.output[0], node.op_type, f"cannot tell whether {second!r} is scales or a size tensor (no shape information)"))
                continue
            # an outside size tensor (e.g. a graph input, as in MMDeploy's tutorial): sizes = X.shape[:-2] ++ size.shape[-2:]
            if opset < 11:
                result.skipped.append(SkippedNode(node.name or node.output[0], node.op_type, f"a sizes-driven Resize needs opset >= 11; the model imports {opset}"))
                continue
            if opset >= 15:
                x_shape = builder.node(extra, "Shape", [x], f"{base}/sizes/x_shape", end=-2)
                s_shape = builder.node(extra, "Shape", [second], f"{base}/sizes/size_shape", start=-2)
            else:  # Shape has no start/end before opset 15: slice its output instead
                x_full = builder.node(extra, "Shape", [x], f"{base}/sizes/x_full_shape")
                s_full = builder.node(extra, "Shape", [second], f"{base}/sizes/size_full_shape")
                zero = builder.initializer(f"{base}/sizes/zero", np.array([0], dtype=np.int64))
                minus2 = builder.initializer(f"{base}/sizes/minus2", np.array([-2], dtype=np.int64))
                end = builder.initializer(f"{base}/sizes/end", np.array([np.iinfo(np.int64).max], dtype=np.int64))
                x_shape = builder.node(extra, "Slice", [x_full, zero, minus2], f"{base}/sizes/x_shape")
                s_shape = builder.node(extra, "Slice", [s_full, minus2, end], f"{base}/sizes/size_shape")
            sizes = builder.node(extra, "Concat", [x_shape, s_shape], f"{base}/sizes", axis=0)
        if sizes is not None and opset < 11:
            result.skipped.append(SkippedNode(node.name or node.output[0], node.op_type, f"a sizes-driven Resize needs opset >= 11; the model imports {opset}"))
            continue
        if opset >= 13:
            inputs = [x, "", scales or "", sizes or ""]
        elif opset >= 11:
            roi = builder.initializer(f"{base}/roi", np.zeros(0, dtype=np.float32))
            empty = builder.initializer(f"{base}/empty_scales", np.zeros(0, dtype=np.float32)) if sizes else ""
            inputs = [x, roi, scales or empty, sizes or ""]
        else:
            inputs = [x, scales]
        while inputs and inputs[-1] == "":
            inputs.pop()
        resize_op = "Upsample" if opset < 10 else "Resize"
        keep = _RESIZE_SEMANTICS if opset >= 11 else ("mode",)
        new_attrs = {k: semantics[k] for k in keep}
        if opset >= 11 and new_attrs["mode"] != "cubic":
            # cubic-only attributes on a non-cubic Resize are legal but noise
            new_attrs.pop("cubic_coeff_a")
        new = helper.make_node(resize_op, inputs, [node.output[0]], name=node.name)
        new.attribute.extend(_make_attr(k, v) for k, v in new_attrs.items())
        graph.node[position].CopyFrom(new)
        if extra:
            builder.pending.append((position, extra))
        domains.add(plugin_domain)
        if second not in inputs:
            dropped.append(second)
        result.swapped.append(
            SwappedNode(
                node=node.name,
                op_type_before=op_type,
                op_type_after=resize_op,
                domain_after="",
                signature="size-tensor" if sizes is not None else "scales",
                inputs=tuple(inputs),
                attributes=new_attrs,
            )
        )
    builder.insert_all()
    if result.swapped:
        result.removed_nodes.extend(remove_unused(graph, dropped))
        for domain in domains:
            _drop_unused_opset(model, domain)


# --------------------------------------------------------------------------- generic specs


def _forward_generic(
    model: ModelProto,
    spec: PluginSpec,
    op_type: str,
    domain: str,
    nodes: Optional[list[str]],
    result: SwapPluginResult,
    label: str,
) -> None:
    from graphsurgeon_tools.passes._graph import default_opset, remove_unused
    from graphsurgeon_tools.resize import trace_value

    graph = model.graph
    opset = default_opset(model)
    candidates = [n for n in graph.node if n.op_type in spec.match.op_types and n.domain in _DEFAULT_DOMAINS]
    _check_patterns(nodes, [n for c in candidates for n in (c.name, c.output[0]) if n], "/".join(spec.match.op_types), label)
    types = _elem_types_and_shapes(model)
    builder = _Builder(model)
    added_inputs = {i.name for i in graph.input}
    dropped: list[str] = []
    for position, node in enumerate(list(graph.node)):
        if node.op_type not in spec.match.op_types or node.domain not in _DEFAULT_DOMAINS:
            continue
        if not (_matches(nodes, node.name) or _matches(nodes, node.output[0] if node.output else "")):
            continue
        if not _name_matches(spec, node.name):
            continue
        original = NodeProto()
        original.CopyFrom(node)  # `node` is rewritten in place below
        node = original
        try:
            schema = onnx.defs.get_schema(node.op_type, opset, "")
        except Exception:
            result.skipped.append(SkippedNode(node.name or node.output[0], node.op_type, f"no ONNX schema for {node.op_type} at opset {opset}"))
            continue
        attrs = _attr_dict(node)
        if spec.attributes.schema_defaults:
            for name, attr in schema.attributes.items():
                if name not in attrs and attr.default_value is not None and attr.default_value.type:
                    value = helper.get_attribute_value(attr.default_value)
                    attrs[name] = value.decode() if isinstance(value, bytes) else value
        if not _attribute_conditions_hold(spec, attrs):
            result.skipped.append(SkippedNode(node.name or node.output[0], node.op_type, "the spec's [match.attributes] conditions do not hold"))
            continue
        slot_names = [formal.name for formal in schema.inputs]
        try:
            resolve = _slot_resolver(node, slot_names, spec.source)
            from_inputs = {}
            for ref, attr_name in spec.input_attributes.items():
                tensor = resolve(ref)
                if not tensor:
                    continue  # an absent optional input: the plugin's default applies
                trace = trace_value(model, tensor)
                if trace.value is None or trace.source.value in ("graph_input", "runtime"):
                    raise _Skip(f"input {ref!r} ({tensor}) must be constant to become attribute {attr_name!r}")
                flat = np.asarray(trace.value).reshape(-1)
                value = flat.tolist()
                from_inputs[attr_name] = value[0] if flat.size == 1 else value
            if spec.inputs is not None:
                order = list(spec.inputs)
            else:  # every original input except those turned into attributes
                moved = {ref if isinstance(ref, int) else slot_names.index(ref) for ref in spec.input_attributes if isinstance(ref, int) or ref in slot_names}
                order = [i for i in range(len(node.input)) if i not in moved]
            inputs = [resolve(ref) for ref in order]
        except _Skip as skip:
            result.skipped.append(SkippedNode(node.name or node.output[0], node.op_type, str(skip)))
            continue
        try:
            plugin_attrs = _plugin_attributes(spec, attrs, from_inputs)
        except Exception as exc:
            result.skipped.append(SkippedNode(node.name or node.output[0], node.op_type, str(exc)))
            continue
        base = node.name or node.output[0]
        for extra in spec.extra_inputs:
            np_dtype = helper.tensor_dtype_to_np_dtype(_onnx_dtype(extra.dtype))
            if extra.kind == "constant":
                array = np.array(extra.value, dtype=np_dtype)
                if extra.shape is not None:
                    array = array.reshape(extra.shape)
                elif array.size == 1:
                    array = array.reshape(())
                inputs.append(builder.initializer(f"{base}_{extra.name}", array))
            else:
                if extra.name not in added_inputs:
                    graph.input.append(helper.make_tensor_value_info(extra.name, _onnx_dtype(extra.dtype), list(extra.shape) if extra.shape else None))
                    added_inputs.add(extra.name)
                    result.new_inputs.append({"name": extra.name, "dtype": extra.dtype, "shape": list(extra.shape) if extra.shape else None})
                inputs.append(extra.name)
        while inputs and inputs[-1] == "":
            inputs.pop()
        new = helper.make_node(op_type, inputs, list(node.output), name=node.name, domain=domain)
        new.attribute.extend(_make_attr(k, v) for k, v in plugin_attrs.items())
        dropped.extend(i for i in node.input if i and i not in inputs)
        graph.node[position].CopyFrom(new)
        for index, output in enumerate(node.output):
            if not output:
                continue
            rule = spec.outputs[index] if index < len(spec.outputs) else None
            if rule is None:
                continue
            if rule.same_as_input is not None:
                source = node.input[rule.same_as_input] if rule.same_as_input < len(node.input) else ""
                t = types.get(source)
                elem = t.tensor_type.elem_type if t is not None else 0
                rank = rule.rank if rule.rank is not None else (
                    len(t.tensor_type.shape.dim) if t is not None and t.tensor_type.HasField("shape") else None
                )
            else:
                elem, rank = _onnx_dtype(rule.dtype or "float32"), rule.rank
            _set_value_info(model, output, elem, rank, rule.shape, prefix=f"{base}_out{index}")
        result.swapped.append(
            SwappedNode(
                node=node.name or node.output[0],
                op_type_before=node.op_type,
                op_type_after=op_type,
                domain_after=domain,
                signature="generic",
                inputs=tuple(inputs),
                attributes=plugin_attrs,
            )
        )
    builder.insert_all()
    if result.swapped:
        _ensure_opset(model, domain)
        result.removed_nodes.extend(remove_unused(graph, dropped))


class _Skip(Exception):
    pass


def _slot_resolver(node: NodeProto, slot_names: list[str], source: str) -> Any:
    def resolve(ref: Union[int, str]) -> str:
        if isinstance(ref, str):
            if ref not in slot_names:
                raise _Skip(f"{node.op_type} has no input named {ref!r} (inputs: {', '.join(slot_names)}); see {source}")
            index = slot_names.index(ref)
        else:
            index = ref
        return node.input[index] if index < len(node.input) else ""

    return resolve


def _onnx_dtype(name: str) -> int:
    return {
        "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
        "float64": TensorProto.DOUBLE, "int8": TensorProto.INT8, "int16": TensorProto.INT16,
        "int32": TensorProto.INT32, "int64": TensorProto.INT64, "uint8": TensorProto.UINT8,
        "uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64,
        "bool": TensorProto.BOOL,
    }[name]
