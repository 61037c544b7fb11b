"""The pass contract, in force for every pass: one wrapper, one result type, one refusal type.

::

    Pass(options)(model)  =  as_model -> structural checks (ModelCheck) -> requires -> call
                             -> full check -> ensures -> [options.check] self_check(user's model)
                             -> give back the kind given

After onnx-ir's ``PassBase`` (``passes/_pass_infra.py``): a pass declares ``in_place`` and the
wrapper refuses a result that breaks it; a stray exception in ``requires`` becomes
:class:`PreconditionError` (exit 3), in ``ensures`` :class:`PostconditionError` (a bug, exit
4). The structural checks (opset imports, the structural ONNX checker, every inline
initializer's bytes against its shape) are the same for every pass, so one bad model gets
one exit code and one message from every pass. Every user error names the file once.

Each pass has ONE frozen options dataclass (``Pass.Options``) whose fields are its public
function's typed keywords; the function builds it from its own keywords, the CLI from its
flags. The ONNX Runtime self-check is its own step (:meth:`Pass.self_check`): the wrapper
hands it the model the user gave, byte for byte (bytes when the pass may change the proto),
never an intermediate the pass made.

After onnxscript's rewrite rules: a rule is pattern (:func:`select` plus the op types a pass
matches) / check / rewrite, and the check returns the :class:`~graphsurgeon_tools.refusal.Refusal`
(a code, the text, a fix) when it refuses a match; that becomes a :class:`Skip` in the report.

Failure policy: a pass whose built-in check finds a difference RETURNS its result;
:meth:`PassResult.raise_if_failed` raises :class:`CheckFailedError` (exit 1). Usage errors,
invalid models and nonsense scales still raise at once (nothing is there to return).

Requires: nothing beyond ``onnx``; the self-check's machinery (``graphsurgeon_tools.check``,
the ``runtime`` sessions) is reached through their lazy package faces, so it is imported only
when a check runs (``check=False`` / ``--no-check`` never loads it). Ensures: every pass result
has the same fields and the same JSON keys (``to_dict``); the full checker runs once per pass on
the success path. Does NOT save anything (a path or an onnx_graphsurgeon Graph goes through
``graphsurgeon_tools.core.graphs.as_model``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import gc
import os
import time
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, TypeVar

from onnx import ModelProto

from graphsurgeon_tools import check, runtime
from graphsurgeon_tools.core import graphs
from graphsurgeon_tools.core.declared_inputs import DeclaredInput, record_declared_inputs
from graphsurgeon_tools.errors import (
    CheckFailedError,
    OnnxToolError,
    PostconditionError,
    PreconditionError,
    UsageError,
    naming,
)
from graphsurgeon_tools.passes.model_check import ModelCheck, one_line
from graphsurgeon_tools.passes.responsible import responsible_sites
from graphsurgeon_tools.refusal import Refusal

__all__ = ["ModelCheck", "Pass", "PassResult", "Skip", "Timer", "collector_paused", "select"]

T = TypeVar("T")


@dataclass(frozen=True)
class Skip:
    """A matching site left unchanged, and why: the :class:`Refusal` a rule's ``check`` returned."""

    node: str
    op_type: str
    refusal: Refusal

    def __post_init__(self) -> None:
        if not isinstance(self.refusal, Refusal):
            raise TypeError(f"Skip needs a Refusal (a code, the text, a fix), got {type(self.refusal).__name__}")

    @property
    def reason(self) -> str:
        return self.refusal.text

    @property
    def code(self) -> str:
        return self.refusal.code

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "op_type": self.op_type, **self.refusal.to_dict()}


def _plain(item: Any) -> Any:
    """A report entry as JSON-ready data. Flat dataclasses only (dataclasses.asdict deep-copies
    every value, which costs more than the whole rewrite on a graph with thousands of sites)."""
    names = _FIELD_NAMES.get(type(item))
    if names is None:
        if hasattr(item, "to_dict"):
            return item.to_dict()
        if not is_dataclass(item):
            return item
        # a dataclass without to_dict: its field names, once per class (thousands of entries per report)
        names = _FIELD_NAMES[type(item)] = tuple(f.name for f in fields(item))
    state = getattr(item, "__dict__", None)
    if state is not None and tuple(state) == names:  # its fields, in order, and nothing else: copied at C speed
        plain = state.copy()
        for name, value in state.items():
            if isinstance(value, (list, tuple)):
                plain[name] = list(value)
        return plain
    return {name: _copy_value(getattr(item, name)) for name in names}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _copy_value(value: Any) -> Any:
    return list(value) if isinstance(value, (list, tuple)) else value


@dataclass
class PassResult:
    """What a pass did. The same fields in every pass.

    ``model``: the rewritten model (the input itself when nothing changed and the pass is in
    place). ``rewritten``: the sites changed. ``skipped``: sites matched but refused, with
    reasons. ``new_inputs``: graph inputs the pass added. ``removed_nodes``: tensors whose
    producers or initializers the cleanup removed. ``check``: the built-in equivalence
    check (``graphsurgeon_tools.check.equivalence.CheckResult``) or None when not run.
    """

    model: ModelProto
    rewritten: list[Any] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    new_inputs: list[Any] = field(default_factory=list)
    declared_inputs: list[DeclaredInput] = field(default_factory=list)
    removed_nodes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    check: Optional[Any] = None

    pass_name = "pass"
    #: The full check's inference, run and passed by ``call`` on the model it returns
    #: (:class:`graphsurgeon_tools.core.output_types.StrictInference`), or None. Not a field: not reported.
    strict_inference: Optional[Any] = None

    @property
    def changed(self) -> bool:
        return bool(self.rewritten)

    @property
    def failed(self) -> bool:
        """True when the built-in check ran and found a difference."""
        return self.check is not None and self.check.passed is False

    def failure_message(self) -> str:
        bad = [o for o in self.check.outputs if not o.passed]
        sites = {o.name: o for o in getattr(self.check, "sites", ()) if not o.passed}
        if bad:
            worst = max(bad, key=lambda o: o.max_abs_diff)
            text = (
                f"the written model differs from your input model in ONNX Runtime: output {worst.name!r} "
                f"max |diff| {worst.max_abs_diff:g} ({worst.mismatched} elements; {len(bad)} output(s) differ)"
            )
        elif sites:  # only Resize site outputs differ (the model's outputs happen to match)
            text = "the written model differs from your input model in ONNX Runtime at Resize site outputs"
        else:  # only an intermediate step is beyond the bound
            text = "an intermediate step differs from your input model in ONNX Runtime"
        text += _step_failure(self.check)
        blamed = responsible_sites(self.model, sites) if sites and hasattr(self.model, "graph") else []
        if blamed:
            text += "; the difference starts at " + ", ".join(
                f"site {node!r} (its output {out!r}: max |diff| {sites[out].max_abs_diff:g})"
                for node, out in blamed[:5]
            )
        return text

    def raise_if_failed(self) -> "PassResult":
        """Raise :class:`CheckFailedError` when the built-in check found a difference; return self."""
        if self.failed:
            raise CheckFailedError(self.failure_message())
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "pass": self.pass_name,
            "changed": self.changed,
            "rewritten": [_plain(s) for s in self.rewritten],
            "skipped": [_plain(s) for s in self.skipped],
            "new_inputs": [_plain(i) for i in self.new_inputs],
            "declared_inputs": [d.to_dict() for d in self.declared_inputs],
            "removed_nodes": list(self.removed_nodes),
            "notes": list(self.notes),
            "timings": {key: round(value, 4) for key, value in self.timings.items()},
            "check": self.check.to_dict() if self.check is not None else None,
        }


class Timer:
    """Adds wall time per step into a timings dict: ``lap("find")`` closes the step "find"."""

    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self.clock = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = self.timings.get(name, 0.0) + now - self.clock
        self.clock = now


def select(
    candidates: Sequence[T],
    patterns: Optional[Iterable[str]],
    names: Callable[[T], Iterable[str]],
    *,
    what: str,
) -> list[T]:
    """The one site selector: candidates whose name (node name or output name) matches a pattern.

    ``patterns`` are exact names or ``fnmatch`` globs; None or empty selects every candidate.
    A pattern that matches no candidate is a UsageError naming the candidates. Keeps the
    candidates' order. Linear in candidates x patterns.
    """
    if not patterns:
        return list(candidates)
    patterns = list(patterns)
    keyed = [(c, [n for n in names(c) if n]) for c in candidates]
    chosen: set[int] = set()
    for pattern in patterns:
        hits = [i for i, (_, ns) in enumerate(keyed) if any(fnmatch.fnmatchcase(n, pattern) for n in ns)]
        if not hits:
            shown = ", ".join(repr(ns[0]) for _, ns in keyed[:8] if ns) or "none"
            more = f" and {len(keyed) - 8} more" if len(keyed) > 8 else ""
            raise UsageError(f"nodes=[{pattern!r}] matches no {what} node (candidates: {shown}{more})")
        chosen.update(hits)
    return [c for i, (c, _) in enumerate(keyed) if i in chosen]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, back as it was after. A pass allocates
    many small containers (a node's inputs, one entry per site) and makes almost no reference
    cycles, while each of the collector's full passes walks every live object (a 50,000-node model's
    wrappers, every imported module): on big graphs they took an eighth of a whole command's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _guarded(error: type, what: str, hook: Callable[..., None], *args: Any) -> None:
    """Run a ``requires``/``ensures`` hook; a stray (non-user) exception becomes ``error``."""
    try:
        hook(*args)
    except (OnnxToolError, PostconditionError):
        raise
    except Exception as exc:  # noqa: BLE001 - the contract: any other failure of a hook is named
        raise error(f"{what}: {type(exc).__name__}: {one_line(exc)}") from exc


class Pass:
    """A pass: the structural checks -> ``requires`` -> ``call`` -> the full check -> ``ensures``
    -> (``options.check``) :meth:`self_check`, wrapped once here for every pass.

    After onnx-ir's ``PassBase``. A subclass sets ``name`` and ``Options`` (its ONE frozen
    options dataclass, built from the public function's typed keywords; the CLI builds the
    same object), declares ``in_place`` (True: ``call`` may change the proto it is handed;
    False: the caller's proto is never changed, and a result that is the caller's proto with
    changes is refused as our bug) and implements ``call``. ``requires`` / ``ensures`` hold the
    pass's own conditions; a stray exception in them becomes PreconditionError (exit 3) /
    PostconditionError (exit 4). ``self_check(reference, result)`` is the ONNX Runtime check:
    ``reference`` is the model the user handed in, byte for byte (never an intermediate the
    pass made), and the wrapper calls it only when ``options.check`` is set and the model
    changed, inside ``options.custom_op_libs``'s scope.

    ``__call__`` accepts a ModelProto, a path or an ``onnx_graphsurgeon.Graph`` and gives back
    the result with ``model`` of the kind it was given (a path gives a ModelProto); every user
    error it raises names the file once (``label``, default: the path given). A model the
    wrapper loaded or converted is the pass's own: ``self.owned`` tells ``call`` it may change
    it even when not in place.
    """

    name = "pass"
    Options: Any = None
    owned = False
    label = "the model"
    #: Values for the user's model's own non-data inputs in the check (e.g. recorded scales).
    reference_feeds: dict[str, Any] = {}
    _handed: Optional[tuple[ModelProto, bytes]] = None  # during call: its proto, the structural check's bytes

    def __init__(self, options: Any = None) -> None:
        self.options = options if options is not None else self.Options()

    def handed_bytes(self, model: ModelProto) -> Optional[bytes]:
        """``weightless_bytes(model)`` as the structural check made them, where ``model`` is the proto
        ``call`` was handed and ``call`` has not changed it (the caller's word), else None."""
        return self._handed[1] if self._handed is not None and self._handed[0] is model else None

    @property
    def in_place(self) -> bool:
        return False

    def requires(self, model: ModelProto) -> None:
        return None

    def call(self, model: ModelProto) -> PassResult:  # pragma: no cover - interface
        raise NotImplementedError

    def ensures(self, model: ModelProto, result: PassResult) -> None:
        return None

    def self_check(self, reference: Any, result: PassResult) -> Any:  # pragma: no cover - interface
        """The ONNX Runtime check of ``result.model`` against ``reference`` (a CheckResult)."""
        return None

    def record_step(self, step: str, model: ModelProto, **changes: Any) -> None:
        """Record an intermediate model ``call`` made before its own rewrite (onnxsim, inlining):
        the check measures it against the user's model on its own (graphsurgeon_tools.check.steps)."""
        self.intermediates.append(check.steps.Intermediate(step, model, dict(changes)))

    def _steps_against(self, reference: Any, result: PassResult) -> None:
        """Name the check's two models; measure every intermediate step against the user's model.
        A step beyond the check's bound fails the check like any other difference."""
        checked = result.check
        check.steps.name_models(checked, reference, result.model)
        if checked.passed is None:  # skipped: the steps cannot be run either
            return
        options = self.options
        checked.steps = [
            check.steps.measure_step(
                reference,
                step,
                reference_feeds=self.reference_feeds or None,
                dims=getattr(options, "check_dims", None),
                atol=getattr(options, "atol", 0.0),
                rtol=getattr(options, "rtol", 0.0),
            )
            for step in self.intermediates
        ]
        if any(step["passed"] is False for step in checked.steps):
            checked.passed = False

    def __call__(self, model: Any, *, label: Optional[str] = None) -> PassResult:
        if label is None and isinstance(model, (str, os.PathLike)):
            label = os.fsdecode(model)
        self.label = label or "the model"
        with naming(label), collector_paused():
            return self._run(model)

    def _run(self, model: Any) -> PassResult:
        start = time.perf_counter()
        proto, give_back, self.owned = as_model(model)
        loaded = time.perf_counter() - start
        _guarded(PreconditionError, f"{self.name}: the input model", self.requires, proto)
        checked = time.perf_counter()
        model_check = ModelCheck(proto, label=self.label)
        structure = time.perf_counter() - checked
        checking = bool(getattr(self.options, "check", False))
        mutable = self.in_place or self.owned
        # The check's reference is the model as handed in: bytes when the pass may change the proto.
        reference = (proto.SerializeToString() if mutable else proto) if checking else None
        self.intermediates = []
        self._handed = (proto, model_check.snapshot)  # one serialization less for call's shape inference
        result = self.call(proto)
        self._handed = None
        if not mutable and result.changed and result.model is proto:
            raise PostconditionError(f"{self.name} is declared not in place but changed the caller's model")
        result.timings = {"structure": structure, **result.timings}
        if result.changed and result.declared_inputs:  # validate reads them from the written file
            record_declared_inputs(result.model, result.declared_inputs)
        timer = Timer(result.timings)
        if result.changed:
            model_check.ensures(result.model, self.name, result.strict_inference)
            result.strict_inference = None  # the inferred bytes are not kept past the check
        else:
            model_check.unchanged()
        timer.lap("checker")
        _guarded(PostconditionError, f"{self.name}: the output model", self.ensures, result.model, result)
        if reference is not None and result.changed:
            timer = Timer(result.timings)
            # Steps are measured against the same user model: its session is kept for them.
            libraries = getattr(self.options, "custom_op_libs", None)
            with runtime.session.custom_op_scope(libraries), check.reuse.reuse_sessions(bool(self.intermediates)):
                result.check = self.self_check(reference, result)
                if result.check is not None:
                    self._steps_against(reference, result)
            timer.lap("check")
        self.intermediates = []  # the models are not kept past the run
        if self.owned and give_back is None:
            result.timings = {"load": loaded, **result.timings}
        if give_back is not None:
            result.model = give_back(result.model)
        return result


def _step_failure(checked: Any) -> str:
    bad = [step for step in getattr(checked, "steps", ()) if step.get("passed") is False]
    if not bad:
        return ""

    def worst(step: dict[str, Any]) -> float:
        return max(v for v in (step.get("max_abs_diff"), step.get("sites_max_abs_diff"), 0.0) if v is not None)

    return "; " + "; ".join(
        f"step {step['step']} alone differs from your input model by max |diff| {worst(step):g}" for step in bad
    )


def as_model(model: Any) -> tuple[ModelProto, Optional[Callable[[ModelProto], Any]], bool]:
    """(proto, how to give back the kind given or None, whether the proto is a fresh one of ours).

    Through :func:`graphsurgeon_tools.core.graphs.as_model`: a ModelProto as is, a path
    loaded (external data stays on disk), an ``onnx_graphsurgeon.Graph`` exported.
    """
    if isinstance(model, ModelProto):
        return model, None, False
    proto, give_back = graphs.as_model(model)
    return proto, (give_back if graphs.is_gs_graph(model) else None), True
