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

Modules: :mod:`.plan` (sites, kinds of dynamic input, factors, refusals), :mod:`.rewrite`
(constant scales in, dead chains and inputs out; the check's feeds). This module: the options,
the result, the pass object and the public function.

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
from typing import Any, Mapping, Optional, Sequence

from onnx import ModelProto

from graphsurgeon_tools.errors import RefusedRequestError, UsageError
from graphsurgeon_tools.passes.base import ModelCheck, Pass, PassResult, Timer
from graphsurgeon_tools.passes.set_factor.plan import Factor, find_sites, plan_sites
from graphsurgeon_tools.passes.set_factor.rewrite import bake, check_feeds

__all__ = ["BakedSite", "SetFactor", "SetFactorOptions", "SetFactorResult", "set_factor"]


@dataclass(frozen=True)
class SetFactorOptions:
    """set_factor's keywords, once (the CLI builds the same object from its flags)."""

    sites: tuple[tuple[str, Optional[tuple[float, ...]]], ...] = ()
    every: Optional[tuple[float, ...]] = None
    original: bool = False
    check: bool = True
    check_dims: Optional[Mapping[str, int]] = None
    custom_op_libs: Optional[tuple[str, ...]] = None


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
    """The pass object: plan -> bake on a copy; the self-check runs the input model fed the factors."""

    name = "set_factor"
    Options = SetFactorOptions
    in_place = False
    # The contract's wrapper runs the structural/full checks and calls self_check; a base without
    # self_check (before the contract landed) leaves both to this pass (see ensures).
    _wrapper_checks = hasattr(Pass, "self_check")

    def __init__(self, options: Optional[SetFactorOptions] = None) -> None:
        self.options = options if options is not None else SetFactorOptions()

    def call(self, model: ModelProto) -> SetFactorResult:
        from graphsurgeon_tools.passes.make_dynamic_scale.rewrite import read_original_values

        options = self.options
        if not self._wrapper_checks:
            self._model_check = ModelCheck(model)
            self._input = model
        result = SetFactorResult(model=model)
        timer = Timer(result.timings)
        sites = find_sites(model)
        plans, result.skipped = plan_sites(model, sites, dict(options.sites), options.every, options.original,
                                           read_original_values(model))
        timer.lap("plan")
        if not plans:
            if result.skipped:
                detail = "; ".join(f"{s.node or '<unnamed>'}: {s.reason} [{s.code}]" for s in result.skipped[:5])
                raise RefusedRequestError(f"set_factor can bake none of the requested site(s): {detail}",
                                          tuple(result.skipped))
            return result
        work = ModelProto()
        work.CopyFrom(model)  # never the caller's proto: the self-check reads it afterwards
        timer.lap("copy")
        result.removed_inputs, result.removed_nodes = bake(work, plans)
        result.model = work
        result.rewritten = [BakedSite(p.site.node, p.site.op_type, list(p.site.inputs), dict(p.kinds),
                                      list(p.factor), list(p.scales), p.source) for p in plans]
        self._plans = plans
        timer.lap("rewrite")
        return result

    def ensures(self, model: ModelProto, result: PassResult) -> None:  # type: ignore[override]
        if self._wrapper_checks:
            return
        timer = Timer(result.timings)
        if result.changed:
            self._model_check.ensures(model, self.name)
        else:
            self._model_check.unchanged()
        timer.lap("checker")
        if self.options.check and result.changed:
            from graphsurgeon_tools.runtime.session import custom_op_scope

            with custom_op_scope(self.options.custom_op_libs):
                result.check = self.self_check(self._input, result)
            timer.lap("check")

    def self_check(self, reference: Any, result: PassResult) -> Any:
        """The written model against ``reference`` (the user's input model) fed the baked factors."""
        from graphsurgeon_tools.check.equivalence import CheckResult, compare_models
        from graphsurgeon_tools.check.feeds import concrete_input_shapes

        reference = reference if isinstance(reference, ModelProto) else ModelProto.FromString(reference)
        dims = self.options.check_dims
        shapes = {k: list(v) for k, v in concrete_input_shapes(result.model, dims).items()}
        feeds, why_not = check_feeds(reference, self._plans, shapes)
        if why_not:
            return CheckResult(passed=None, skipped=why_not)
        # The written model is the side the random inputs are drawn for; the input model gets the
        # same inputs plus the factor feeds. A dynamic input the written model still reads (a site
        # not selected or refused) is pinned to the same value in both sessions.
        return compare_models(result.model, reference, feeds, dims=dims, session_factory=_Pinned.factory(feeds))


class _Pinned:
    """A session (make_session: plugin nodes and the scoped custom-op libraries run) whose ``run``
    feeds ``pinned`` values to the inputs of those names, whatever the caller drew for them."""

    def __init__(self, session: Any, pinned: Mapping[str, Any]) -> None:
        self.session, self.pinned = session, pinned

    @classmethod
    def factory(cls, pinned: Mapping[str, Any]) -> Any:
        from graphsurgeon_tools.runtime.session import make_session

        return lambda blob, options: cls(make_session(ModelProto.FromString(blob), sess_options=options), pinned)

    def get_inputs(self) -> Any:
        return self.session.get_inputs()

    def get_outputs(self) -> Any:
        return self.session.get_outputs()

    def run(self, names: Any, feed: Mapping[str, Any]) -> Any:
        return self.session.run(names, {k: self.pinned.get(k, v) for k, v in feed.items()})


def _factor(value: Optional[Factor]) -> Optional[tuple[float, ...]]:
    if value is None:
        return None
    # checked (positive, finite numbers) by plan.parse_factor, which names the site
    return (value,) if isinstance(value, (int, float, str)) else tuple(value)


def set_factor(
    model: Any,
    sites: Optional[Mapping[str, Optional[Factor]]] = None,
    *,
    every: Optional[Factor] = None,
    original: bool = False,
    check: bool = True,
    check_dims: Optional[Mapping[str, int]] = None,
    custom_op_libs: Optional[Sequence[str]] = None,
) -> SetFactorResult:
    """Bake factors into the dynamic sites of ``model`` (a ModelProto, a path or a gs Graph).

    Args:
        sites: name -> factor (a number, one per spatial axis, one per axis of X, or None for the
            recorded original value); a name is a site's node or output name or a dynamic input's.
        every: the factor of every dynamic site not named in ``sites``.
        original: every dynamic site not named in ``sites`` at its recorded original value.
        check: compare the written model with ``model`` fed the factors in ONNX Runtime.
        check_dims: sizes of named dims for the check's inputs.
        custom_op_libs: ONNX Runtime custom-op libraries the check's sessions register.

    Returns a :class:`SetFactorResult` (``raise_if_failed()`` raises CheckFailedError on a
    difference). Raises UsageError when nothing is asked for, a name matches nothing or a
    factor is not positive; RefusedRequestError when every requested site is refused.
    """
    if not sites and every is None and not original:
        raise UsageError("set_factor needs sites=, every= or original=True (which sites, at which factor)")
    if every is not None and original:
        raise UsageError("every= and original=True both set the sites not named; give one of them")
    options = SetFactorOptions(
        sites=tuple((name, _factor(value)) for name, value in (sites or {}).items()),
        every=_factor(every), original=original, check=check,
        check_dims=dict(check_dims) if check_dims else None,
        custom_op_libs=tuple(str(p) for p in custom_op_libs) if custom_op_libs else None,
    )
    return SetFactor(options)(model)
