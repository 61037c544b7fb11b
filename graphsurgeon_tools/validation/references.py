"""What ``validate`` compares against: the kinds of reference (how a spec becomes one: :mod:`.reference_specs`).

* an ONNX model (:class:`OnnxModelReference`; static: only its baked factor; dynamic: every factor);
* ``onnx-reference`` (:class:`EvaluatorReference`: ``onnx.reference``'s evaluator run on the
  candidate itself, plugin nodes included);
* ``python:MODULE:CALLABLE`` (a user's own, unmodified ``nn.Module``) and any ``nn.Module``/callable;
* ``python-scales:MODULE:CALLABLE`` and named references registered by extensions
  (``torch:srcnn``, registered by the PyTorch side through :mod:`graphsurgeon_tools.extensions`):
  modules written to take ``scales``.

``CALLABLE()`` takes no arguments and returns an ``nn.Module`` (or any callable); MODULE may
be a ``.py`` path, whose folder is importable while it loads. Two calling conventions,
chosen explicitly, never guessed from a signature:

* routed (``python:`` and objects given to the API): ``module(*data_inputs)``, unmodified,
  with every ``interpolate``/``nn.Upsample`` call run by onnxtool's C++ op at the factor the
  candidate's feeds give the paired resize site (the PyTorch side's
  ``exporters.module_reference``); the first run pairs calls and sites, and a candidate that
  disagrees with the module site by site fails with one line naming the sites. Nested outputs
  are flattened in the exporters' order;
* scales (``python-scales:``, ``torch:NAME``, ``scales_argument=True``):
  ``module(*data_inputs, scales)`` with ``scales`` a float32 tensor ``[1, 1, f, f]``, the
  values ONNX Resize takes.

Data inputs are tensors in the candidate's graph-input order; outputs are matched to the
candidate's by position.

Requires: the loaded candidate (for ``onnx-reference``). Ensures: an unusable spec is an
:class:`OnnxToolError` (exit 3) with one line; a reference that raises while running one
sweep point is a :class:`RunFailed` (recorded in the report).
Does NOT write files or print; never imports ``exporters`` or torch: a PyTorch module is
run by the module runner the PyTorch side registers (:mod:`graphsurgeon_tools.extensions`).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import onnx
from onnx import numpy_helper

from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS
from graphsurgeon_tools.errors import (
    InvalidInputError,
    InvalidModelError,
    OnnxToolError,
)
from graphsurgeon_tools.extensions import module_runner
from graphsurgeon_tools.resize.semantics import (
    PLUGIN_OP_TYPE,
    RESIZE_DEFAULTS,
    normalize_mode,
)
from graphsurgeon_tools.validation.ports import model_opset
from graphsurgeon_tools.validation.runner import OnnxRunner, RunFailed
from graphsurgeon_tools.validation.sweep import Factor

__all__ = ["EvaluatorReference", "OnnxModelReference", "Reference", "TorchReference"]

# What onnx.reference's numpy kernels raise for inputs or graphs they cannot run
# (NotImplementedError for unknown ops is a RuntimeError).
_EVALUATOR_ERRORS = (RuntimeError, ValueError, TypeError, IndexError, KeyError, ArithmeticError)


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

    def run(
        self,
        factor: Factor,
        data: list[tuple[str, np.ndarray]],
        candidate_feeds: dict[str, np.ndarray],
        baked_scales: Optional[dict[str, tuple[float, ...]]] = None,
    ) -> list[tuple[str, np.ndarray]]:  # pragma: no cover - interface
        raise NotImplementedError

    def expose(self, names: list[str]) -> list[str]:
        """Also return these intermediate tensors from run() (after the outputs); returns those it can.

        The default: none (a PyTorch module has no tensor names to match).
        """
        return []

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

    def run(
        self,
        factor: Factor,
        data: list[tuple[str, np.ndarray]],
        candidate_feeds: dict[str, np.ndarray],
        baked_scales: Optional[dict[str, tuple[float, ...]]] = None,
    ) -> list[tuple[str, np.ndarray]]:
        ours = self.runner.ports.data_inputs
        by_name = {name: value for name, value in data}
        if all(d.name in by_name for d in ours):
            mapped = {d.name: by_name[d.name] for d in ours}
        elif len(ours) == len(data):
            mapped = {d.name: value for d, (_, value) in zip(ours, data)}
        else:
            raise InvalidInputError(
                f"reference {self.label} has data inputs {[d.name for d in ours]}, "
                f"the candidate {[n for n, _ in data]}: they match neither by name nor by count"
            )
        return self.runner.run(self.runner.feeds(factor, mapped, {}, baked_scales))

    def expose(self, names: list[str]) -> list[str]:
        return self.runner.expose(names)

    def parameters(self) -> dict[str, np.ndarray]:
        try:
            return {t.name: numpy_helper.to_array(t) for t in self.runner.model.graph.initializer}
        except (ValueError, TypeError):  # a tensor numpy cannot read: no weights to compare
            return {}


class TorchReference(Reference):
    """A PyTorch module following the calling convention in this module's docstring."""

    kind = "torch"

    def __init__(self, module: Any, label: str, *, takes_scales: bool = True) -> None:
        self.module = module
        self.label = label
        self.takes_scales = takes_scales
        self.dynamic = True
        if hasattr(module, "eval"):
            module.eval()

    def run(
        self,
        factor: Factor,
        data: list[tuple[str, np.ndarray]],
        candidate_feeds: dict[str, np.ndarray],
        baked_scales: Optional[dict[str, tuple[float, ...]]] = None,
    ) -> list[tuple[str, np.ndarray]]:
        runner = module_runner()  # the PyTorch side's; one line naming what to install without it
        if factor is None and self.takes_scales:
            raise RunFailed(
                f"{self.label} takes scales, but the candidate has no single factor to give it "
                "(it bakes different factors per node, or has no resize)"
            )
        arrays = [np.ascontiguousarray(value) for _, value in data]
        scales = None
        if self.takes_scales:
            rank = arrays[0].ndim if arrays else 4
            spatial = max(rank - 2, 1)
            scales = np.asarray([1.0] * (rank - spatial) + [float(factor)] * spatial, dtype=np.float32)
        try:
            result = runner.run(self.module, arrays, scales)
        except Exception as exc:  # the user's module: whatever it raises is reported as theirs, by type
            raise RunFailed.raised(self.label, exc) from exc
        return [(f"output_{i}", value) for i, value in enumerate(result)]

    def parameters(self) -> dict[str, np.ndarray]:
        try:
            runner = module_runner()
        except OnnxToolError:  # no PyTorch side: no weights to compare
            return {}
        try:
            return runner.parameters(self.module)
        except Exception:  # the user's module: weights are a diagnostic nicety, never the report's end
            return {}


class EvaluatorReference(Reference):
    """``onnx.reference.ReferenceEvaluator`` on the candidate itself, plugin nodes included.

    Fed exactly what ONNX Runtime gets, so it checks ORT's kernels (and our plugin
    kernel) against ONNX's own Python implementation. Slow for big inputs: keep
    them small. Does not check the graph rewrite itself (both sides run the same graph).
    """

    kind = "onnx-reference"

    def __init__(self, candidate: onnx.ModelProto) -> None:
        from onnx.reference import ReferenceEvaluator  # deferred: onnx.reference, only for onnx-reference

        self.label = "onnx-reference"
        self.dynamic = True
        domains = {node.domain for node in candidate.graph.node if node.op_type == PLUGIN_OP_TYPE}
        new_ops = [_plugin_oprun(domain) for domain in sorted(domains)]
        if _needs_inference_batch_norm(candidate):
            new_ops.append(_inference_batch_norm())
        try:
            self.evaluator = ReferenceEvaluator(candidate, new_ops=new_ops or None)
        except _EVALUATOR_ERRORS as exc:
            raise InvalidModelError(
                f"onnx.reference cannot load the candidate: {' '.join(str(exc).split())[:300]}"
            ) from exc
        self.outputs = [o.name for o in candidate.graph.output]
        self.produced = {out for node in candidate.graph.node for out in node.output if out}
        self.initializers = candidate.graph.initializer
        self.exposed: list[str] = []

    def expose(self, names: list[str]) -> list[str]:
        self.exposed = [n for n in names if n in self.produced and n not in self.outputs]
        return list(self.exposed)

    def run(
        self,
        factor: Factor,
        data: list[tuple[str, np.ndarray]],
        candidate_feeds: dict[str, np.ndarray],
        baked_scales: Optional[dict[str, tuple[float, ...]]] = None,
    ) -> list[tuple[str, np.ndarray]]:
        try:
            values = self.evaluator.run(self.outputs + self.exposed, candidate_feeds)
        except _EVALUATOR_ERRORS as exc:
            raise RunFailed(f"onnx.reference failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from exc
        return list(zip(self.outputs + self.exposed, [np.asarray(v) for v in values]))


def _needs_inference_batch_norm(model: onnx.ModelProto) -> bool:
    """BatchNormalization-9 nodes (opsets 9..13) with one output: onnx.reference mis-runs them."""
    return 9 <= model_opset(model) < 14 and any(
        node.op_type == "BatchNormalization" and node.domain in DEFAULT_DOMAINS and len(node.output) == 1
        for node in model.graph.node
    )


def _inference_batch_norm() -> type:
    """``BatchNormalization`` (version 9) in inference mode, replacing onnx.reference's own.

    BatchNormalization-9 has no training mode in the spec: Y uses the given running mean and
    variance. onnx.reference (1.16..1.23) normalises with the batch's own statistics whenever the
    node sets ``momentum`` (PaddleOCR's paddle2onnx exports always do), which is neither ONNX's
    meaning nor ONNX Runtime's, and fails every comparison downstream.
    """
    from onnx.reference.op_run import OpRun  # deferred: onnx.reference, only for onnx-reference

    def _run(
        self: Any,
        x: np.ndarray,
        scale: np.ndarray,
        bias: np.ndarray,
        mean: np.ndarray,
        var: np.ndarray,
        epsilon: Optional[float] = None,
        momentum: Optional[float] = None,
        **_: Any,
    ) -> tuple[np.ndarray]:
        shape = (1, -1) + (1,) * (x.ndim - 2)
        eps = 1e-5 if epsilon is None else epsilon
        y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)
        return (y.astype(x.dtype),)

    return type("BatchNormalization", (OpRun,), {"op_domain": "", "_run": _run})


def _plugin_oprun(domain: str) -> type:
    """An ``OpRun`` for ``DynamicTRTResize`` in ``domain``, with ONNX Resize semantics.

    Both signatures: ``(X, scales)`` and MMDeploy's ``(X, size_tensor)`` whose shape
    is the output size. ``align_corners`` (MMDeploy) maps onto
    ``coordinate_transformation_mode``; plugin bookkeeping attributes are ignored.
    """
    from onnx.reference.op_run import OpRun  # deferred: onnx.reference, only for onnx-reference
    from onnx.reference.ops.op_resize import Resize  # deferred: onnx.reference, only for onnx-reference

    def _run(self: Any, X: np.ndarray, second: np.ndarray, **attrs: Any) -> tuple[np.ndarray]:
        def value(name: str) -> Any:
            given = attrs.get(name)
            if given is None:
                return RESIZE_DEFAULTS[name]
            return given.decode() if isinstance(given, bytes) else given

        ctm = str(value("coordinate_transformation_mode"))
        if attrs.get("align_corners") is not None and attrs.get("coordinate_transformation_mode") is None:
            ctm = "align_corners" if int(attrs["align_corners"]) else "half_pixel"
        second = np.asarray(second)
        scales = sizes = None
        if second.ndim == 1 and np.issubdtype(second.dtype, np.floating):
            scales = second.astype(np.float32)
            if scales.size < X.ndim:
                scales = np.concatenate([np.ones(X.ndim - scales.size, np.float32), scales])
        elif second.ndim == 1:  # output sizes as values (TensorRT V3): the last axes, or all of them
            tail = [int(v) for v in second]
            sizes = np.asarray(list(X.shape[: X.ndim - len(tail)]) + tail, dtype=np.int64)
        else:  # MMDeploy's size tensor: its shape is the output H, W
            sizes = np.asarray(list(X.shape[: X.ndim - 2]) + list(second.shape[-2:]), dtype=np.int64)
        impl = Resize.__new__(Resize)
        return impl._run(
            X,
            None,
            scales,
            sizes,
            antialias=int(value("antialias")),
            axes=None,
            coordinate_transformation_mode=ctm,
            cubic_coeff_a=float(value("cubic_coeff_a")),
            exclude_outside=int(value("exclude_outside")),
            extrapolation_value=float(value("extrapolation_value")),
            keep_aspect_ratio_policy="stretch",
            mode=normalize_mode(str(value("mode"))),
            nearest_mode=str(value("nearest_mode")),
        )

    return type(PLUGIN_OP_TYPE, (OpRun,), {"op_domain": domain, "_run": _run})
