"""The built-in equivalence check: does a rewritten model compute what the original computed?

``compare_models(original, rewritten, new_feeds) -> CheckResult``

Used by the passes (make-dynamic-scale, swap-plugin) after a rewrite. Both models run in ONNX
Runtime on the same seeded random inputs (the original's graph inputs, see
:mod:`graphsurgeon_tools.check.feeds`); the rewritten model additionally gets ``new_feeds``
for the inputs a pass added (e.g. the scales a make-dynamic-scale rewrite exposes, fed their
original values). Every output of the original is compared with the same-named output of the
rewritten model by :func:`graphsurgeon_tools.check.compare.compare_arrays`. The default
tolerance is zero: a graph rewrite that claims equivalence must be exact.

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

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Union

import numpy as np
import onnx
from onnx import ModelProto

from graphsurgeon_tools.check.compare import OutputComparison, compare_arrays
from graphsurgeon_tools.check.feeds import concrete_input_shapes, guard_output_sizes, random_feeds
from graphsurgeon_tools.errors import OnnxToolError

__all__ = ["CheckResult", "OutputComparison", "compare_models", "concrete_input_shapes", "random_feeds"]

#: Domains ORT runs out of the box (besides the default domain).
_ORT_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training")

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "skipped": self.skipped,
            "input_shapes": {k: list(v) for k, v in self.input_shapes.items()},
            "seed": self.seed,
            "atol": self.atol,
            "outputs": [{"name": o.name, "shape": o.shape, "max_abs_diff": o.max_abs_diff,
                         "mismatched": o.mismatched, "passed": o.passed} for o in self.outputs],
            "seconds": self.seconds,
        }

    @property
    def summary(self) -> str:
        if self.skipped:
            return f"check skipped: {self.skipped}"
        worst = max((o.max_abs_diff for o in self.outputs), default=0.0)
        verdict = "passed" if self.passed else "FAILED"
        return f"check {verdict}: {len(self.outputs)} output(s), max |diff| {worst:g} (atol {self.atol:g})"


def _custom_domains(model: ModelProto) -> list[str]:
    domains = set()

    def walk(graph: onnx.GraphProto) -> None:
        for node in graph.node:
            if node.domain not in _ORT_DOMAINS:
                domains.add(f"{node.domain}::{node.op_type}")
            for attr in node.attribute:
                if attr.HasField("g"):
                    walk(attr.g)
                for sub in attr.graphs:
                    walk(sub)

    walk(model.graph)
    local = {(f.domain, f.name) for f in model.functions}
    return sorted(d for d in domains if tuple(d.split("::", 1)) not in local)


def _default_session(model: Union[bytes, str], options: Any) -> Any:
    import onnxruntime as ort

    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def _session_input(model: Union[ModelProto, bytes], proto: ModelProto) -> tuple[bytes, Optional[str]]:
    """Bytes for ORT plus the folder external data is relative to (None if inline)."""
    from graphsurgeon_tools.io import external_data_dir

    folder = external_data_dir(proto)
    blob = model if isinstance(model, bytes) else model.SerializeToString()
    return blob, (str(folder) if folder else None)


def _failed_run(message: str) -> OutputComparison:
    return OutputComparison(output=f"<run failed: {message[:200]}>", reference_output="", candidate_shape=None,
                            reference_shape=None, passed=False, note=message)


def compare_models(
    original: Union[ModelProto, bytes],
    rewritten: Union[ModelProto, bytes],
    new_feeds: Optional[Mapping[str, np.ndarray]] = None,
    *,
    seed: int = 0,
    atol: float = 0.0,
    rtol: float = 0.0,
    dims: Optional[Mapping[str, int]] = None,
    session_factory: Optional[SessionFactory] = None,
    max_output_bytes: Optional[int] = None,
) -> CheckResult:
    """Run both models in ORT on the same seeded inputs and compare every output of the original.

    Args:
        original, rewritten: ModelProtos or their serialized bytes (a pass working in place
            serializes the original before changing it).
        new_feeds: values for the inputs only ``rewritten`` has.
        seed: seed of the random inputs.
        atol, rtol: tolerance, ``|a - b| <= atol + rtol * |b|`` (default: exact).
        dims: sizes for named symbolic dims.
        session_factory: ``factory(model_bytes, session_options)`` replacing the plain CPU
            session (e.g. to register plugin kernels).
        max_output_bytes: per-tensor size limit (see :mod:`graphsurgeon_tools.check.limits`).

    Returns a :class:`CheckResult`; does NOT raise on a mismatch (the caller decides), but
    raises :class:`ResourceLimitError` before running a model whose tensors would exceed
    the output size limit. Does not compare outputs that only the rewritten model has.
    """
    import onnxruntime as ort

    from graphsurgeon_tools.runtime.session import ort_errors

    start = time.perf_counter()
    new_feeds = dict(new_feeds or {})
    original_proto = original if isinstance(original, ModelProto) else ModelProto.FromString(original)
    rewritten_proto = rewritten if isinstance(rewritten, ModelProto) else ModelProto.FromString(rewritten)
    if session_factory is None:
        unknown = sorted(set(_custom_domains(original_proto)) | set(_custom_domains(rewritten_proto)))
        if unknown:
            return CheckResult(
                passed=None,
                skipped=f"custom-domain ops ONNX Runtime cannot run: {', '.join(unknown)}",
                seed=seed,
                atol=atol,
            )
    shapes = concrete_input_shapes(original_proto, dims)
    guard_output_sizes(original_proto, shapes, max_output_bytes)
    feeds = random_feeds(original_proto, shapes, seed)
    factory = session_factory or _default_session
    # ORT's own exception types, a failed plugin kernel, a model the plugin bridge refuses.
    run_errors = (*ort_errors(), OnnxToolError)

    def run(model: Union[ModelProto, bytes], proto: ModelProto, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        blob, folder = _session_input(model, proto)
        options = ort.SessionOptions()
        options.log_severity_level = 4  # failures come back as exceptions, reported in one line; ORT's
        # own coloured log line on stderr would only say it twice (and break the one-line contract)
        if folder:
            options.add_session_config_entry("session.model_external_initializers_file_folder_path", folder)
        session = factory(blob, options)
        wanted = {i.name for i in session.get_inputs()}
        names = [o.name for o in session.get_outputs()]
        values = session.run(names, {k: v for k, v in feed.items() if k in wanted})
        return dict(zip(names, values))

    input_shapes = {k: list(v) for k, v in shapes.items()}
    try:
        expected = run(original, original_proto, feeds)
    except run_errors as exc:  # the original is not ours to judge
        return CheckResult(
            passed=None,
            skipped=f"the original model does not run in ONNX Runtime on inputs {shapes}: "
                    f"{' '.join(str(exc).split())[:300]} (give named dims sizes with dims=)",
            input_shapes=input_shapes, seed=seed, atol=atol, seconds=time.perf_counter() - start,
        )
    try:
        actual = run(rewritten, rewritten_proto, {**feeds, **new_feeds})
    except run_errors as exc:  # the original ran and the rewrite does not: that is a failed check
        return CheckResult(
            passed=False, input_shapes=input_shapes, seed=seed, atol=atol,
            outputs=[_failed_run(" ".join(str(exc).split()))], seconds=time.perf_counter() - start,
        )
    comparisons: list[OutputComparison] = []
    for name, want in expected.items():
        got = actual.get(name)
        if got is None:
            missing = OutputComparison(output=name, reference_output=name, candidate_shape=None,
                                       reference_shape=tuple(np.shape(want)), passed=False,
                                       note="the rewritten model has no such output", mismatched=int(np.size(want)))
            comparisons.append(missing)
            continue
        comparisons.append(compare_arrays(got, want, atol=atol, rtol=rtol, name=name))
    return CheckResult(
        passed=all(c.passed for c in comparisons),
        input_shapes=input_shapes,
        seed=seed,
        atol=atol,
        outputs=comparisons,
        seconds=time.perf_counter() - start,
    )


