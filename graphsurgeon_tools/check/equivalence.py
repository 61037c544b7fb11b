"""The built-in ORT check: does a rewritten model compute what the original computed?

``compare_models(original, rewritten, new_feeds) -> CheckResult``

Both models run in ONNX Runtime on the same seeded random inputs (the original's graph
inputs); the rewritten model additionally gets ``new_feeds`` for the inputs a pass added
(e.g. the scales a make-dynamic-scale rewrite exposes, fed their original values). Every
output of the original is compared with the same-named output of the rewritten model.
The default tolerance is zero: a graph rewrite that claims equivalence must be exact.

Symbolic input dims get small concrete sizes (first dim 1, others 32 unless given):
small enough to be quick, big enough for a 32x-downsampling backbone to still have a
pixel left. Static dims are read from the model.

Skipped, not failed (``CheckResult.skipped`` says why): a model with nodes in a custom
domain ORT cannot run (unless a ``session_factory`` that can run them is passed, as the
swap-plugin pass does with :func:`graphsurgeon_tools.runtime.make_session`), and an
original model that ORT cannot run on the generated inputs (e.g. it needs H and W to be
multiples of 64: pass ``dims``). A rewritten model that fails to run where the original
ran is a failed check.
Models with external data run from bytes with ORT told where the data lives, so nothing
is written to disk. onnxruntime is imported inside the functions, never at module level.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Optional, Union

import numpy as np
import onnx
from onnx import ModelProto

from graphsurgeon_tools.errors import InvalidModelError

__all__ = ["CheckResult", "OutputComparison", "compare_models", "concrete_input_shapes", "random_feeds"]

#: Domains ORT runs out of the box (besides the default domain).
_ORT_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training")
DEFAULT_BATCH = 1
DEFAULT_DIM = 32

SessionFactory = Callable[[Union[bytes, ModelProto, str], Any], Any]


@dataclass
class OutputComparison:
    """One output's comparison: the largest absolute difference and whether it is within tolerance."""

    name: str
    shape: list[int]
    max_abs_diff: float
    mismatched: int  # elements outside the tolerance
    passed: bool


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
        return asdict(self)

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


def concrete_input_shapes(
    model: ModelProto, dims: Optional[Mapping[str, int]] = None, *, exclude: tuple[str, ...] = ()
) -> dict[str, list[int]]:
    """A concrete shape for every real graph input (initializer-backed ones excluded).

    Static dims are kept; a named dim found in ``dims`` gets that value; any other
    symbolic or unknown dim becomes 1 at axis 0 and :data:`DEFAULT_DIM` elsewhere.
    """
    dims = dict(dims or {})
    initializers = {init.name for init in model.graph.initializer}
    shapes: dict[str, list[int]] = {}
    for inp in model.graph.input:
        if inp.name in initializers or inp.name in exclude:
            continue
        tensor_type = inp.type.tensor_type
        shape: list[int] = []
        for axis, dim in enumerate(tensor_type.shape.dim):
            if dim.HasField("dim_value"):
                shape.append(int(dim.dim_value))
            elif dim.HasField("dim_param") and dim.dim_param in dims:
                shape.append(int(dims[dim.dim_param]))
            else:
                shape.append(DEFAULT_BATCH if axis == 0 else DEFAULT_DIM)
        shapes[inp.name] = shape
    return shapes


def random_feeds(model: ModelProto, shapes: Mapping[str, list[int]], seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs: floats uniform in [-1, 1), integers in [0, 8), booleans at random."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    by_name = {inp.name: inp for inp in model.graph.input}
    for name, shape in shapes.items():
        elem = by_name[name].type.tensor_type.elem_type
        if elem == 0:
            raise InvalidModelError(f"graph input {name!r} is not a tensor with a known element type")
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem))
        if dtype.kind == "f":
            feeds[name] = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
        elif dtype.kind in "iu":
            feeds[name] = rng.integers(0, 8, size=shape).astype(dtype)
        elif dtype.kind == "b":
            feeds[name] = rng.integers(0, 2, size=shape).astype(bool)
        else:
            raise InvalidModelError(f"graph input {name!r} has dtype {dtype} the check cannot generate")
    return feeds


def guard_output_sizes(model: ModelProto, shapes: Mapping[str, list[int]], max_output_bytes: Optional[int],
                       *, what: str = "check") -> None:
    """Refuse (ResourceLimitError) before ORT allocates a tensor above the configured limit.

    ``shapes``: the concrete input shapes the run will feed; every tensor shape inference can
    then pin down is checked (``what`` starts the message: name the file there). Tensors whose
    size depends on run-time values (scales fed as inputs) are the caller's to check.
    """
    from graphsurgeon_tools.limits import check_output_size
    from graphsurgeon_tools.passes._graph import weightless_copy

    # The inputs the run will create count too: a declared 2**20 x 2**20 input is refused here,
    # not by numpy's MemoryError when the feeds are drawn.
    elem_types = {inp.name: inp.type.tensor_type.elem_type for inp in model.graph.input}
    for name, shape in shapes.items():
        if elem_types.get(name):
            check_output_size(shape, elem_types[name], limit=max_output_bytes, what=f"{what}: input {name!r}")
    skeleton = weightless_copy(model)
    for inp in skeleton.graph.input:
        if inp.name in shapes:
            inp.type.tensor_type.ClearField("shape")
            for value in shapes[inp.name]:
                inp.type.tensor_type.shape.dim.add().dim_value = value
    try:
        inferred = onnx.shape_inference.infer_shapes(skeleton, strict_mode=False, data_prop=True)
    except Exception:  # inference is a guard here, not a verdict
        return
    for info in list(inferred.graph.value_info) + list(inferred.graph.output):
        tensor_type = info.type.tensor_type
        if not tensor_type.HasField("shape") or tensor_type.elem_type == 0:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim]
        if None in dims:
            continue
        try:
            check_output_size(dims, tensor_type.elem_type, limit=max_output_bytes, what=f"{what}: tensor {info.name!r}")
        except ValueError:
            continue


def _default_session(model: Union[bytes, str], options: Any) -> Any:
    import onnxruntime as ort

    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def _session_input(model: Union[ModelProto, bytes], proto: ModelProto) -> tuple[bytes, Optional[str]]:
    """Bytes for ORT plus the folder external data is relative to (None if inline)."""
    from graphsurgeon_tools.io import external_data_dir

    folder = external_data_dir(proto)
    blob = model if isinstance(model, bytes) else model.SerializeToString()
    return blob, (str(folder) if folder else None)


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

    ``original``/``rewritten`` are ModelProtos or their serialized bytes (a pass working in
    place serializes the original before changing it). ``new_feeds`` feeds the inputs that
    only ``rewritten`` has. ``session_factory(model_bytes, session_options)`` replaces the
    plain CPU session (e.g. to register plugin kernels). ``dims`` gives named dims a size.

    Returns a :class:`CheckResult`; does NOT raise on a mismatch (the caller decides), but
    raises :class:`ResourceLimitError` before running a model whose tensors would exceed
    the output size limit, and lets ORT errors other than "unknown op" propagate.
    Does not compare outputs that only the rewritten model has.
    """
    import onnxruntime as ort

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

    try:
        expected = run(original, original_proto, feeds)
    except Exception as exc:  # ORT's own exception types; the original is not ours to judge
        return CheckResult(
            passed=None,
            skipped=f"the original model does not run in ONNX Runtime on inputs {shapes}: "
                    f"{' '.join(str(exc).split())[:300]} (give named dims sizes with dims=)",
            input_shapes={k: list(v) for k, v in shapes.items()},
            seed=seed,
            atol=atol,
            seconds=time.perf_counter() - start,
        )
    try:
        actual = run(rewritten, rewritten_proto, {**feeds, **new_feeds})
    except Exception as exc:  # the original ran and the rewrite does not: that is a failed check
        return CheckResult(
            passed=False,
            input_shapes={k: list(v) for k, v in shapes.items()},
            seed=seed,
            atol=atol,
            outputs=[OutputComparison(f"<run failed: {' '.join(str(exc).split())[:200]}>", [], float("inf"), 0, False)],
            seconds=time.perf_counter() - start,
        )
    comparisons: list[OutputComparison] = []
    for name, want in expected.items():
        got = actual.get(name)
        if got is None or np.shape(got) != np.shape(want):
            comparisons.append(
                OutputComparison(name, list(np.shape(want)), float("inf"), int(np.size(want)), False)
            )
            continue
        want_a, got_a = np.asarray(want), np.asarray(got)
        if want_a.dtype.kind in "fc":
            diff = np.abs(want_a.astype(np.float64) - got_a.astype(np.float64))
            both_nan = np.isnan(want_a) & np.isnan(got_a)
            bad = ~both_nan & ~(diff <= atol + rtol * np.abs(want_a.astype(np.float64)))
            max_diff = float(np.nanmax(np.where(both_nan, 0.0, diff))) if diff.size else 0.0
        else:
            bad = want_a != got_a
            max_diff = float(np.max(np.abs(want_a.astype(np.float64) - got_a.astype(np.float64)))) if want_a.size else 0.0
        count = int(np.count_nonzero(bad))
        comparisons.append(OutputComparison(name, list(want_a.shape), max_diff, count, count == 0))
    return CheckResult(
        passed=all(c.passed for c in comparisons),
        input_shapes={k: list(v) for k, v in shapes.items()},
        seed=seed,
        atol=atol,
        outputs=comparisons,
        seconds=time.perf_counter() - start,
    )
