"""The built-in equivalence check: does a rewritten model compute what the original computed?

``compare_models(original, rewritten, new_feeds) -> CheckResult``

Used by the passes (make-dynamic-scale, swap-plugin) after a rewrite. Both models run in ONNX
Runtime on the same seeded random inputs (the original's graph inputs, see
:mod:`graphsurgeon_tools.check.feeds`); the rewritten model additionally gets ``new_feeds``
for the inputs a pass added (e.g. the scales a make-dynamic-scale rewrite exposes, fed their
original values). Every output of the original is compared with the same-named output of the
rewritten model by :func:`graphsurgeon_tools.check.compare.compare_arrays`, and so is the output
of every Resize/Upsample site both graphs still produce (exactly what a rewrite changed; a failed
check names the sites that differ). The default tolerance is zero: a graph rewrite that claims
equivalence must be exact.

Where exactness is defined: ONNX Runtime at ``ORT_ENABLE_EXTENDED`` (:data:`EXACT_LEVEL`). The
next level, ``ORT_ENABLE_ALL``, adds the layout transformations (NCHWc and the fusions run with
it), which build other kernels for a Resize whose scales are constant than for one whose scales
are an input; a rewrite that is bit-exact at the extended level then differs by 1e-7..1e-5 there,
as much as the original differs from itself between the two levels. That difference is a figure,
never a verdict, and costs a second session per model (session creation is most of a check's
time on a big graph), so it is measured only when asked (``optimized_figure=True``): both models
also run at ``ORT_ENABLE_ALL`` and ``CheckResult.optimized`` gives the difference next to the
original's own drift between the levels. By default each model gets ONE session;
``CheckResult.levels`` and ``CheckResult.sessions`` say which levels ran and which sessions opened.
A check that compares more than once (seeds that take other If branches, an intermediate step
measured against the user's model, the quantized tensors of a QDQ model) does so inside
:func:`graphsurgeon_tools.check.reuse.reuse_sessions`, where each model object keeps its one
session per level (such sessions say ``reused``).

A check where every compared tensor of the original is vacuous (constant on the check's inputs)
proves nothing: it is skipped with that reason, not passed.

Skipped, not failed (``CheckResult.skipped`` says why): a model with nodes in a custom
domain ORT cannot run (unless a ``session_factory`` that can run them is passed, as the
swap-plugin pass does with :func:`graphsurgeon_tools.runtime.make_session`), and an
original model that ORT cannot run on the generated inputs (e.g. it needs H and W to be
multiples of 64: pass ``dims``). A rewritten model that fails to run where the original
ran is a failed check.

Requires: ModelProtos or their bytes. Ensures: a :class:`CheckResult`; raises only
:class:`ResourceLimitError` (before running a model above the output size limit).
Does NOT write to disk (external data is read by ORT from its folder) and imports
onnxruntime inside the functions only.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np
from onnx import ModelProto

from graphsurgeon_tools.check.compare import OutputComparison, abs_diff, compare_arrays
from graphsurgeon_tools.check.feeds import concrete_input_shapes, guard_output_sizes, random_feeds
from graphsurgeon_tools.check.sessions import SITE_OPS, custom_domains, plain_session, session_for
from graphsurgeon_tools.check.tolerance import UlpTolerance
from graphsurgeon_tools.errors import OnnxToolError
from graphsurgeon_tools.resize.original_values import original_feeds
from graphsurgeon_tools.runtime.provenance import evidence_record, recording
from graphsurgeon_tools.runtime.session import ort_errors, scoped_custom_op_libs

__all__ = ["EXACT_LEVEL", "CheckResult", "OutputComparison", "compare_models", "concrete_input_shapes", "random_feeds"]

#: The ORT optimization level the check proves exactness at (a name of ort.GraphOptimizationLevel).
EXACT_LEVEL = "ORT_ENABLE_EXTENDED"
#: The level whose difference is reported as a figure (what a deployment runs by default).
OPTIMIZED_LEVEL = "ORT_ENABLE_ALL"

SessionFactory = Callable[[Union[bytes, ModelProto, str], Any], Any]


@dataclass
class CheckResult:
    """The outcome of :func:`compare_models`; ``passed`` is None when the check was skipped."""

    passed: Optional[bool]
    skipped: Optional[str] = None  # reason, when the check could not run
    input_shapes: dict[str, list[int]] = field(default_factory=dict)
    seed: int = 0
    atol: float = 0.0
    outputs: list[OutputComparison] = field(default_factory=list)
    seconds: float = 0.0
    sites: list[OutputComparison] = field(default_factory=list)  # Resize/Upsample outputs both graphs share
    level: str = EXACT_LEVEL
    # Every level the two models ran at (the verdict's first; OPTIMIZED_LEVEL when its figure was asked for).
    levels: list[str] = field(default_factory=list)
    # Each ONNX Runtime session the comparison ran a model in: {"model": "reference"|"candidate", "level",
    # "reused": True when it was kept by an earlier comparison of the same check (check.sessions)}.
    sessions: list[dict[str, Any]] = field(default_factory=list)
    # At OPTIMIZED_LEVEL: {"level", "max_abs_diff" (rewritten vs original), "original_drift" (the
    # original against itself between the two levels), "note"}; empty when not run.
    optimized: dict[str, Any] = field(default_factory=dict)
    tolerance: str = ""  # the bound in words when it is not one atol/rtol (check.tolerance.UlpTolerance)
    # Figures a caller measured beside the verdict (e.g. swap-plugin's quantized outputs), never a verdict.
    figures: dict[str, Any] = field(default_factory=dict)
    # What ran (runtime.provenance): versions, the plugin kernel, each model's sha256 by role.
    evidence: dict[str, Any] = field(default_factory=dict)
    # The two models compared, by role and sha256 (a pass's check: the user's "input" and the
    # "written" model), and each intermediate step a pass ran, measured against the user's model
    # on its own (graphsurgeon_tools.check.steps).
    models: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def differing_sites(self) -> list[str]:
        """Sites whose output differs, in graph order: where a failed check's difference starts."""
        return [s.name for s in self.sites if not s.passed]

    def to_dict(self) -> dict[str, Any]:
        def row(o: OutputComparison) -> dict[str, Any]:
            return {
                "name": o.name,
                "shape": o.shape,
                "max_abs_diff": o.max_abs_diff,
                "mismatched": o.mismatched,
                "passed": o.passed,
                "vacuous": o.vacuous,
            }

        return {
            "passed": self.passed,
            "skipped": self.skipped,
            "level": self.level,
            "levels": list(self.levels),
            "sessions": [dict(entry) for entry in self.sessions],
            "input_shapes": {k: list(v) for k, v in self.input_shapes.items()},
            "seed": self.seed,
            "atol": self.atol,
            "outputs": [row(o) for o in self.outputs],
            "sites": [row(o) for o in self.sites],
            "optimized": dict(self.optimized),
            "tolerance": self.tolerance,
            "figures": dict(self.figures),
            "seconds": self.seconds,
            "evidence": self.evidence,
            "models": dict(self.models),
            "steps": [dict(step) for step in self.steps],
        }

    @property
    def summary(self) -> str:
        if self.skipped:
            return f"check skipped: {self.skipped}"
        worst = max((o.max_abs_diff for o in self.outputs), default=0.0)
        verdict = "passed" if self.passed else "FAILED"
        text = (
            f"check {verdict}: {len(self.outputs)} output(s) and {len(self.sites)} site output(s) at "
            f"{self.level}, max |diff| {worst:g} ("
            + (f"dtype-aware bound, largest atol {self.atol:g})" if self.tolerance else f"atol {self.atol:g})")
        )
        if self.differing_sites:
            text += f"; first differing site output: {self.differing_sites[0]}"
        if self.optimized.get("max_abs_diff") is not None:
            text += f"; at {self.optimized['level']} max |diff| {self.optimized['max_abs_diff']:g}"
            drift = self.optimized.get("original_drift")
            if drift is not None:
                text += f" (the original differs from itself by {drift:g} between the levels)"
        return text


def _shared_site_outputs(original: ModelProto, rewritten: ModelProto) -> list[str]:
    """Outputs of the original's Resize/Upsample/plugin nodes that a node of the rewritten graph still produces."""
    produced = {name for node in rewritten.graph.node for name in node.output if name}
    graph_outputs = {o.name for o in original.graph.output} | {o.name for o in rewritten.graph.output}
    return [
        node.output[0]
        for node in original.graph.node
        if node.op_type in SITE_OPS
        and node.output
        and node.output[0] in produced
        and node.output[0] not in graph_outputs
    ]


def _max_diff(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> Optional[float]:
    diffs = [
        float(abs_diff(np.asarray(a[name]), np.asarray(b[name])).max())
        for name in a
        if name in b
        and np.shape(a[name]) == np.shape(b[name])
        and np.size(a[name])
        and np.issubdtype(np.asarray(a[name]).dtype, np.number)
    ]
    return max(diffs) if diffs else None


def _failed_run(message: str) -> OutputComparison:
    return OutputComparison(
        output=f"<run failed: {message[:200]}>",
        reference_output="",
        candidate_shape=None,
        reference_shape=None,
        passed=False,
        note=message,
    )


def _with_evidence(compare: Callable[..., CheckResult]) -> Callable[..., CheckResult]:
    """The check's result carries the evidence record: what ran, the hashes of the bytes compared
    (reference: the original, candidate: the rewrite)."""

    @functools.wraps(compare)
    def run(
        original: Union[ModelProto, bytes], rewritten: Union[ModelProto, bytes], *args: Any, **kwargs: Any
    ) -> CheckResult:
        with recording() as ran:
            result = compare(original, rewritten, *args, **kwargs)
        result.evidence = evidence_record(ran, models=[("candidate", rewritten), ("reference", original)])
        return result

    return run


@_with_evidence
def compare_models(
    original: Union[ModelProto, bytes],
    rewritten: Union[ModelProto, bytes],
    new_feeds: Optional[Mapping[str, np.ndarray]] = None,
    *,
    reference_feeds: Optional[Mapping[str, np.ndarray]] = None,
    seed: int = 0,
    atol: float = 0.0,
    rtol: float = 0.0,
    dims: Optional[Mapping[str, int]] = None,
    session_factory: Optional[SessionFactory] = None,
    max_output_bytes: Optional[int] = None,
    tolerance: Optional[UlpTolerance] = None,
    level: str = EXACT_LEVEL,
    optimized_figure: bool = False,
    outputs: Optional[Sequence[str]] = None,
    expose: Sequence[str] = (),
) -> CheckResult:
    """Run both models in ORT on the same seeded inputs and compare every output of the original.

    Args:
        original, rewritten: ModelProtos or their serialized bytes (a pass working in place
            serializes the original before changing it).
        new_feeds: values for the inputs only ``rewritten`` has.
        reference_feeds: values for inputs of ``original`` that are not data (e.g. the scales
            input of a model an earlier rewrite made dynamic, fed its recorded value); the
            other inputs get the seeded random values.
        seed: seed of the random inputs.
        atol, rtol: tolerance, ``|a - b| <= atol + rtol * |b|`` (default: exact).
        dims: sizes for named symbolic dims.
        session_factory: ``factory(model_bytes, session_options)`` replacing the plain CPU
            session (e.g. to register plugin kernels).
        max_output_bytes: per-tensor size limit (see :mod:`graphsurgeon_tools.check.limits`).
        tolerance: a dtype-aware bound per tensor (:mod:`graphsurgeon_tools.check.tolerance`)
            instead of ``atol``/``rtol``; ``CheckResult.atol`` is then the largest atol it used.
        level: the ORT optimization level the verdict is taken at (a name of
            ``ort.GraphOptimizationLevel``); OPTIMIZED_LEVEL's difference stays a figure.
        optimized_figure: also run both models at OPTIMIZED_LEVEL for that figure (a second
            session per model); False (default): one session per model, ``optimized`` left empty.
        outputs: the tensors of the original compared as its outputs (default: its graph outputs),
            e.g. the quantized tensors after the sites, from the sessions an earlier comparison
            kept (:func:`graphsurgeon_tools.check.reuse.reuse_sessions`).
        expose: tensors a session opened here also exposes, for a later comparison in the same
            :func:`~graphsurgeon_tools.check.reuse.reuse_sessions` scope to fetch.

    Returns a :class:`CheckResult`; does NOT raise on a mismatch (the caller decides), but
    raises :class:`ResourceLimitError` before running a model whose tensors would exceed
    the output size limit. Does not compare outputs that only the rewritten model has.
    """
    start = time.perf_counter()
    new_feeds = dict(new_feeds or {})
    original_proto = original if isinstance(original, ModelProto) else ModelProto.FromString(original)
    rewritten_proto = rewritten if isinstance(rewritten, ModelProto) else ModelProto.FromString(rewritten)
    if session_factory is None and not scoped_custom_op_libs():  # with the user's libraries, ORT decides
        unknown = sorted(set(custom_domains(original_proto)) | set(custom_domains(rewritten_proto)))
        if unknown:
            return CheckResult(
                passed=None,
                skipped=f"custom-domain ops ONNX Runtime cannot run: {', '.join(unknown)}",
                seed=seed,
                atol=atol,
            )
    shapes = concrete_input_shapes(original_proto, dims)
    guard_output_sizes(original_proto, shapes, max_output_bytes)
    # Inputs an earlier rewrite added (a dynamic scales/sizes input) get the value they held in the
    # model that rewrite started from: random values would be nonsense scales ORT refuses.
    feeds = {
        **random_feeds(original_proto, shapes, seed),
        **original_feeds(original_proto),
        **dict(reference_feeds or {}),
    }
    factory = session_factory or plain_session
    # ORT's own exception types, a failed plugin kernel, a model the plugin bridge refuses.
    run_errors = (*ort_errors(), OnnxToolError)

    opened: list[dict[str, Any]] = []
    models = {"reference": (original, original_proto), "candidate": (rewritten, rewritten_proto)}

    def run(role: str, feed: Mapping[str, np.ndarray], level: str, extra: Sequence[str] = ()) -> dict[str, np.ndarray]:
        key, proto = models[role]
        session, fresh = session_for(key, proto, level, [*output_names, *extra], factory, expose=expose)
        opened.append({"model": role, "level": level, "reused": not fresh})
        wanted = {i.name for i in session.get_inputs()}
        fetch = {*output_names, *extra}  # what is compared: the original's outputs and the shared site outputs
        names = [o.name for o in session.get_outputs() if o.name in fetch]
        values = session.run(names, {k: v for k, v in feed.items() if k in wanted})
        return dict(zip(names, values))

    input_shapes = {k: list(v) for k, v in shapes.items()}
    rewritten_feeds = {**feeds, **new_feeds}
    sites = _shared_site_outputs(original_proto, rewritten_proto)
    output_names = list(outputs) if outputs is not None else [o.name for o in original_proto.graph.output]
    try:
        expected = run("reference", feeds, level, sites)
    except run_errors as exc:  # the original is not ours to judge
        return CheckResult(
            passed=None,
            skipped=f"the original model does not run in ONNX Runtime on inputs {shapes}: "
            f"{' '.join(str(exc).split())[:300]} (give named dims sizes with dims=)",
            input_shapes=input_shapes,
            seed=seed,
            atol=atol,
            seconds=time.perf_counter() - start,
            levels=[level],
            sessions=opened,
        )
    try:
        actual = run("candidate", rewritten_feeds, level, sites)
    except run_errors as exc:  # the original ran and the rewrite does not: that is a failed check
        return CheckResult(
            passed=False,
            input_shapes=input_shapes,
            seed=seed,
            atol=atol,
            outputs=[_failed_run(" ".join(str(exc).split()))],
            seconds=time.perf_counter() - start,
            levels=[level],
            sessions=opened,
        )

    def bounds(got: Any, want: Any, name: str) -> dict[str, float]:
        if tolerance is None:
            return {"atol": atol, "rtol": rtol}
        found = tolerance.bounds(got, want, name)
        return {"atol": found[0], "rtol": found[1]}

    comparisons: list[OutputComparison] = []
    for name in output_names:
        want, got = expected[name], actual.get(name)
        if got is None:
            missing = OutputComparison(
                output=name,
                reference_output=name,
                candidate_shape=None,
                reference_shape=tuple(np.shape(want)),
                passed=False,
                note="the rewritten model has no such output",
                mismatched=int(np.size(want)),
            )
            comparisons.append(missing)
            continue
        comparisons.append(compare_arrays(got, want, name=name, **bounds(got, want, name)))
    site_comparisons = [
        compare_arrays(
            actual[name], expected[name], name=name, kind="site", **bounds(actual[name], expected[name], name)
        )
        for name in sites
        if name in actual and name in expected
    ]
    result = CheckResult(
        passed=all(c.passed for c in (*comparisons, *site_comparisons)),
        input_shapes=input_shapes,
        seed=seed,
        atol=atol if tolerance is None else tolerance.largest_atol(),
        outputs=comparisons,
        sites=site_comparisons,
        level=level,
        levels=[level],
        sessions=opened,
        tolerance="" if tolerance is None else tolerance.describe(),
    )
    compared = [*comparisons, *site_comparisons]
    if result.passed and compared and all(c.vacuous for c in compared):
        result.passed = None
        result.skipped = (
            f"vacuous: every compared tensor of the original is constant on the check's inputs "
            f"{shapes} (give other sizes with dims=)"
        )
    if optimized_figure:
        result.optimized = _optimized(
            run, feeds, rewritten_feeds, {name: expected[name] for name in output_names}, run_errors
        )
        if result.optimized["max_abs_diff"] is not None or not result.optimized["note"]:
            result.levels.append(OPTIMIZED_LEVEL)
    result.seconds = time.perf_counter() - start
    return result


def _optimized(
    run: Callable[..., dict[str, np.ndarray]],
    feeds: Mapping[str, np.ndarray],
    rewritten_feeds: Mapping[str, np.ndarray],
    exact: Mapping[str, np.ndarray],
    run_errors: tuple[type[BaseException], ...],
) -> dict[str, Any]:
    """The figure at OPTIMIZED_LEVEL: rewritten vs original, and the original against itself across levels."""
    figures: dict[str, Any] = {"level": OPTIMIZED_LEVEL, "max_abs_diff": None, "original_drift": None, "note": ""}
    try:
        original_all = run("reference", feeds, OPTIMIZED_LEVEL)
        rewritten_all = run("candidate", rewritten_feeds, OPTIMIZED_LEVEL)
    except run_errors as exc:  # a figure, not a verdict: say why it is missing
        figures["note"] = f"not measured: {' '.join(str(exc).split())[:200]}"
        return figures
    figures["max_abs_diff"] = _max_diff(original_all, rewritten_all)
    figures["original_drift"] = _max_diff(exact, original_all)
    return figures
