"""swap-plugin's built-in check: the plugin model against the Resize model in ONNX Runtime.

``run_check(original, rewritten, result, ...) -> CheckResult``

The one check (:func:`graphsurgeon_tools.check.equivalence.compare_models`: exact at
``ORT_ENABLE_EXTENDED``, one session per model; the fully optimized difference as a figure only
with ``optimized_figure=True``; the Resize/plugin site outputs both graphs share compared,
vacuous comparisons not passed), run as make-dynamic-scale runs it. What differs here is only
how the models run and what the new inputs get:

- Sessions: one per model (a sizes run, the comparison and a QDQ judgement share it,
  :mod:`graphsurgeon_tools.check.reuse`); a model with plugin nodes runs through
  :func:`graphsurgeon_tools.runtime.make_session` (the compiled ``trt.plugins`` library, the
  onnxruntime-extensions kernel otherwise); a model without (the original of a forward swap,
  the result of ``reverse=True``) runs in a plain CPU session. Both register the user's
  ``custom_op_libs`` of the enclosing :func:`~graphsurgeon_tools.runtime.session.custom_op_scope`.
- Forward feeds: each input the swap added gets the original factor: scales inputs their
  constant value, ``signature="sizes"`` inputs the original (h, w) (at the check's input
  shapes when the dims are symbolic: from shape inference, else from the dims X has in one
  run of the original), a ``size_input=`` tensor zeros of the original output
  shape (only its shape is read).
- ``reverse=True``: the plugin model is the original. Its 1-D graph inputs that a plugin
  node's second input is computed from (scales, (h, w)) would get random values (nonsense
  factors), so both models get the same pinned values instead: the original values the
  forward pass recorded in the model's metadata (``onnxtool.original_values``; a size tensor's
  recorded shape becomes its dims), else scales 1 for the leading dims and 2 for H and W, sizes
  (64, 64). A model that cannot run at factor 2 everywhere (a pinned site) is then skipped
  with that reason.

Tolerance: exact (atol 0) where every plugin node is nearest; where one interpolates, a bound
in ulps of each compared tensor's own dtype at its magnitude (:data:`KERNEL_ULPS`,
:class:`~graphsurgeon_tools.check.tolerance.UlpTolerance`): the plugin kernel's float arithmetic
differs from ORT's Resize in the last bits (the rewrite itself is exact: ``reverse=True`` of the
result gives the original graph back), and a float16 model differs by whole float16 ulps. The
bound is in ``CheckResult.tolerance`` (and its largest atol in ``CheckResult.atol``).

Quantized models (``DequantizeLinear -> Resize -> QuantizeLinear``, :mod:`graphsurgeon_tools.resize.qdq`):
from ``ORT_ENABLE_EXTENDED`` on, ORT's QDQ transformers change the original's arithmetic (a
nearest Resize runs on the int8 tensor, DQ -> Conv -> Q becomes QLinearConv) but cannot see
through a plugin node, so the two models would compute different functions there. Such a model
is compared at ``ORT_ENABLE_BASIC`` (no QDQ transformer; both compute the float function), the
fused difference is the ``ORT_ENABLE_ALL`` figure (with ``optimized_figure=True``), and where the
float site outputs agree within the bound but the QuantizeLinear after a site rounds an element to
the neighbouring step, the quantized tensors are compared in steps (at most one) and the graph
outputs downstream become a figure (``CheckResult.figures``), not a failure.

Skipped with the reason, never failed: plugin nodes with no kernel here (a generic spec, an
op_type other than DynamicTRTResize), and a ``size_input=`` whose original output size is
not static.

Requires: the original (ModelProto or its bytes) and the rewritten model, after the pass's
full checker. Ensures: a CheckResult (never raises on a difference; the caller's
``raise_if_failed`` does). Does NOT run the ONNX checker or site discovery (the pass
contract counts them), and does NOT write files. Importing it loads none of the check's machinery
(``graphsurgeon_tools.check``, the ``runtime`` sessions and kernels: lazy package faces): the
swap-plugin package imports it, and a run with ``check=False`` never calls it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Optional, Union

import numpy as np
from onnx import ModelProto, TensorProto

from graphsurgeon_tools import check, runtime
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core.dtypes import np_dtype
from graphsurgeon_tools.errors import OnnxToolError
from graphsurgeon_tools.passes.make_dynamic_scale import layouts
from graphsurgeon_tools.passes.make_dynamic_scale.layouts import PendingSizes
from graphsurgeon_tools.passes.swap_plugin import requantized
from graphsurgeon_tools.passes.swap_plugin.result import SwapPluginResult
from graphsurgeon_tools.resize.original_values import (
    ORIGINAL_VALUES_KEY,
    read_original_values,
)
from graphsurgeon_tools.resize.plugin_node import plugin_node_attributes
from graphsurgeon_tools.resize.qdq import UNFUSED_LEVEL, qdq_sites
from graphsurgeon_tools.resize.scales import ort_output_length

if TYPE_CHECKING:  # annotations only: the check's modules load when the check runs (check.__init__)
    from graphsurgeon_tools.check.equivalence import CheckResult
    from graphsurgeon_tools.check.tolerance import UlpTolerance

__all__ = ["KERNEL_ULPS", "no_kernel_reason", "run_check"]

#: What a reversed model's plugin inputs get (both models): factor 2 on H and W, or (h, w).
PINNED_FACTOR = 2.0
PINNED_SIZES = (64, 64)
#: The tolerance where a plugin node interpolates (linear, cubic), in ulps of the compared tensor's
#: dtype at its magnitude: the plugin kernel (compiled library, or the ONNX reference fallback) sums
#: the same terms as ORT's Resize in another order, a few float32 ulps apart (x2 on values in
#: [-1, 1]: 1.2e-7 half_pixel, 3.6e-7 align_corners; 64 ulps at 1 is 7.6e-6); float16/bfloat16 are
#: computed in float32 and rounded once, so they differ by at most a whole ulp of their own.
#: Nearest copies values: compared exactly.
KERNEL_ULPS = {"float32": 64.0, "float64": 64.0, "float16": 2.0, "bfloat16": 2.0}


def no_kernel_reason(op_type: str, generic: bool, spec_source: str) -> Optional[str]:
    """Why the check cannot run the plugin model here, or None when it can."""
    kernels = runtime.kernels.KERNEL_OP_TYPES
    if generic:
        return (
            f"the generic spec {spec_source} has no ONNX Runtime kernel for {op_type} here (only "
            f"{', '.join(kernels)} has one); run the plugin model in TensorRT to compare it"
        )
    if op_type not in kernels:
        return (
            f"no ONNX Runtime kernel for plugin op_type {op_type!r} here (only {', '.join(kernels)} "
            "has one); run the plugin model in TensorRT to compare it"
        )
    return None


def _session(blob: bytes, options: Any) -> Any:
    """The session factory of every run of this check: plugin nodes through onnxtool's kernel, a plain
    CPU session otherwise (:func:`graphsurgeon_tools.check.sessions.plugin_or_cpu_session`)."""
    return check.sessions.plugin_or_cpu_session(blob, options)


def _tolerance(plugin_model: ModelProto, op_type: str) -> Optional[UlpTolerance]:
    """None (exact) unless a plugin node interpolates; then the dtype-aware bound (see KERNEL_ULPS)."""
    modes = {plugin_node_attributes(n)["mode"] for n in plugin_model.graph.node if n.op_type == op_type}
    if not modes - {"nearest"}:
        return None
    return check.tolerance.UlpTolerance(
        dict(KERNEL_ULPS),
        why="the plugin kernel interpolates in another float order than ONNX "
        "Runtime's Resize; nearest-only models are compared exactly",
    )


class _Pinned:
    """A session whose ``run`` feeds ``pinned`` values to the inputs it has of those names."""

    def __init__(self, session: Any, pinned: Mapping[str, np.ndarray]) -> None:
        self.session, self.pinned = session, pinned

    def get_inputs(self) -> Any:
        return self.session.get_inputs()

    def get_outputs(self) -> Any:
        return self.session.get_outputs()

    def run(self, names: Any, feed: Mapping[str, np.ndarray], *args: Any) -> Any:
        wanted = {i.name for i in self.session.get_inputs()}
        return self.session.run(names, {**feed, **{k: v for k, v in self.pinned.items() if k in wanted}}, *args)


class _Run(NamedTuple):
    """How the check runs the original: the object it is keyed by, the level, what its session exposes,
    and the session a run before the comparison opened (the comparison reuses it; the report counts it)."""

    key: object
    level: str
    expose: list[str]
    opened: list[dict[str, Any]]


def _forward_feeds(
    result: SwapPluginResult, original: ModelProto, pending: list[Any], dims: Optional[dict[str, int]], run: _Run
) -> Union[dict[str, np.ndarray], str]:
    """Feeds for the inputs the swap added, at the original factors; a string: why there are none."""
    feeds: dict[str, np.ndarray] = {}
    for item in result.new_inputs:
        name, dtype = item["name"], np.int64 if item.get("dtype") == "int64" else np.float32
        if item.get("value"):
            feeds[name] = np.asarray(item["value"], dtype=dtype)
        elif "shape_at_original_factor" in item:  # size_input=: only its shape is read
            shape = item["shape_at_original_factor"]
            if shape is None:
                return (
                    f"size_input={name!r}: the output size at the original factor is not static, so the "
                    "check cannot shape that input"
                )
            feeds[name] = np.zeros(shape, dtype=np.dtype(item.get("dtype") or "float32"))
    if pending:  # signature="sizes" with symbolic dims: the original (h, w) at the check's input shapes
        shapes = {k: list(v) for k, v in check.feeds.concrete_input_shapes(original, dims).items()}
        feeds.update(layouts.sizes_feeds(original, pending, shapes))
        unknown = [p for p in pending if p[0] not in feeds]
        if unknown:  # shape inference stops short of the site (e.g. DPT's Reshapes): one run tells
            feeds.update(_sizes_from_a_run(original, unknown, shapes, run))
    return feeds


def _sizes_from_a_run(
    original: ModelProto, pending: list[Any], shapes: dict[str, list[int]], run: _Run
) -> dict[str, np.ndarray]:
    """The original output sizes of ``pending`` sites from the dims their input X has (or, for run-time
    sizes, the sizes tensor's own value) in one ORT run of the original on the check's inputs (ORT's
    floor rule), in the session the comparison then reuses; {} when the original does not run (the
    check then says so itself)."""
    pending = [PendingSizes(*entry) for entry in pending]
    names = sorted({p.sizes or p.x for p in pending})
    try:
        session, fresh = check.sessions.session_for(run.key, original, run.level, names, _session, expose=run.expose)
        if fresh:
            run.opened.append(
                {"model": "reference", "level": run.level, "reused": False, "for": "the original output sizes"}
            )
        takes = {i.name for i in session.get_inputs()}
        feed = {k: v for k, v in check.feeds.random_feeds(original, shapes).items() if k in takes}
        values = dict(zip(names, session.run(names, feed)))
    except (*runtime.session.ort_errors(), OnnxToolError):
        return {}
    feeds: dict[str, np.ndarray] = {}
    for name, x, scales, sizes, start in pending:
        if sizes:  # run-time sizes: the value the original computed
            if sizes in values:
                feeds[name] = np.asarray(values[sizes], dtype=np.int64).reshape(-1)[start:]
            continue
        dims = np.shape(values[x]) if x in values else ()
        if len(dims) >= len(scales):  # one scale per spatial axis: (l), (h, w), (d, h, w)
            feeds[name] = np.array(
                [ort_output_length(d, f) for d, f in zip(dims[-len(scales) :], scales)], dtype=np.int64
            )
    return feeds


def _reverse_pins(plugin_model: ModelProto, op_type: str) -> tuple[dict[str, np.ndarray], dict[str, int], bool]:
    """Values for the plugin model's graph inputs that a plugin node's second input is computed
    from (directly, or through the size-tensor subgraph forward builds): scales or (h, w).

    Returns (pins, dims for the symbolic dims of recorded size tensors, whether every pin is a
    recorded original value)."""
    graph = plugin_model.graph
    inputs = {i.name: i for i in graph.input}
    second_inputs = [node.input[1] for node in graph.node if node.op_type == op_type and len(node.input) == 2]
    # Through Shape too: a size tensor's shape is what the plugin reads, and its record pins it.
    reached = core_graph.upstream_sources(graph, second_inputs, core_graph.producers(graph), inputs, stop_at=())
    recorded = read_original_values(plugin_model)
    pins: dict[str, np.ndarray] = {}
    dims: dict[str, int] = {}
    all_recorded = True
    for name in sorted(reached):
        info = inputs[name].type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else None for d in info.shape.dim]
        known = recorded.get(name)
        if isinstance(known, dict) and isinstance(known.get("shape"), list) and len(known["shape"]) == len(shape):
            for dim, size in zip(info.shape.dim, known["shape"]):  # a size tensor: only its shape is read
                if dim.dim_param:
                    dims[dim.dim_param] = int(size)
            continue
        if len(shape) != 1:  # X itself, or a size tensor with no record: random values do
            continue
        dtype = np_dtype(info.elem_type) if info.elem_type in (TensorProto.INT64, TensorProto.DOUBLE) else np.float32
        if isinstance(known, list) and known:
            pins[name] = np.asarray(known, dtype=dtype)
            continue
        all_recorded = False
        if info.elem_type == TensorProto.INT64:  # (h, w): signature "sizes"
            pins[name] = np.asarray(PINNED_SIZES, dtype=np.int64)
        elif info.elem_type in (TensorProto.FLOAT, TensorProto.DOUBLE):  # scales
            length = shape[0] if shape[0] and shape[0] > 0 else 4
            values = [1.0] * max(length - 2, 0) + [PINNED_FACTOR] * min(length, 2)
            pins[name] = np.asarray(values, dtype=dtype)
    return pins, dims, all_recorded


def run_check(
    original: Union[ModelProto, bytes],
    rewritten: ModelProto,
    result: SwapPluginResult,
    *,
    op_type: str,
    generic: bool,
    pending: Optional[list[Any]] = None,
    dims: Optional[dict[str, int]] = None,
    optimized_figure: bool = False,
) -> CheckResult:
    """The built-in check of one swap-plugin run (forward or ``result.reverse``).

    Args:
        original: the model as given (bytes when the pass changed the caller's proto in place).
        rewritten: the pass's output.
        result: the pass's result (``new_inputs``, ``reverse``, ``spec_source``).
        op_type: the plugin op_type the pass emitted (reverse: turned back).
        generic: a generic spec's swap (no kernel: skipped).
        pending: make-dynamic-scale's pending sizes inputs (``signature="sizes"``, symbolic dims).
        dims: sizes for named symbolic dims (``check_dims=``).
        optimized_figure: also the ``ORT_ENABLE_ALL`` figure (a second session per model).
    """
    reason = no_kernel_reason(op_type, generic, result.spec_source)
    if reason:
        return check.equivalence.CheckResult(passed=None, skipped=reason)
    original_proto = original if isinstance(original, ModelProto) else ModelProto.FromString(original)
    if result.reverse:
        pins, recorded_dims, all_recorded = _reverse_pins(original_proto, op_type)

        def pinned(blob: bytes, options: Any) -> Any:
            return _Pinned(_session(blob, options), pins)

        checked = check.equivalence.compare_models(
            original,
            rewritten,
            dims={**recorded_dims, **(dims or {})},
            tolerance=_tolerance(original_proto, op_type),
            session_factory=pinned if pins else _session,
            optimized_figure=optimized_figure,
        )
        if checked.skipped and pins and not all_recorded:  # say which factors it could not run at
            checked.skipped += (
                f"; its scale inputs had no recorded original value (metadata {ORIGINAL_VALUES_KEY}) "
                f"and were fed factor {PINNED_FACTOR:g} (sizes {list(PINNED_SIZES)})"
            )
        return checked
    quantized = qdq_sites(original_proto)
    level = UNFUSED_LEVEL if quantized else check.equivalence.EXACT_LEVEL
    run = _Run(original, level, requantized.kept_tensors(quantized, rewritten, op_type) if quantized else [], [])
    # A run for the sizes, the comparison and a QDQ judgement share one session per model.
    with check.reuse.reuse_sessions(bool(quantized) or bool(pending)):
        feeds = _forward_feeds(result, original_proto, list(pending or ()), dims, run)
        if isinstance(feeds, str):
            return check.equivalence.CheckResult(passed=None, skipped=feeds)
        tolerance = _tolerance(rewritten, op_type)
        checked = check.equivalence.compare_models(
            original,
            rewritten,
            feeds,
            dims=dims,
            session_factory=_session,
            level=level,
            tolerance=tolerance,
            optimized_figure=optimized_figure,
            expose=run.expose,
        )
        checked.sessions[:0] = run.opened  # the sizes run's session, which the comparison reused
        if quantized:
            requantized.judge(
                checked,
                original_proto,
                rewritten,
                feeds,
                quantized,
                dims,
                _session,
                tolerance,
                op_type,
                reference=original,
            )
    return checked
