"""What ``validate`` compares against, and how a model is fed one scale factor.

Two halves:

* **Ports** (:func:`model_ports`): which graph inputs of an ONNX model carry data
  and which drive the scales of a Resize / Upsample / ``DynamicTRTResize`` node,
  how each must be fed for an upscale factor ``f`` (a full scales vector
  ``[1, 1, f, f]``, a factor pair ``[f, f]``, a single factor, a ``sizes``
  vector, or a size tensor whose *shape* is the output size), and the factor a
  static model has baked in.
* **References** (:func:`make_reference`): an ONNX model (static: only its
  baked factor; dynamic: every factor), ``torch:srcnn`` (the built-in SRCNN
  that resizes with our C++ op, shipped weights), ``python:MODULE:CALLABLE``
  (a user's ``nn.Module``), and ``onnx-reference`` (``onnx.reference``'s
  evaluator run on the candidate itself, plugin nodes included).

The calling convention for PyTorch references (``torch:srcnn``,
``python:MODULE:CALLABLE`` and any ``nn.Module`` passed to the API):
``CALLABLE()`` takes no arguments and returns an ``nn.Module`` (or any
callable). It is called under ``torch.no_grad()`` as
``module(*data_inputs, scales)`` where ``data_inputs`` are float tensors in the
candidate's graph-input order and ``scales`` is a float32 tensor with one entry
per axis of the first data input (``[1, 1, f, f]`` for NCHW), the same values
ONNX Resize takes. A module whose ``forward`` accepts no extra argument is
called without ``scales``: it is then a fixed-factor model, and factors it does
not implement show up as shape mismatches. It returns a tensor or a
tuple/list of tensors, matched to the candidate's outputs by position.

Nothing here writes files or prints. torch is imported only inside the PyTorch
references.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import numpy_helper

from graphsurgeon_tools.errors import InvalidModelError, OnnxToolError

PLUGIN_OP_TYPE = "DynamicTRTResize"
RESIZE_OP_TYPES = ("Resize", "Upsample", PLUGIN_OP_TYPE)

# A sweep point: a float factor, or None for "whatever scales the model has baked in".
Factor = Optional[float]


# --------------------------------------------------------------------------------------
# Ports: data inputs, scale inputs, baked factor
# --------------------------------------------------------------------------------------


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
        if self.layout == "pair":
            return np.full((self.length or 2,), factor, dtype=self.dtype)
        if self.layout == "factor":
            return np.asarray(factor if self.length is None else [factor], dtype=self.dtype)
        out = [int(d) for d in x_shape[:-spatial]] + [
            int(math.floor(int(d) * factor)) for d in x_shape[-spatial:]
        ]
        if self.layout == "sizes":
            return np.asarray(out[-(self.length or len(out)) :], dtype=self.dtype)
        return np.zeros(self._size_tensor_shape(out), dtype=self.dtype)  # only its shape is read

    def _size_tensor_shape(self, out: list[int]) -> list[int]:
        # The spatial dims carry the output size; the others may be pinned by the model
        # (MMDeploy's size tensor is N x 1 x H x W): honour those.
        if len(self.shape) != len(out):
            return out
        spatial = max(len(out) - 2, 1)
        return [declared if isinstance(declared, int) and axis < len(out) - spatial else value
                for axis, (declared, value) in enumerate(zip(self.shape, out))]

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

    @property
    def is_dynamic(self) -> bool:
        return bool(self.scale_inputs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "data_inputs": [d.to_dict() for d in self.data_inputs],
            "scale_inputs": [s.to_dict() for s in self.scale_inputs],
            "outputs": list(self.outputs),
            "dynamic": self.is_dynamic,
            "baked_factor": self.baked_factor,
            "baked_note": self.baked_note,
        }


_NP_DTYPES = {
    onnx.TensorProto.FLOAT: np.float32,
    onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.FLOAT16: np.float16,
    onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.UINT8: np.uint8,
    onnx.TensorProto.BOOL: np.bool_,
}


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
    if elem not in _NP_DTYPES:
        raise InvalidModelError(
            f"input {info.name!r} of {where} has element type "
            f"{onnx.TensorProto.DataType.Name(elem) if elem else 'UNDEFINED'}, which validate cannot feed"
        )
    return np.dtype(_NP_DTYPES[elem])


def default_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return 0


def _scale_slots(node: onnx.NodeProto, opset: int) -> list[tuple[int, str]]:
    """(input index, "scales" | "sizes") of the inputs that decide a resize node's output size."""
    if node.op_type == "Resize":
        if opset and opset < 11:
            return [(1, "scales")]
        return [(2, "scales"), (3, "sizes")]
    if node.op_type == "Upsample":
        return [(1, "scales")]
    if node.op_type == PLUGIN_OP_TYPE:
        return [(1, "scales")]
    return []


def _is_resize(node: onnx.NodeProto) -> bool:
    # Resize/Upsample in the default domain; the plugin in whatever domain the spec picked.
    if node.op_type == PLUGIN_OP_TYPE:
        return True
    return node.op_type in ("Resize", "Upsample") and node.domain in ("", "ai.onnx")


def _constant_value(model: onnx.ModelProto, name: str) -> Optional[np.ndarray]:
    """Value of an initializer, a Constant node or an Identity chain of one; else None."""
    inits = {t.name: t for t in model.graph.initializer}
    producers = {out: node for node in model.graph.node for out in node.output}
    for _ in range(16):
        if name in inits:
            return numpy_helper.to_array(inits[name])
        node = producers.get(name)
        if node is None:
            return None
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    return numpy_helper.to_array(attr.t)
                if attr.name == "value_floats":
                    return np.asarray(list(attr.floats), dtype=np.float32)
                if attr.name == "value_ints":
                    return np.asarray(list(attr.ints), dtype=np.int64)
            return None
        if node.op_type == "Identity":
            name = node.input[0]
            continue
        return None
    return None


def _full_scales(scales: Sequence[float], axes: Optional[Sequence[int]], rank: Optional[int]) -> tuple[float, ...]:
    if axes is None:
        return tuple(float(s) for s in scales)
    rank = rank or (max(a for a in axes) + 1)
    full = [1.0] * rank
    for axis, value in zip(axes, scales):
        full[axis % rank] = float(value)
    return tuple(full)


def _sites_baked_scales(model: onnx.ModelProto) -> tuple[dict[str, tuple[float, ...]], list[str], int]:
    """Constant scales of every Resize/Upsample/plugin node, the nodes without any, and the count.

    Uses :func:`graphsurgeon_tools.resize.find_resize_sites` for Resize/Upsample (it
    folds constant subgraphs); the plugin node is not a Resize site, so its constant
    scales input is read directly.
    """
    baked: dict[str, tuple[float, ...]] = {}
    unknown: list[str] = []
    count = 0
    try:
        from graphsurgeon_tools.resize import find_resize_sites

        sites = find_resize_sites(model)
    except NotImplementedError:  # the core pass has not landed: plain constants only
        sites = None
    if sites is not None:
        for site in sites:
            count += 1
            name = site.node_name or f"#{site.node_index}"
            if site.has_constant_scales and site.scales:
                baked[name] = _full_scales(site.scales, site.axes, site.input_rank)
            else:
                unknown.append(name)
    opset = default_opset(model)
    for index, node in enumerate(model.graph.node):
        if sites is not None and node.op_type != PLUGIN_OP_TYPE:
            continue
        if not _is_resize(node):
            continue
        count += 1
        name = node.name or f"#{index}"
        value = None
        if node.op_type == "Upsample" and len(node.input) < 2:
            for attr in node.attribute:
                if attr.name == "scales":
                    value = np.asarray(list(attr.floats), dtype=np.float32)
        else:
            for slot, kind in _scale_slots(node, opset):
                if kind == "scales" and slot < len(node.input) and node.input[slot]:
                    value = _constant_value(model, node.input[slot])
        if value is not None and value.size and value.ndim == 1 and np.issubdtype(value.dtype, np.floating):
            baked[name] = tuple(float(v) for v in value)
        else:
            unknown.append(name)
    return baked, unknown, count


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
    producers = {out: node for node in graph.node for out in node.output}
    opset = default_opset(model)

    driven: dict[str, tuple[str, list[str]]] = {}  # input -> (slot kind, nodes)
    x_rank: dict[str, int] = {}
    for index, node in enumerate(graph.node):
        if not _is_resize(node):
            continue
        for slot, kind in _scale_slots(node, opset):
            if slot >= len(node.input) or not node.input[slot]:
                continue
            seen: set[str] = set()
            queue = deque([node.input[slot]])
            while queue:
                tensor = queue.popleft()
                if tensor in seen or len(seen) > 64:
                    continue
                seen.add(tensor)
                if tensor in input_names:
                    entry = driven.setdefault(tensor, (kind, []))
                    entry[1].append(node.name or f"#{index}")
                    continue
                producer = producers.get(tensor)
                if producer is None or producer.op_type in ("Shape", "Size"):
                    continue
                queue.extend(t for t in producer.input if t)
        # Rank of X when its graph input says so; SRCNN-like models resize the input itself.
        x_info = next((i for i in inputs if node.input and i.name == node.input[0]), None)
        if x_info is not None:
            for tensor, (_, nodes) in driven.items():
                if (node.name or f"#{index}") in nodes:
                    x_rank[tensor] = len(_value_info_shape(x_info))

    scale_inputs: list[ScaleInput] = []
    data_inputs: list[DataInput] = []
    for info in inputs:
        shape = _value_info_shape(info)
        dtype = _value_info_dtype(info, where)
        if info.name not in driven:
            data_inputs.append(DataInput(info.name, shape, dtype))
            continue
        kind, nodes = driven[info.name]
        rank = x_rank.get(info.name, 4)
        length = shape[0] if len(shape) == 1 and isinstance(shape[0], int) else None
        if len(shape) >= 2:
            layout, length = "size-tensor", None
        elif kind == "sizes":
            layout = "sizes"
        elif len(shape) == 0:
            layout, length = "factor", None
        elif length == 1:
            layout = "factor"
        elif length == 2 and rank != 2:
            layout = "pair"
        else:
            layout = "scales"
        scale_inputs.append(ScaleInput(info.name, layout, length, rank, dtype, tuple(nodes), shape))

    baked, unknown, count = _sites_baked_scales(model)
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
    return Ports(
        data_inputs=tuple(data_inputs),
        scale_inputs=tuple(scale_inputs),
        outputs=tuple(o.name for o in graph.output),
        baked_scales=baked,
        baked_factor=baked_factor,
        baked_note=note,
        resize_nodes=count,
    )


def format_factor(factor: Factor) -> str:
    if factor is None:
        return "baked"
    return f"x{factor:g}"


# --------------------------------------------------------------------------------------
# Sessions
# --------------------------------------------------------------------------------------


def ort_session(model: onnx.ModelProto, where: str, *, quiet: bool = False) -> Any:
    """An ONNX Runtime session that can run plugin nodes (via ``runtime.make_session``).

    ``quiet``: ORT logs nothing, not even errors (for the diagnosis, whose attribute
    variants may be combinations ORT refuses). A model ORT cannot load raises
    :class:`InvalidModelError` naming ``where``.
    """
    import onnxruntime as ort

    try:
        from graphsurgeon_tools.runtime import make_session
    except ImportError:  # runtime has not landed: plain ORT (no plugin kernels)
        make_session = None
    options = ort.SessionOptions()
    if quiet:
        options.log_severity_level = 4
    try:
        if make_session is not None:
            return make_session(model, sess_options=options)
        return ort.InferenceSession(model.SerializeToString(), sess_options=options,
                                    providers=["CPUExecutionProvider"])
    except OnnxToolError:
        raise
    except Exception as exc:  # ORT raises its own exception types for graphs it refuses
        raise InvalidModelError(f"ONNX Runtime cannot load {where}: {' '.join(str(exc).split())[:300]}") from exc


class OnnxRunner:
    """Runs one ONNX model in ONNX Runtime at a factor, feeding its scale inputs.

    Sessions are quiet by default: a failing run is reported with ORT's message in the
    validation report, so ORT's own log line on stderr would only say it twice.
    """

    def __init__(self, model: onnx.ModelProto, where: str, *, session: Any = None, quiet: bool = True) -> None:
        self.model = model
        self.where = where
        self.quiet = quiet
        self.ports = model_ports(model, where)
        self._session = session

    @property
    def session(self) -> Any:
        if self._session is None:
            self._session = ort_session(self.model, self.where, quiet=self.quiet)
        return self._session

    def feeds(self, factor: Factor, data: dict[str, np.ndarray], fixed: dict[str, np.ndarray],
              reference_baked: Optional[dict[str, tuple[float, ...]]] = None) -> dict[str, np.ndarray]:
        """Data plus one value per scale input (``fixed`` ones as given, the rest for ``factor``).

        ``factor=None`` feeds each scale input the scales ``reference_baked`` holds for the
        node it drives (a static reference with different factors per node).
        """
        feeds = dict(data)
        x_shape = next(iter(data.values())).shape if data else ()
        for scale in self.ports.scale_inputs:
            if scale.name in fixed:
                feeds[scale.name] = fixed[scale.name]
            elif factor is not None:
                feeds[scale.name] = scale.feed(factor, x_shape)
            else:
                baked = next(
                    (reference_baked[n] for n in scale.nodes if reference_baked and n in reference_baked), None
                )
                if baked is None:
                    raise OnnxToolError(
                        f"{self.where}: no baked scales to feed input {scale.name!r} "
                        f"(nodes {', '.join(scale.nodes)}); pass --factors"
                    )
                feeds[scale.name] = scale.feed_scales(baked, x_shape)
        return feeds

    def run(self, feeds: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        try:
            values = self.session.run(None, feeds)
        except OnnxToolError:
            raise
        except Exception as exc:
            raise RunFailed(f"{self.where} failed in ONNX Runtime: {' '.join(str(exc).split())[:300]}") from exc
        names = [o.name for o in self.session.get_outputs()]
        return list(zip(names, [np.asarray(v) for v in values]))


class RunFailed(Exception):
    """A model or reference raised while running one sweep point (recorded, not fatal)."""


# --------------------------------------------------------------------------------------
# References
# --------------------------------------------------------------------------------------


class Reference:
    """Something that produces the expected outputs at a factor.

    ``dynamic`` references run at any factor; a static one only at ``baked_factor``
    (or, when ``baked_scales`` differ per node, at the sweep point ``None``).
    """

    kind = "reference"
    label = ""
    dynamic = True
    baked_factor: Optional[float] = None
    baked_scales: dict[str, tuple[float, ...]] = {}
    baked_note = ""

    def run(self, factor: Factor, data: list[tuple[str, np.ndarray]], candidate_feeds: dict[str, np.ndarray],
            baked_scales: Optional[dict[str, tuple[float, ...]]] = None) -> list[tuple[str, np.ndarray]]:  # pragma: no cover - interface
        raise NotImplementedError

    def parameters(self) -> dict[str, np.ndarray]:
        """Named weights, for diagnosing a mismatch (empty when unknown)."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "dynamic": self.dynamic,
            "baked_factor": self.baked_factor,
            "baked_note": self.baked_note,
        }


class OnnxModelReference(Reference):
    """Another ONNX model, run in ONNX Runtime. Data inputs match by name, else by position."""

    kind = "onnx"

    def __init__(self, model: onnx.ModelProto, label: str) -> None:
        self.label = label
        self.runner = OnnxRunner(model, f"reference {label}")
        ports = self.runner.ports
        self.dynamic = ports.is_dynamic
        self.baked_factor = ports.baked_factor
        self.baked_scales = ports.baked_scales
        self.baked_note = ports.baked_note

    def run(self, factor: Factor, data: list[tuple[str, np.ndarray]], candidate_feeds: dict[str, np.ndarray],
            baked_scales: Optional[dict[str, tuple[float, ...]]] = None) -> list[tuple[str, np.ndarray]]:
        ours = self.runner.ports.data_inputs
        by_name = {name: value for name, value in data}
        if all(d.name in by_name for d in ours):
            mapped = {d.name: by_name[d.name] for d in ours}
        elif len(ours) == len(data):
            mapped = {d.name: value for d, (_, value) in zip(ours, data)}
        else:
            raise OnnxToolError(
                f"reference {self.label} has data inputs {[d.name for d in ours]}, "
                f"the candidate {[n for n, _ in data]}: they match neither by name nor by count"
            )
        return self.runner.run(self.runner.feeds(factor, mapped, {}, baked_scales))

    def parameters(self) -> dict[str, np.ndarray]:
        return {t.name: numpy_helper.to_array(t) for t in self.runner.model.graph.initializer}


class TorchReference(Reference):
    """A PyTorch module following the calling convention in this module's docstring."""

    kind = "torch"

    def __init__(self, module: Any, label: str) -> None:
        self.module = module
        self.label = label
        self.takes_scales = _accepts_extra_argument(module)
        self.dynamic = True
        if hasattr(module, "eval"):
            module.eval()

    def run(self, factor: Factor, data: list[tuple[str, np.ndarray]], candidate_feeds: dict[str, np.ndarray],
            baked_scales: Optional[dict[str, tuple[float, ...]]] = None) -> list[tuple[str, np.ndarray]]:
        import torch

        if factor is None and self.takes_scales:
            raise RunFailed(f"{self.label} takes scales, but the candidate has no single factor to give it "
                            "(it bakes different factors per node, or has no resize)")
        tensors = [torch.from_numpy(np.ascontiguousarray(value)) for _, value in data]
        args: list[Any] = list(tensors)
        if self.takes_scales:
            rank = tensors[0].dim() if tensors else 4
            spatial = max(rank - 2, 1)
            args.append(torch.tensor([1.0] * (rank - spatial) + [float(factor)] * spatial, dtype=torch.float32))
        try:
            with torch.no_grad():
                result = self.module(*args)
        except Exception as exc:
            raise RunFailed(f"{self.label} raised {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from exc
        if isinstance(result, dict):
            result = list(result.values())
        if not isinstance(result, (list, tuple)):
            result = [result]
        return [(f"output_{i}", value.detach().cpu().numpy()) for i, value in enumerate(result)]

    def parameters(self) -> dict[str, np.ndarray]:
        state = getattr(self.module, "state_dict", None)
        if state is None:
            return {}
        return {name: value.detach().cpu().numpy() for name, value in state().items()}


def _accepts_extra_argument(module: Any) -> bool:
    """Whether calling ``module`` with a ``scales`` argument after the data is allowed."""
    target = getattr(module, "forward", module)
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return True
    params = [
        p for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return True
    return len(params) >= 2


class EvaluatorReference(Reference):
    """``onnx.reference.ReferenceEvaluator`` on the candidate itself, plugin nodes included.

    Fed exactly what ONNX Runtime gets, so it checks ORT's kernels (and our plugin
    kernel) against ONNX's own Python implementation. Slow for big inputs: keep
    them small. Does not check the graph rewrite itself (both sides run the same graph).
    """

    kind = "onnx-reference"

    def __init__(self, candidate: onnx.ModelProto) -> None:
        from onnx.reference import ReferenceEvaluator

        self.label = "onnx-reference"
        self.dynamic = True
        domains = {node.domain for node in candidate.graph.node if node.op_type == PLUGIN_OP_TYPE}
        new_ops = [_plugin_oprun(domain) for domain in sorted(domains)]
        try:
            self.evaluator = ReferenceEvaluator(candidate, new_ops=new_ops or None)
        except Exception as exc:
            raise InvalidModelError(
                f"onnx.reference cannot load the candidate: {' '.join(str(exc).split())[:300]}"
            ) from exc
        self.outputs = [o.name for o in candidate.graph.output]
        self.initializers = candidate.graph.initializer

    def run(self, factor: Factor, data: list[tuple[str, np.ndarray]], candidate_feeds: dict[str, np.ndarray],
            baked_scales: Optional[dict[str, tuple[float, ...]]] = None) -> list[tuple[str, np.ndarray]]:
        try:
            values = self.evaluator.run(None, candidate_feeds)
        except Exception as exc:
            raise RunFailed(f"onnx.reference failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from exc
        return list(zip(self.outputs, [np.asarray(v) for v in values]))


def _plugin_oprun(domain: str) -> type:
    """An ``OpRun`` for ``DynamicTRTResize`` in ``domain``, with ONNX Resize semantics.

    Both signatures: ``(X, scales)`` and MMDeploy's ``(X, size_tensor)`` whose shape
    is the output size. ``align_corners`` (MMDeploy) maps onto
    ``coordinate_transformation_mode``; plugin bookkeeping attributes are ignored.
    """
    from onnx.reference.op_run import OpRun
    from onnx.reference.ops.op_resize import Resize

    def _run(self: Any, X: np.ndarray, second: np.ndarray, **attrs: Any) -> tuple[np.ndarray]:
        def text(value: Any, default: str) -> str:
            if value is None:
                return default
            return value.decode() if isinstance(value, bytes) else str(value)

        mode = text(attrs.get("mode"), "nearest")
        if mode in ("bilinear", "bicubic"):
            mode = mode[2:]
        ctm = text(attrs.get("coordinate_transformation_mode"), "half_pixel")
        if attrs.get("align_corners") is not None and attrs.get("coordinate_transformation_mode") is None:
            ctm = "align_corners" if int(attrs["align_corners"]) else "half_pixel"
        second = np.asarray(second)
        scales = sizes = None
        if second.ndim == 1 and np.issubdtype(second.dtype, np.floating):
            scales = second.astype(np.float32)
            if scales.size < X.ndim:
                scales = np.concatenate([np.ones(X.ndim - scales.size, np.float32), scales])
        elif second.ndim == 1:
            sizes = second.astype(np.int64)
        else:
            sizes = np.asarray(list(X.shape[: X.ndim - 2]) + list(second.shape[-2:]), dtype=np.int64)
        impl = Resize.__new__(Resize)
        return impl._run(
            X, None, scales, sizes,
            antialias=int(attrs.get("antialias") or 0),
            axes=None,
            coordinate_transformation_mode=ctm,
            cubic_coeff_a=float(attrs.get("cubic_coeff_a", -0.75) if attrs.get("cubic_coeff_a") is not None else -0.75),
            exclude_outside=int(attrs.get("exclude_outside") or 0),
            extrapolation_value=float(attrs.get("extrapolation_value") or 0.0),
            keep_aspect_ratio_policy="stretch",
            mode=mode,
            nearest_mode=text(attrs.get("nearest_mode"), "round_prefer_floor"),
        )

    return type(PLUGIN_OP_TYPE, (OpRun,), {"op_domain": domain, "_run": _run})


def _load_python_callable(spec: str) -> Any:
    body = spec[len("python:"):]
    module_name, sep, attr = body.rpartition(":")
    if not sep or not module_name or not attr:
        raise OnnxToolError(f"reference {spec!r} must look like python:MODULE:CALLABLE")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise OnnxToolError(f"reference {spec!r}: file {path} does not exist")
            mod_spec = importlib.util.spec_from_file_location(path.stem, path)
            if mod_spec is None or mod_spec.loader is None:
                raise OnnxToolError(f"reference {spec!r}: cannot import {path}")
            module = importlib.util.module_from_spec(mod_spec)
            mod_spec.loader.exec_module(module)
        else:
            # The user's module usually sits in the folder they run onnxtool from, which the
            # console script does not put on sys.path; add it for this import only.
            cwd = str(Path.cwd())
            added = "" not in sys.path and cwd not in sys.path
            if added:
                sys.path.insert(0, cwd)
            try:
                module = importlib.import_module(module_name)
            finally:
                if added and cwd in sys.path:
                    sys.path.remove(cwd)
    except OnnxToolError:
        raise
    except Exception as exc:
        raise OnnxToolError(
            f"reference {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise OnnxToolError(f"reference {spec!r}: {module_name} has no callable {attr!r}")
    try:
        return factory()
    except Exception as exc:
        raise OnnxToolError(f"reference {spec!r}: {attr}() raised {type(exc).__name__}: {exc}") from exc


def _torch_srcnn() -> Any:
    try:
        from exporters.models import srcnn
    except ImportError as exc:
        raise OnnxToolError(
            f"reference 'torch:srcnn' needs the PyTorch side (pip install 'onnxtool[torch]'): {exc}"
        ) from exc
    try:
        from exporters.ops import load_library

        load_library()  # now, so a missing or broken build is one clear error, not a failed sweep
    except ImportError as exc:
        raise OnnxToolError(f"reference 'torch:srcnn' resizes with onnxtool's C++ op, which is unavailable: {exc}") from exc
    return srcnn(variant="cxx-op", pretrained=True)


ReferenceLike = Union[str, Path, onnx.ModelProto, Reference, Callable[..., Any]]
TORCH_MODELS = {"srcnn": _torch_srcnn}


def make_reference(reference: ReferenceLike, candidate: onnx.ModelProto) -> Reference:
    """Turn a reference spec into a :class:`Reference`.

    Strings: ``torch:srcnn``, ``python:MODULE:CALLABLE`` (MODULE may be a ``.py``
    path), ``onnx-reference``, or a path to an ONNX model. Objects: a ModelProto,
    a :class:`Reference`, or an ``nn.Module``/callable (the PyTorch convention).
    Raises :class:`OnnxToolError` (exit 3) for a spec it cannot use.
    """
    if isinstance(reference, Reference):
        return reference
    if isinstance(reference, onnx.ModelProto):
        return OnnxModelReference(reference, "<ModelProto>")
    if isinstance(reference, str) and not reference.strip():
        raise OnnxToolError("empty reference: give an ONNX model, torch:srcnn, python:MODULE:CALLABLE or onnx-reference")
    if isinstance(reference, str) and reference == "onnx-reference":
        return EvaluatorReference(candidate)
    if isinstance(reference, str) and reference.startswith("torch:"):
        name = reference[len("torch:"):]
        factory = TORCH_MODELS.get(name)
        if factory is None:
            raise OnnxToolError(
                f"unknown reference {reference!r}: built-in PyTorch references are "
                + ", ".join(f"torch:{n}" for n in TORCH_MODELS)
            )
        return TorchReference(factory(), reference)
    if isinstance(reference, str) and reference.startswith("python:"):
        return TorchReference(_load_python_callable(reference), reference)
    if isinstance(reference, (str, Path)):
        path = Path(reference)
        if not path.exists():
            raise OnnxToolError(
                f"unknown reference {str(reference)!r}: not a file, and not torch:srcnn, "
                "python:MODULE:CALLABLE or onnx-reference"
            )
        from graphsurgeon_tools.validation import load_onnx

        return OnnxModelReference(load_onnx(path, "reference"), str(path))
    if callable(reference):
        return TorchReference(reference, getattr(type(reference), "__name__", "callable"))
    raise OnnxToolError(f"cannot use a {type(reference).__name__} as a reference")
