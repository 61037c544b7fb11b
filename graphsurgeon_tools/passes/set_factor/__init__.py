"""set-factor: bake a chosen factor back into a dynamic or plugin model (make-dynamic-scale in reverse).

::

    Resize(X, roi, scales | Concat(c, factor) | Concat(Shape(X)[:-k], sizes | Shape(X)[-k:] * factor))
        set_factor(model, sites={"scales": 2})  ->  Resize(X, roi, [1, 1, 2, 2])     (input gone)
    DynamicTRTResize(X, scales | sizes | size-tensor chain | size_tensor input)
        set_factor(model, every=2)              ->  DynamicTRTResize(X, [1, 1, 2, 2])

``sites`` maps a name (a site's node or output name, or the dynamic input it reads; exact or
an ``fnmatch`` glob) to its factor: one number for every spatial axis, one per spatial axis
(``(2, 3)``), one per axis of X, or None for the value make-dynamic-scale / swap-plugin
recorded (``onnxtool.original_values``). ``every`` bakes every other dynamic site at one
factor; ``original=True`` bakes every other dynamic site at its recorded value.

Modules: :mod:`.rule` (the pattern, the check with its refusals, the rewrite: sites, kinds of
dynamic input, factors; constant scales in, dead chains and inputs out). This module: the
options, the result, the pass object, the feeds its self-check gives the input model, and the
public function.

Requires: a model that passes the ONNX checker. Ensures: the result passes the full checker;
each baked site reads a float32 constant; a dynamic input nothing reads any more is gone from
the graph inputs; running the pass again bakes nothing; with ``check=True`` ``result.check``
says whether ONNX Runtime gives identical outputs for the written model and the input model
fed that factor (one run of each; plugin nodes through onnxtool's kernel). A site refused is
in ``result.skipped`` with its Refusal code; a request that bakes nothing and refuses some
site is a RefusedRequestError (exit 3).

Does NOT look into If/Loop/Scan bodies or functions, does NOT turn plugin nodes back into
Resize (``swap_plugin(reverse=True)`` does), and never writes files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import ModelProto

from graphsurgeon_tools import check, runtime
from graphsurgeon_tools.core.checker import inferred_copy, static_shape, value_info_map
from graphsurgeon_tools.core.dtypes import np_dtype
from graphsurgeon_tools.errors import RefusedRequestError, UsageError
from graphsurgeon_tools.passes.base import Pass, PassResult, Timer
from graphsurgeon_tools.passes.set_factor.rule import Factor, Plan, bake, find_sites, plan_sites
from graphsurgeon_tools.resize.original_values import read_original_values

__all__ = ["BakedSite", "SetFactor", "SetFactorOptions", "SetFactorResult", "set_factor"]


@dataclass(frozen=True)
class SetFactorOptions:
    """set_factor's keywords, once: see :func:`set_factor` for each (the CLI builds the same object).

    ``every`` with ``original`` is a UsageError (exit 2) here, before any model is read; a request
    that names nothing is one in :meth:`SetFactor.requires` (the default object is a valid one).
    """

    sites: Optional[Mapping[str, Optional[Factor]]] = None
    every: Optional[Factor] = None
    original: bool = False
    check: bool = True
    check_dims: Optional[Mapping[str, int]] = None
    custom_op_libs: Optional[Sequence[Union[str, Path]]] = None
    optimized_figure: bool = False

    def __post_init__(self) -> None:
        if self.every is not None and self.original:
            raise UsageError("every= and original=True both set the sites not named; give one of them")


@dataclass
class BakedSite:
    """A site that now reads constant scales."""

    node: str
    op_type: str
    inputs: list[str]  # the dynamic inputs it read
    kinds: dict[str, str]  # input -> scales | factor | sizes | size-tensor
    factor: list[float]  # per spatial axis
    scales: list[float]  # the constant written (one per axis of X)
    source: str  # named | all | original


@dataclass
class SetFactorResult(PassResult):
    """What :func:`set_factor` did; ``removed_inputs``: graph inputs nothing reads any more."""

    removed_inputs: list[str] = field(default_factory=list)

    pass_name = "set-factor"

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "removed_inputs": list(self.removed_inputs)}


class SetFactor(Pass):
    """The pass object: plan -> bake (on a copy unless the wrapper loaded the model); the contract's
    wrapper runs the checkers and calls :meth:`self_check` with the model the user handed in."""

    name = "set-factor"
    Options = SetFactorOptions

    def requires(self, model: ModelProto) -> None:
        options = self.options
        if not options.sites and options.every is None and not options.original:
            raise UsageError("set_factor needs sites=, every= or original=True (which sites, at which factor)")

    def call(self, model: ModelProto) -> SetFactorResult:
        options = self.options
        result = SetFactorResult(model=model)
        timer = Timer(result.timings)
        sites = find_sites(model)
        named = {name: _factor(value) for name, value in (options.sites or {}).items()}
        self._plans, result.skipped = plan_sites(
            model, sites, named, _factor(options.every), options.original, read_original_values(model)
        )
        timer.lap("plan")
        if not self._plans:
            if result.skipped:
                detail = "; ".join(f"{s.node or '<unnamed>'}: {s.reason} [{s.code}]" for s in result.skipped[:5])
                raise RefusedRequestError(
                    f"set_factor can bake none of the requested site(s): {detail}", tuple(result.skipped)
                )
            return result
        if not self.owned:  # not in place: the caller's proto stays as it was
            work = ModelProto()
            work.CopyFrom(model)
            model = work
            timer.lap("copy")
        result.removed_inputs, result.removed_nodes = bake(model, self._plans)
        result.model = model
        result.rewritten = [
            BakedSite(
                p.site.node,
                p.site.op_type,
                list(p.site.inputs),
                dict(p.kinds),
                list(p.factor),
                list(p.scales),
                p.source,
            )
            for p in self._plans
        ]
        timer.lap("rewrite")
        return result

    def self_check(self, reference: Any, result: PassResult) -> Any:
        """The written model against ``reference`` (the user's input model) fed the baked factors:
        one ONNX Runtime run of each at the verdict's level (plugin nodes through make_session)."""
        original = reference if isinstance(reference, ModelProto) else ModelProto.FromString(reference)
        dims = self.options.check_dims
        shapes = {k: list(v) for k, v in check.feeds.concrete_input_shapes(original, dims).items()}
        feeds, why_not = check_feeds(original, self._plans, shapes)
        if why_not:
            return check.equivalence.CheckResult(passed=None, skipped=why_not)
        # The factor feeds go to the input model; a dynamic input the written model still reads (a
        # site not selected, or refused) gets the same value there, since both draw from one feed.
        return check.equivalence.compare_models(
            reference,
            result.model,
            reference_feeds=feeds,
            dims=dims,
            session_factory=_session,
            optimized_figure=self.options.optimized_figure,
        )


def _session(blob: bytes, options: Any) -> Any:
    """make_session: runs plugin nodes (onnxtool's kernel) and the scoped custom-op libraries."""
    return runtime.session.make_session(ModelProto.FromString(blob), sess_options=options)


def check_feeds(
    model: ModelProto, plans: list[Plan], input_shapes: dict[str, list[int]]
) -> tuple[dict[str, np.ndarray], Optional[str]]:
    """The feeds that make ``model`` (the input model) compute each plan's scales; (feeds, why not).

    A scales or factor input is fed the plan's values; a sizes input ``floor(in * f)`` of the
    site's X at the check's input shapes (ONNX shape inference), a size tensor zeros of that shape."""
    infos = {i.name: i for i in model.graph.input}
    feeds: dict[str, np.ndarray] = {}
    dims: Optional[dict[str, Any]] = None
    for plan in plans:
        for name, kind in plan.kinds.items():
            if name in feeds:
                continue
            info = infos[name]
            dtype = np_dtype(info.type.tensor_type.elem_type)
            if kind == "scales":
                feeds[name] = np.asarray(plan.scales, dtype=dtype)
            elif kind == "factor":
                feeds[name] = np.asarray(plan.factor, dtype=dtype)
            else:  # sizes, size-tensor: the output size at the check's input shapes
                if dims is None:
                    dims = _shapes_at(model, input_shapes)
                x = dims.get(plan.site.x)
                if not x or any(not isinstance(d, int) for d in x):
                    return {}, (
                        f"the shape of {plan.site.x!r} at the check's inputs is unknown, so {name!r} has no value"
                    )
                k = len(plan.factor)
                out = [int(np.floor(np.float32(d) * np.float32(f))) for d, f in zip(x[-k:], plan.factor)]
                if kind == "sizes":
                    feeds[name] = np.asarray(out, dtype=dtype)
                else:
                    declared = static_shape(info) or ()
                    lead = [d if isinstance(d, int) and d > 0 else 1 for d in declared[: len(declared) - 2]]
                    feeds[name] = np.zeros(lead + out[-2:], dtype=dtype)
    return feeds, None


def _shapes_at(model: ModelProto, input_shapes: dict[str, list[int]]) -> dict[str, Any]:
    """Tensor shapes by ONNX shape inference with the graph inputs fixed to ``input_shapes``."""
    inferred = inferred_copy(model, input_shapes)
    if inferred is None:
        return {}
    return {name: static_shape(info) for name, info in value_info_map(inferred.graph).items()}


def _factor(value: Optional[Factor]) -> Optional[tuple[Any, ...]]:
    """A factor as a tuple, unchecked: plan.parse_factor checks it (positive, finite numbers) and names the site."""
    if value is None:
        return None
    return (value,) if isinstance(value, (int, float, str)) else tuple(value)


def set_factor(
    model: Any,
    sites: Optional[Mapping[str, Optional[Factor]]] = None,
    *,
    every: Optional[Factor] = None,
    original: bool = False,
    check: bool = True,
    check_dims: Optional[Mapping[str, int]] = None,
    custom_op_libs: Optional[Sequence[Union[str, Path]]] = None,
    optimized_figure: bool = False,
) -> SetFactorResult:
    """Bake factors into the dynamic sites of ``model`` (a ModelProto, a path or a gs Graph).

    Args:
        sites: name -> factor (a number, one per spatial axis, one per axis of X, or None for the
            recorded original value); a name is a site's node or output name or a dynamic input's
            (exact or an ``fnmatch`` glob).
        every: the factor of every dynamic site not named in ``sites``.
        original: every dynamic site not named in ``sites`` at its recorded original value.
        check: compare the written model with ``model`` fed the factors in ONNX Runtime.
        check_dims: sizes of named dims for the check's inputs.
        custom_op_libs: ONNX Runtime custom-op libraries the check's sessions register.
        optimized_figure: also run both models of the check at ``ORT_ENABLE_ALL`` and report
            their difference there as a figure (``result.check.optimized``), never a verdict; it
            costs a second ONNX Runtime session per model, so it is off by default (one session
            per model, at the level the verdict is taken at).

    Returns a :class:`SetFactorResult` (``raise_if_failed()`` raises CheckFailedError on a
    difference). Raises UsageError when nothing is asked for, a name matches nothing or a
    factor is not positive; RefusedRequestError when every requested site is refused.
    """
    options = SetFactorOptions(**{key: value for key, value in locals().items() if key != "model"})
    return SetFactor(options)(model)  # type: ignore[return-value]
