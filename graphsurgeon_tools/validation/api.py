"""Prove a rewrite right: run the candidate in ONNX Runtime against a reference over a sweep of factors.

``validate(candidate, reference, *, factors, inputs, atol, rtol) -> ValidationReport``::

    candidate (ONNX, run through runtime.make_session, plugin nodes included)
        x factor sweep (each factor fed through whatever scale input the rewrite made)
        vs reference (ONNX model | torch:srcnn | python:MODULE:CALLABLE | onnx-reference)
        -> per factor and output: shapes, max/mean abs error, max rel error, share out of
           tolerance, the atol that would have passed, PSNR (image-like outputs)
        -> on a mismatch: a diagnosis (which Resize attribute change reproduces the
           reference, border/interior and periodic error patterns, differing weights)

An element is within tolerance when ``|candidate - reference| <= atol + rtol * |reference|``
(numpy's ``isclose``; equal infinities and NaN-vs-NaN count as equal). The report passes
when at least one factor was compared and every compared output is within tolerance.

Static models: a reference without scale inputs is compared only at the factor it bakes
in (the other factors are reported as skipped, with the reason); one whose Resize nodes
bake different factors is compared once, the candidate's scale inputs fed the reference's
scales node by node. A static candidate likewise runs only at its own factor.

The module is ``validation``, not ``validate``: a submodule named like the function would
replace ``graphsurgeon_tools.validate`` (the function) with itself as soon as anything
imported it, and ``from graphsurgeon_tools import validate`` would then return a module.

Library code: nothing is printed and nothing is written except by :func:`write_junit`.
The report is a value; :meth:`ValidationReport.raise_if_failed` turns a mismatch into
:class:`CheckFailedError` (exit code 1) for pipelines. torch is imported only when a
PyTorch reference is asked for.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import onnx

from graphsurgeon_tools.errors import CheckFailedError, InvalidScalesError, OnnxToolError, UsageError
from graphsurgeon_tools.io import load_model, write_bytes_atomic
from graphsurgeon_tools.references import (
    PLUGIN_OP_TYPE,
    Factor,
    OnnxRunner,
    Ports,
    Reference,
    ReferenceLike,
    RunFailed,
    default_opset,
    format_factor,
    make_reference,
)

__all__ = [
    "DEFAULT_FACTORS",
    "Diagnosis",
    "FactorResult",
    "OutputComparison",
    "ValidationReport",
    "compare_arrays",
    "load_onnx",
    "render_report",
    "validate",
    "write_junit",
]

DEFAULT_FACTORS: tuple[float, ...] = (2.0, 3.0, 4.0)
DEFAULT_ATOL = 1e-4
DEFAULT_RTOL = 1e-3
# Symbolic spatial dims of random inputs get this size: big enough for a 9x9 conv and
# border effects to separate from the interior, small enough to keep a sweep quick.
DEFAULT_INPUT_SIZE = 32

ProgressCallback = Callable[[str, int, int], None]
InputLike = Union[np.ndarray, str, os.PathLike]


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


@dataclass
class OutputComparison:
    """One output at one factor. Figures are ``None`` when the shapes differ or a side failed."""

    output: str
    reference_output: str
    candidate_shape: Optional[tuple[int, ...]]
    reference_shape: Optional[tuple[int, ...]]
    passed: bool
    max_abs_error: Optional[float] = None
    mean_abs_error: Optional[float] = None
    max_rel_error: Optional[float] = None
    mismatch_share: Optional[float] = None  # share of elements out of tolerance, 0..1
    passing_atol: Optional[float] = None  # smallest atol that passes at the given rtol
    psnr_db: Optional[float] = None  # image-like outputs only; inf when identical
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "reference_output": self.reference_output,
            "candidate_shape": list(self.candidate_shape) if self.candidate_shape is not None else None,
            "reference_shape": list(self.reference_shape) if self.reference_shape is not None else None,
            "passed": self.passed,
            "max_abs_error": self.max_abs_error,
            "mean_abs_error": self.mean_abs_error,
            "max_rel_error": self.max_rel_error,
            "mismatch_share": self.mismatch_share,
            "passing_atol": self.passing_atol,
            "psnr_db": self.psnr_db,
            "note": self.note,
        }


def _is_image_like(shape: Sequence[int]) -> bool:
    return len(shape) == 4 and shape[1] in (1, 3)


def _abs_diff(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    a = actual.astype(np.float64, copy=False)
    b = expected.astype(np.float64, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - b)
    # inf - inf is NaN: equal infinities and NaN at the same place count as agreement.
    agree = (a == b) | (np.isnan(a) & np.isnan(b))
    diff[agree] = 0.0
    diff[np.isnan(diff)] = np.inf
    return diff


def compare_arrays(actual: np.ndarray, expected: np.ndarray, *, atol: float, rtol: float,
                   name: str = "output", reference_name: str = "") -> OutputComparison:
    """Statistics of ``actual`` (candidate) against ``expected`` (reference).

    Relative error is taken over elements with ``|expected| > atol`` (near zero, atol is the
    yardstick). PSNR uses the reference's value range as the peak. Does not broadcast: a shape
    difference is a failure with a note, no figures.
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    result = OutputComparison(
        output=name,
        reference_output=reference_name or name,
        candidate_shape=tuple(int(d) for d in actual.shape),
        reference_shape=tuple(int(d) for d in expected.shape),
        passed=False,
    )
    if actual.shape != expected.shape:
        result.note = f"shape {list(actual.shape)} differs from the reference's {list(expected.shape)}"
        return result
    if actual.size == 0:
        result.passed = True
        result.max_abs_error = result.mean_abs_error = result.max_rel_error = 0.0
        result.mismatch_share = result.passing_atol = 0.0
        result.note = "empty output"
        return result
    numeric = all(np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_ for a in (actual, expected))
    if not numeric:  # strings (or objects) have no error figures: equal or not
        unequal = actual != expected
        result.passed = not bool(np.any(unequal))
        result.mismatch_share = float(np.mean(unequal))
        result.note = (f"non-numeric output ({actual.dtype} vs {expected.dtype}) compared for equality"
                       + ("" if result.passed else f": {int(np.sum(unequal))} of {unequal.size} elements differ"))
        return result
    diff = _abs_diff(actual, expected)
    b = np.abs(expected.astype(np.float64, copy=False))
    b_finite = np.where(np.isfinite(b), b, 0.0)
    out_of_tolerance = diff > atol + rtol * b_finite
    result.max_abs_error = float(diff.max())
    result.mean_abs_error = float(diff.mean())
    significant = b_finite > atol
    result.max_rel_error = float((diff[significant] / b_finite[significant]).max()) if significant.any() else 0.0
    result.mismatch_share = float(out_of_tolerance.mean())
    result.passing_atol = float(max(0.0, (diff - rtol * b_finite).max()))
    if _is_image_like(expected.shape):
        finite = np.isfinite(expected)
        peak = float(np.ptp(expected[finite])) if finite.any() else 0.0
        peak = peak if peak > 0 else 1.0
        mse = float(np.mean(np.square(diff))) if np.isfinite(diff).all() else math.inf
        result.psnr_db = math.inf if mse == 0 else (0.0 if not math.isfinite(mse) else 10 * math.log10(peak**2 / mse))
    result.passed = not bool(out_of_tolerance.any())
    if not result.passed:
        result.note = f"{int(out_of_tolerance.sum())} of {out_of_tolerance.size} elements out of tolerance"
    return result


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


@dataclass
class FactorResult:
    """One sweep point: compared, skipped (with the reason) or failed to run (with the error)."""

    factor: Factor
    status: str  # passed | failed | skipped | error
    reason: str = ""
    outputs: list[OutputComparison] = field(default_factory=list)
    scale_feeds: dict[str, list[Any]] = field(default_factory=dict)
    seconds: float = 0.0
    # What factor=None means here: "baked" (the scales the static side holds) or "as-is"
    # (a model without any resize, where a factor means nothing).
    factor_label: str = "baked"

    def to_dict(self) -> dict[str, Any]:
        return {
            "factor": self.factor_label if self.factor is None else self.factor,
            "status": self.status,
            "reason": self.reason,
            "outputs": [o.to_dict() for o in self.outputs],
            "scale_feeds": self.scale_feeds,
            "seconds": round(self.seconds, 4),
        }


@dataclass
class Diagnosis:
    """What a mismatch looks like it comes from.

    ``explained_by`` is the Resize attribute change that, applied to the candidate,
    reproduces the reference within tolerance (the strongest evidence there is);
    ``closest`` the best change otherwise. ``pattern`` describes where the error sits
    (border vs interior, periodic with the upscale factor); ``weights`` lists parameters
    that differ between candidate and reference when their names match.
    """

    factor: Factor
    output: str
    summary: str
    explained_by: Optional[dict[str, Any]] = None
    closest: Optional[dict[str, Any]] = None
    pattern: dict[str, Any] = field(default_factory=dict)
    weights: list[dict[str, Any]] = field(default_factory=list)
    variants_tried: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "factor": "baked" if self.factor is None else self.factor,
            "output": self.output,
            "summary": self.summary,
            "explained_by": self.explained_by,
            "closest": self.closest,
            "pattern": self.pattern,
            "weights": self.weights,
            "variants_tried": self.variants_tried,
        }


@dataclass
class ValidationReport:
    """Everything ``validate`` found. ``passed`` is the verdict; ``to_dict()`` is the JSON report."""

    candidate: str
    reference: dict[str, Any]
    atol: float
    rtol: float
    seed: int
    inputs: list[dict[str, Any]]
    candidate_ports: dict[str, Any]
    factors: list[FactorResult]
    diagnosis: Optional[Diagnosis] = None
    notes: list[str] = field(default_factory=list)

    @property
    def compared(self) -> list[FactorResult]:
        return [f for f in self.factors if f.status in ("passed", "failed", "error")]

    @property
    def passed(self) -> bool:
        compared = self.compared
        return bool(compared) and all(f.status == "passed" for f in compared)

    def summary_line(self) -> str:
        compared = self.compared
        failed = [f for f in compared if f.status != "passed"]
        skipped = [f for f in self.factors if f.status == "skipped"]
        if not compared:
            why = skipped[0].reason if skipped else "empty sweep"
            return f"FAILED: nothing was compared ({why})"
        tol = f"atol={self.atol:g} rtol={self.rtol:g}"
        tail = f"; {len(skipped)} skipped" if skipped else ""
        if not failed:
            return f"PASSED: {len(compared)} factor(s) within {tol}{tail}"
        names = ", ".join(format_factor(f.factor) for f in failed)
        return f"FAILED: {len(failed)} of {len(compared)} factor(s) out of {tol} ({names}){tail}"

    def raise_if_failed(self) -> "ValidationReport":
        """Raise :class:`CheckFailedError` (exit code 1) unless the report passed; return self."""
        if not self.passed:
            detail = f" - {self.diagnosis.summary}" if self.diagnosis else ""
            raise CheckFailedError(f"validate {self.candidate} vs {self.reference.get('label')}: "
                                   f"{self.summary_line()}{detail}")
        return self

    def to_dict(self) -> dict[str, Any]:
        compared = self.compared
        worst = [o.max_abs_error for f in compared for o in f.outputs if o.max_abs_error is not None]
        return {
            "passed": self.passed,
            "summary": self.summary_line(),
            "candidate": self.candidate,
            "reference": self.reference,
            "atol": self.atol,
            "rtol": self.rtol,
            "seed": self.seed,
            "inputs": self.inputs,
            "candidate_ports": self.candidate_ports,
            "counts": {
                "compared": len(compared),
                "failed": sum(1 for f in compared if f.status != "passed"),
                "skipped": sum(1 for f in self.factors if f.status == "skipped"),
                "worst_max_abs_error": max(worst) if worst else None,
            },
            "factors": [f.to_dict() for f in self.factors],
            "diagnosis": self.diagnosis.to_dict() if self.diagnosis else None,
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------


def load_onnx(model: Union[str, os.PathLike, onnx.ModelProto], role: str = "candidate") -> onnx.ModelProto:
    """Load through :func:`graphsurgeon_tools.io.load_model` (external data inlined, checked paths).

    Nonsense scales or sizes and short tensors are refused here (exit 3, naming the file and
    the node) rather than left to surface as an ORT load error or a failed comparison.
    """
    from graphsurgeon_tools.resize import find_resize_sites

    proto = load_model(model, load_external_data=True)
    label = f"the {role} model" if isinstance(model, onnx.ModelProto) else f"{role} {model}"
    try:
        sites = find_resize_sites(proto)
    except OnnxToolError as exc:  # e.g. a scales tensor shorter than its shape
        raise type(exc)(f"{label}: {exc}") from None
    for site in sites:  # the rules every command applies (ResizeSite.problems)
        if site.problems:
            raise InvalidScalesError(f"{label}: node {site.node_name or site.output_name!r}: {site.problems[0]}")
    return proto


def _load_user_array(name: str, value: InputLike) -> tuple[np.ndarray, str]:
    if isinstance(value, np.ndarray):
        return value, "array"
    path = Path(value)
    try:
        array = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise OnnxToolError(f"input {name!r}: file not found: {path}") from None
    except ValueError as exc:
        if "allow_pickle" in str(exc):  # an object array: loading it would unpickle, i.e. run code
            raise OnnxToolError(f"input {name!r}: {path} holds pickled Python objects, which onnxtool never "
                                "loads; save a numeric array") from None
        raise OnnxToolError(f"input {name!r}: {path} is not a readable .npy array ({' '.join(str(exc).split())})") from None
    except Exception as exc:  # OSError, zipfile errors, junk
        raise OnnxToolError(f"input {name!r}: {path} is not a readable .npy array ({type(exc).__name__})") from None
    if not isinstance(array, np.ndarray):
        raise OnnxToolError(f"input {name!r}: {path} holds several arrays (.npz); give one .npy per input")
    return array, str(path)


def _conform(name: str, array: np.ndarray, shape: Sequence[Any], dtype: np.dtype, source: str,
             notes: list[str]) -> np.ndarray:
    """Check a user array against the graph input; cast floats to the input's float type."""
    if shape and len(array.shape) != len(shape):
        raise OnnxToolError(
            f"input {name!r} from {source}: rank {array.ndim} (shape {list(array.shape)}), "
            f"the model expects rank {len(shape)} ({list(shape)})"
        )
    for axis, (got, want) in enumerate(zip(array.shape, shape)):
        if isinstance(want, int) and got != want:
            raise OnnxToolError(
                f"input {name!r} from {source}: shape {list(array.shape)} does not fit the model's "
                f"{list(shape)} (axis {axis}: {got} != {want})"
            )
    if array.dtype != dtype:
        if np.issubdtype(array.dtype, np.floating) and np.issubdtype(dtype, np.floating):
            notes.append(f"input {name!r}: cast {array.dtype} from {source} to {dtype}")
            array = array.astype(dtype)
        elif np.issubdtype(array.dtype, np.integer) and np.issubdtype(dtype, np.integer):
            array = array.astype(dtype)
        else:
            raise OnnxToolError(f"input {name!r} from {source}: dtype {array.dtype}, the model expects {dtype}")
    return np.ascontiguousarray(array)


def _random_input(shape: Sequence[Any], dtype: np.dtype, rng: np.random.Generator, size: int,
                  *, limit: Optional[int] = None, what: str = "random input") -> np.ndarray:
    from graphsurgeon_tools.limits import check_output_size

    concrete = [d if isinstance(d, int) else (1 if axis == 0 else size) for axis, d in enumerate(shape)]
    # A declared input of 2**20 x 2**20 must be refused, not handed to numpy (MemoryError).
    # Floats are drawn in float64 first, so that is what is allocated.
    check_output_size(concrete, np.float64 if np.issubdtype(dtype, np.floating) else dtype, limit=limit, what=what)
    if np.issubdtype(dtype, np.floating):
        # Uniform [0, 1): what an image model sees after normalisation to [0, 1].
        return rng.random(concrete, dtype=np.float64).astype(dtype)
    if dtype == np.bool_:
        return rng.random(concrete) < 0.5
    return rng.integers(0, 10, size=concrete).astype(dtype)


def _prepare_inputs(ports: Ports, inputs: Optional[Mapping[str, InputLike]], seed: int, size: int,
                    notes: list[str], *, max_output_bytes: Optional[int] = None, label: str = "the candidate"
                    ) -> tuple[list[tuple[str, np.ndarray]], dict[str, np.ndarray], list[dict[str, Any]]]:
    given = dict(inputs or {})
    known = {d.name for d in ports.data_inputs} | {s.name for s in ports.scale_inputs}
    unknown = sorted(set(given) - known)
    if unknown:
        raise OnnxToolError(
            f"--input {unknown[0]!r}: the candidate has no such input (it has {', '.join(sorted(known))})"
        )
    rng = np.random.default_rng(seed)
    data: list[tuple[str, np.ndarray]] = []
    described: list[dict[str, Any]] = []
    for spec in ports.data_inputs:
        if spec.name in given:
            array, source = _load_user_array(spec.name, given[spec.name])
            array = _conform(spec.name, array, spec.shape, spec.dtype, source, notes)
        else:
            array = _random_input(spec.shape, spec.dtype, rng, size, limit=max_output_bytes,
                                  what=f"{label}: random input {spec.name!r}")
            source = f"random(seed={seed})"
        data.append((spec.name, array))
        described.append({"name": spec.name, "shape": list(array.shape), "dtype": str(array.dtype), "source": source})
    fixed: dict[str, np.ndarray] = {}
    for spec in ports.scale_inputs:
        if spec.name in given:
            array, source = _load_user_array(spec.name, given[spec.name])
            fixed[spec.name] = np.asarray(array, dtype=spec.dtype)
            notes.append(f"scale input {spec.name!r} is fixed by {source}: the factor sweep does not drive it")
            described.append({"name": spec.name, "shape": list(array.shape), "dtype": str(spec.dtype), "source": source})
    return data, fixed, described


def _check_factors(factors: Iterable[Any]) -> list[float]:
    out: list[float] = []
    for value in factors:
        try:
            factor = float(value)
        except (TypeError, ValueError):
            raise InvalidScalesError(f"factor {value!r} is not a number") from None
        if not math.isfinite(factor) or factor <= 0:
            raise InvalidScalesError(f"factor {value!r} is not a positive finite number")
        out.append(factor)
    if not out:
        raise UsageError("the factor sweep is empty: give at least one factor")
    return out


# --------------------------------------------------------------------------------------
# The sweep
# --------------------------------------------------------------------------------------


def _plan(factors: Optional[Sequence[float]], candidate: Ports, reference: Reference,
          notes: list[str]) -> list[tuple[Factor, str]]:
    """Sweep points, each with the reason to skip it (empty: run it)."""
    ref_mixed = not reference.dynamic and reference.baked_factor is None and bool(reference.baked_scales)
    cand_mixed = not candidate.is_dynamic and candidate.baked_factor is None and bool(candidate.baked_scales)
    if ref_mixed or cand_mixed:
        side = "reference" if ref_mixed else "candidate"
        if factors is not None:
            notes.append(f"the {side} is static with different factors per Resize node: "
                         "compared once at its baked scales; --factors ignored")
        return [(None, "")]
    if not candidate.is_dynamic and candidate.resize_nodes == 0:
        # Nothing resizes: a factor means nothing, compare once as the model stands.
        if factors is not None:
            notes.append("the candidate has no Resize/Upsample node: compared once; --factors ignored")
        return [(None, "")]
    if factors is None:
        if not reference.dynamic and reference.baked_factor is not None:
            factors = [reference.baked_factor]
        elif not candidate.is_dynamic and candidate.baked_factor is not None:
            factors = [candidate.baked_factor]
        elif not reference.dynamic and not candidate.is_dynamic:
            return [(None, "")]  # neither side resizes by a known factor: one plain comparison
        else:
            factors = list(DEFAULT_FACTORS)
    plan: list[tuple[Factor, str]] = []
    for factor in factors:
        reason = ""
        if not candidate.is_dynamic and candidate.baked_factor is not None and factor != candidate.baked_factor:
            reason = f"the candidate is static (baked {format_factor(candidate.baked_factor)}): it only runs at that factor"
        elif not reference.dynamic and reference.baked_factor is not None and factor != reference.baked_factor:
            reason = (f"the reference is static (baked {format_factor(reference.baked_factor)}): "
                      "compared only at that factor")
        plan.append((factor, reason))
    return plan


def _run_point(factor: Factor, candidate: OnnxRunner, reference: Reference,
               data: list[tuple[str, np.ndarray]], fixed: dict[str, np.ndarray],
               atol: float, rtol: float, max_output_bytes: Optional[int]
               ) -> tuple[FactorResult, Optional[dict[str, Any]]]:
    started = time.perf_counter()
    result = FactorResult(factor=factor, status="error")
    # Sizes fixed by the graph itself (baked scales, static shapes): shape inference finds them.
    from graphsurgeon_tools.checks import guard_output_sizes

    shapes = {name: list(array.shape) for name, array in data}
    shapes.update({name: list(np.shape(value)) for name, value in fixed.items()})
    guard_output_sizes(candidate.model, shapes, max_output_bytes, what=candidate.where)
    if factor is not None:  # sizes a fed factor decides
        from graphsurgeon_tools.limits import check_output_size, resized_shape

        for name, array in data:
            if array.ndim >= 3:
                scales = [1.0, 1.0] + [factor] * (array.ndim - 2)  # N, C kept; every spatial axis scaled
                check_output_size(resized_shape(array.shape, scales), array.dtype, limit=max_output_bytes,
                                  what=f"{candidate.where}: input {name!r} resized at {format_factor(factor)}")
    try:
        baked = reference.baked_scales if not reference.dynamic else None
        feeds = candidate.feeds(factor, dict(data), fixed, baked)
        result.scale_feeds = {s.name: np.asarray(feeds[s.name]).tolist() if feeds[s.name].ndim <= 1
                              else f"zeros{list(feeds[s.name].shape)}" for s in candidate.ports.scale_inputs}
        actual = candidate.run(feeds)
        expected = reference.run(factor, data, feeds, candidate.ports.baked_scales)
    except RunFailed as exc:
        result.reason = str(exc)
        result.seconds = time.perf_counter() - started
        return result, None
    names_match = {n for n, _ in actual} <= {n for n, _ in expected}
    by_name = dict(expected)
    pairs = []
    for index, (name, value) in enumerate(actual):
        if names_match:
            pairs.append((name, value, name, by_name[name]))
        elif index < len(expected):
            pairs.append((name, value, expected[index][0], expected[index][1]))
    if len(expected) != len(actual):
        result.reason = f"the candidate has {len(actual)} output(s), the reference {len(expected)}"
    for name, value, ref_name, ref_value in pairs:
        result.outputs.append(compare_arrays(value, ref_value, atol=atol, rtol=rtol, name=name,
                                             reference_name=ref_name))
    ok = bool(result.outputs) and all(o.passed for o in result.outputs) and len(expected) == len(actual)
    result.status = "passed" if ok else "failed"
    result.seconds = time.perf_counter() - started
    return result, {"feeds": feeds, "expected": {o[0]: o[3] for o in pairs}, "actual": {o[0]: o[1] for o in pairs}}


def validate(
    candidate: Union[str, os.PathLike, onnx.ModelProto],
    reference: ReferenceLike,
    *,
    factors: Optional[Sequence[float]] = None,
    inputs: Optional[Mapping[str, InputLike]] = None,
    atol: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    seed: int = 0,
    input_size: int = DEFAULT_INPUT_SIZE,
    diagnose: bool = True,
    max_output_bytes: Optional[int] = None,
    progress: Optional[ProgressCallback] = None,
) -> ValidationReport:
    """Run ``candidate`` in ONNX Runtime against ``reference`` at each factor and compare.

    ``reference``: a path to an ONNX model, a ModelProto, ``"torch:srcnn"``,
    ``"python:MODULE:CALLABLE"``, ``"onnx-reference"``, or an ``nn.Module`` (see
    :mod:`graphsurgeon_tools.references` for the PyTorch calling convention).
    ``factors``: the sweep; ``None`` picks the static side's baked factor, else 2, 3, 4.
    Every scale input of the candidate gets the same factor; for a model whose Resize nodes
    had different factors, compare against its static original instead (each input is then
    fed its own node's original scales, matched by node name).
    ``inputs``: name -> array or ``.npy`` path; other data inputs get seeded uniform [0, 1)
    data with symbolic dims set to 1 (first axis) or ``input_size``. Giving a scale input
    fixes it (the sweep then no longer drives it).
    ``progress(step, done, total)`` is called as the sweep advances.

    Returns the report; a mismatch is not an exception (see ``raise_if_failed``). Raises
    :class:`OnnxToolError` subclasses (exit code 3, or 2 for usage) for unreadable models,
    arrays that do not fit, unknown references and nonsense factors. Does not modify or
    write any file, and does not check the graph itself (use ``onnx.checker`` for that).
    """
    if not (atol >= 0 and rtol >= 0 and math.isfinite(atol) and math.isfinite(rtol)):
        raise UsageError(f"tolerances must be finite and non-negative, got atol={atol} rtol={rtol}")
    if int(input_size) < 1 or int(seed) < 0:
        raise UsageError(f"--input-size must be >= 1 and --seed >= 0, got {input_size} and {seed}")
    sweep = None if factors is None else _check_factors(factors)
    label = str(candidate) if not isinstance(candidate, onnx.ModelProto) else "<ModelProto>"
    model = load_onnx(candidate, "candidate")
    notes: list[str] = []
    runner = OnnxRunner(model, label)
    ref = make_reference(reference, model)
    data, fixed, described = _prepare_inputs(runner.ports, inputs, seed, input_size, notes,
                                             max_output_bytes=max_output_bytes, label=label)
    plan = _plan(sweep, runner.ports, ref, notes)
    runnable = sum(1 for _, reason in plan if not reason)
    total = runnable + (1 if diagnose else 0)
    results: list[FactorResult] = []
    failing: Optional[tuple[FactorResult, dict[str, Any]]] = None
    done = 0
    for factor, reason in plan:
        if reason:
            results.append(FactorResult(factor=factor, status="skipped", reason=reason))
            continue
        if progress:
            progress(f"comparing at {format_factor(factor)}", done, total)
        result, arrays = _run_point(factor, runner, ref, data, fixed, atol, rtol, max_output_bytes)
        if factor is None and not runner.ports.is_dynamic and runner.ports.resize_nodes == 0:
            result.factor_label = "as-is"
        results.append(result)
        done += 1
        if failing is None and result.status == "failed" and arrays is not None:
            failing = (result, arrays)
    report = ValidationReport(
        candidate=label,
        reference=ref.to_dict(),
        atol=float(atol),
        rtol=float(rtol),
        seed=int(seed),
        inputs=described,
        candidate_ports=runner.ports.to_dict(),
        factors=results,
        notes=notes,
    )
    if diagnose and failing is not None:
        if progress:
            progress("diagnosing the mismatch", done, total)
        report.diagnosis = _diagnose(runner, ref, failing[0], failing[1], atol=atol, rtol=rtol)
    if progress:
        progress("done", total, total)
    return report


# --------------------------------------------------------------------------------------
# Diagnosis
# --------------------------------------------------------------------------------------

_RESIZE_DEFAULTS: dict[str, Any] = {
    "mode": "nearest",
    "coordinate_transformation_mode": "half_pixel",
    "cubic_coeff_a": -0.75,
    "exclude_outside": 0,
    "nearest_mode": "round_prefer_floor",
}
_CTMS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")
_MODES = ("nearest", "linear", "cubic")

# What a matching change usually means, for the summary line.
_HINTS = {
    ("coordinate_transformation_mode", "align_corners"):
        "PyTorch's interpolate(..., align_corners=True) / MMDeploy's align_corners=1",
    ("coordinate_transformation_mode", "asymmetric"):
        "TensorFlow 1's resize without half_pixel_centers, or nearest upsampling exported as asymmetric",
    ("coordinate_transformation_mode", "half_pixel"):
        "PyTorch's align_corners=False (half-pixel centres)",
    ("coordinate_transformation_mode", "pytorch_half_pixel"):
        "PyTorch's align_corners=False (half-pixel centres)",
    ("cubic_coeff_a", -0.5):
        "a = -0.5 is TensorFlow's and some TensorRT versions' bicubic; PyTorch uses -0.75",
    ("cubic_coeff_a", -0.75):
        "a = -0.75 is PyTorch's and OpenCV's bicubic",
    ("exclude_outside", 1):
        "exclude_outside=1 renormalises the cubic weights at the border (TensorFlow style)",
    ("exclude_outside", 0):
        "PyTorch clamps at the border (exclude_outside=0)",
}


def _node_attr(node: onnx.NodeProto, name: str) -> Any:
    for attr in node.attribute:
        if attr.name == name:
            value = onnx.helper.get_attribute_value(attr)
            return value.decode() if isinstance(value, bytes) else value
    return None


def _resize_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for n in model.graph.node
            if n.op_type == PLUGIN_OP_TYPE or (n.op_type in ("Resize", "Upsample") and n.domain in ("", "ai.onnx"))]


def _current(node: onnx.NodeProto, name: str) -> Any:
    value = _node_attr(node, name)
    if value is None:
        value = _RESIZE_DEFAULTS.get(name)
    if name == "mode" and value in ("bilinear", "bicubic"):
        value = value[2:]
    return value


def _applicable(node: onnx.NodeProto, name: str, opset: int) -> bool:
    if node.op_type == "Upsample":
        return name == "mode"
    if node.op_type == PLUGIN_OP_TYPE:
        # Only what the plugin node spells out; a plugin reads nothing else.
        return _node_attr(node, name) is not None
    if name == "cubic_coeff_a" or name == "exclude_outside":
        return opset >= 11
    if name == "coordinate_transformation_mode":
        return opset >= 11
    return True


def _with_attributes(model: onnx.ModelProto, change: dict[str, Any]) -> Optional[onnx.ModelProto]:
    """A copy of ``model`` with ``change`` applied to every resize node it applies to (None: none)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    opset = default_opset(model)
    touched = False
    for node in _resize_nodes(copy):
        for name, value in change.items():
            if not _applicable(node, name, opset):
                continue
            kept = [a for a in node.attribute if a.name != name]
            del node.attribute[:]
            node.attribute.extend(kept)
            node.attribute.append(onnx.helper.make_attribute(name, value))
            touched = True
            if name == "coordinate_transformation_mode" and _node_attr(node, "align_corners") is not None:
                kept = [a for a in node.attribute if a.name != "align_corners"]
                del node.attribute[:]
                node.attribute.extend(kept)
                node.attribute.append(onnx.helper.make_attribute("align_corners", int(value == "align_corners")))
        if node.op_type == "Resize" and _current(node, "exclude_outside") and _current(node, "mode") != "cubic":
            return None  # ORT (and the spec) refuse exclude_outside=1 outside cubic: not a real alternative
    return copy if touched else None


def _variants(model: onnx.ModelProto) -> list[dict[str, Any]]:
    """Single attribute changes first (they name one culprit), then the common pairs."""
    nodes = _resize_nodes(model)
    if not nodes:
        return []
    first = nodes[0]
    mode = _current(first, "mode")
    ctm = _current(first, "coordinate_transformation_mode")
    coeff = _current(first, "cubic_coeff_a")
    exclude = _current(first, "exclude_outside")
    ctms = list(_CTMS) + (["half_pixel_symmetric"] if default_opset(model) >= 19 else [])
    singles: list[dict[str, Any]] = [{"mode": m} for m in _MODES if m != mode]
    singles += [{"coordinate_transformation_mode": c} for c in ctms if c != ctm]
    if mode == "cubic":
        singles += [{"cubic_coeff_a": a} for a in (-0.5, -0.75) if not math.isclose(float(coeff), a)]
        singles.append({"exclude_outside": 1 - int(exclude)})
    if mode == "nearest":
        current_nearest = _current(first, "nearest_mode")
        singles += [{"nearest_mode": n} for n in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
                    if n != current_nearest]
    pairs: list[dict[str, Any]] = []
    for m in _MODES:
        for c in ctms:
            if m != mode and c != ctm:
                pairs.append({"mode": m, "coordinate_transformation_mode": c})
    if mode == "cubic":
        alt = -0.5 if math.isclose(float(coeff), -0.75) else -0.75
        pairs.append({"cubic_coeff_a": alt, "exclude_outside": 1 - int(exclude)})
        pairs += [{"coordinate_transformation_mode": c, "cubic_coeff_a": alt} for c in ctms if c != ctm]
    else:
        pairs += [{"mode": "cubic", "cubic_coeff_a": -0.5}]
    return singles + pairs


def _error_pattern(actual: np.ndarray, expected: np.ndarray, factor: Factor) -> dict[str, Any]:
    """Where the error sits in an N x C x H x W output: border band vs interior, and per phase."""
    if actual.shape != expected.shape or actual.ndim != 4:
        return {}
    err = _abs_diff(actual, expected)
    err = np.where(np.isfinite(err), err, np.nan)
    emap = np.nanmean(err, axis=(0, 1))
    h, w = emap.shape
    f = factor or 2.0
    band = int(min(max(2, math.ceil(2 * f)), max(1, min(h, w) // 4)))
    interior = emap[band:h - band, band:w - band]
    mask = np.ones_like(emap, dtype=bool)
    mask[band:h - band, band:w - band] = False
    border_mean = float(np.nanmean(emap[mask])) if mask.any() else 0.0
    interior_mean = float(np.nanmean(interior)) if interior.size else 0.0
    pattern: dict[str, Any] = {
        "border_band_px": band,
        "border_mean_abs_error": border_mean,
        "interior_mean_abs_error": interior_mean,
    }
    if interior_mean > 0:
        pattern["border_to_interior"] = border_mean / interior_mean
    else:
        pattern["border_to_interior"] = math.inf if border_mean > 0 else 1.0
    # Error that repeats with the upscale period points at the sampling grid.
    if factor is not None and float(factor).is_integer() and factor >= 2 and interior.size:
        p = int(factor)
        ih, iw = (interior.shape[0] // p) * p, (interior.shape[1] // p) * p
        if ih >= 2 * p and iw >= 2 * p:
            phases = interior[:ih, :iw].reshape(ih // p, p, iw // p, p).mean(axis=(0, 2))
            lo, hi = float(np.nanmin(phases)), float(np.nanmax(phases))
            pattern["phase_spread"] = hi / lo if lo > 0 else (math.inf if hi > 0 else 1.0)
    return pattern


def _describe_pattern(pattern: dict[str, Any]) -> str:
    if not pattern:
        return ""
    ratio = pattern.get("border_to_interior", 1.0)
    band = pattern["border_band_px"]
    spread = pattern.get("phase_spread", 1.0)
    if ratio >= 5:
        return (f"the error sits within {band} px of the border (border mean {ratio:.3g}x the interior's): "
                "typical of border handling (exclude_outside, cubic_coeff_a, coordinate_transformation_mode)")
    if spread >= 2:
        return (f"the error repeats with the upscale period (phases differ {spread:.3g}x): "
                "the sampling grid differs (coordinate_transformation_mode or mode)")
    return ("the error is spread evenly over the image (border/interior "
            f"{ratio:.3g}x): not the signature of a Resize setting; look at weights or other ops")


def _compare_weights(model: onnx.ModelProto, reference: Reference, atol: float, rtol: float) -> list[dict[str, Any]]:
    try:
        theirs = reference.parameters()
    except Exception:  # a diagnostic nicety; never let it hide the real report
        return []
    if not theirs:
        return []
    differing = []
    for tensor in model.graph.initializer:
        other = theirs.get(tensor.name)
        if other is None:
            continue
        ours = onnx.numpy_helper.to_array(tensor)
        if ours.shape != other.shape:
            continue
        comparison = compare_arrays(ours, other, atol=atol, rtol=rtol, name=tensor.name)
        if comparison.max_abs_error:
            differing.append({
                "name": tensor.name,
                "max_abs_difference": comparison.max_abs_error,
                "elements_differing": int(np.count_nonzero(_abs_diff(ours, other))),
            })
    return differing


def _diagnose(runner: OnnxRunner, reference: Reference, failed: FactorResult, arrays: dict[str, Any],
              *, atol: float, rtol: float) -> Diagnosis:
    comparison = next(o for o in failed.outputs if not o.passed)
    name = comparison.output
    expected = arrays["expected"][name]
    actual = arrays["actual"][name]
    model = runner.model
    nodes = _resize_nodes(model)
    diagnosis = Diagnosis(factor=failed.factor, output=name, summary="")
    diagnosis.pattern = _error_pattern(actual, expected, failed.factor)
    diagnosis.weights = _compare_weights(model, reference, atol, rtol)
    baseline = comparison.max_abs_error if comparison.max_abs_error is not None else math.inf
    best: Optional[tuple[float, dict[str, Any]]] = None
    if nodes and comparison.max_abs_error is not None:
        for change in _variants(model):
            variant = _with_attributes(model, change)
            if variant is None:
                continue
            try:
                outputs = dict(OnnxRunner(variant, runner.where, quiet=True).run(arrays["feeds"]))
            except (RunFailed, OnnxToolError, Exception):  # an invalid combination: not a suspect
                continue
            diagnosis.variants_tried += 1
            got = outputs.get(name)
            if got is None:
                continue
            stats = compare_arrays(got, expected, atol=atol, rtol=rtol, name=name)
            if stats.max_abs_error is None:
                continue
            if best is None or stats.max_abs_error < best[0]:
                best = (stats.max_abs_error, change)
            if stats.passed:
                current = {key: _current(nodes[0], key) for key in change}
                diagnosis.explained_by = {
                    "change": change,
                    "candidate_has": current,
                    "max_abs_error_after": stats.max_abs_error,
                    "nodes": [n.name for n in nodes],
                }
                break
    if diagnosis.explained_by is None and best is not None and best[0] < baseline / 10:
        diagnosis.closest = {
            "change": best[1],
            "candidate_has": {key: _current(nodes[0], key) for key in best[1]},
            "max_abs_error_after": best[0],
            "max_abs_error_before": baseline,
        }
    diagnosis.summary = _summarise(diagnosis, nodes)
    return diagnosis


def _fmt_change(change: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in change.items())


def _summarise(diagnosis: Diagnosis, nodes: list[onnx.NodeProto]) -> str:
    parts: list[str] = []
    where = ", ".join(repr(n.name) if n.name else n.op_type for n in nodes[:3]) or "the resize"
    if diagnosis.explained_by:
        change = diagnosis.explained_by["change"]
        had = diagnosis.explained_by["candidate_has"]
        text = (f"the reference resizes with {_fmt_change(change)}: the candidate's {where} has "
                f"{_fmt_change(had)}, and with {_fmt_change(change)} it matches the reference "
                f"(max abs error {diagnosis.explained_by['max_abs_error_after']:.3g})")
        hints = [_HINTS[(k, v)] for k, v in change.items() if (k, v) in _HINTS]
        if hints:
            text += f" [{'; '.join(hints)}]"
        parts.append(text)
    elif diagnosis.closest:
        c = diagnosis.closest
        parts.append(f"no single Resize setting explains it; closest: {_fmt_change(c['change'])} "
                     f"(max abs error {c['max_abs_error_before']:.3g} -> {c['max_abs_error_after']:.3g})")
    if diagnosis.weights:
        w = diagnosis.weights
        names = ", ".join(f"{d['name']} (max diff {d['max_abs_difference']:.3g})" for d in w[:3])
        parts.append(f"{len(w)} weight tensor(s) differ from the reference's: {names}")
    if not diagnosis.explained_by:
        pattern = _describe_pattern(diagnosis.pattern)
        if pattern:
            parts.append(pattern)
        elif nodes:
            parts.append("no Resize attribute change reproduces the reference")
    return "; ".join(parts) or "no pattern recognised"


# --------------------------------------------------------------------------------------
# Output: terminal table and JUnit XML
# --------------------------------------------------------------------------------------


def _fmt(value: Any, spec: str = ".3g") -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return format(value, spec)


def _point_label(factor: Any) -> str:
    return factor if isinstance(factor, str) else f"x{factor:g}"


def render_report(report: Mapping[str, Any], *, color: bool = False, width: int = 120) -> str:
    """The report (``ValidationReport.to_dict()``) as a terminal table, returned as text."""
    import io

    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width,
                      highlight=False, soft_wrap=False)
    reference = report["reference"]
    console.print(f"candidate  {report['candidate']}")
    console.print(f"reference  {reference.get('label')} ({reference.get('kind')})")
    inputs = ", ".join(f"{i['name']}{i['shape']} {i['source']}" for i in report["inputs"])
    console.print(f"inputs     {inputs}")
    scale_inputs = report["candidate_ports"]["scale_inputs"]
    if scale_inputs:
        console.print("factor via " + ", ".join(f"{s['name']} ({s['layout']})" for s in scale_inputs))
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column, justify in [("factor", "left"), ("output", "left"), ("shape", "left"), ("max abs", "right"),
                            ("mean abs", "right"), ("max rel", "right"), ("out of tol", "right"),
                            ("passing atol", "right"), ("PSNR dB", "right"), ("result", "left")]:
        table.add_column(column, justify=justify, no_wrap=True)
    for point in report["factors"]:
        label = _point_label(point["factor"])
        if point["status"] in ("skipped", "error") and not point["outputs"]:
            style = "yellow" if point["status"] == "skipped" else "red"
            table.add_row(label, "-", "-", "", "", "", "", "", "",
                          f"[{style}]{point['status'].upper()}[/{style}]")
            continue
        for out in point["outputs"]:
            share = out["mismatch_share"]
            result = "[green]ok[/green]" if out["passed"] else "[red]FAIL[/red]"
            shape = out["candidate_shape"] if out["candidate_shape"] == out["reference_shape"] else \
                f"{out['candidate_shape']} vs {out['reference_shape']}"
            table.add_row(label, out["output"], "x".join(map(str, shape)) if isinstance(shape, list) else str(shape),
                          _fmt(out["max_abs_error"]), _fmt(out["mean_abs_error"]), _fmt(out["max_rel_error"]),
                          "-" if share is None else f"{100 * share:.2f}%", _fmt(out["passing_atol"]),
                          _fmt(out["psnr_db"], ".1f"), result)
    console.print(table)
    for point in report["factors"]:
        if point["reason"]:
            label = _point_label(point["factor"])
            console.print(f"  {label} {point['status']}: {point['reason']}")
    for note in report.get("notes", []):
        console.print(f"  note: {note}")
    diagnosis = report.get("diagnosis")
    if diagnosis:
        console.print(f"[bold]diagnosis[/bold] ({diagnosis['output']} at "
                      f"{_point_label(diagnosis['factor'])}): "
                      f"{diagnosis['summary']}")
    verdict = "green" if report["passed"] else "red"
    console.print(f"[bold {verdict}]{report['summary']}[/bold {verdict}]")
    return buffer.getvalue()


def junit_xml(report: Mapping[str, Any]) -> str:
    """The report as JUnit XML: one testcase per factor and output; skipped factors as skipped."""
    import xml.etree.ElementTree as ET

    cases = []
    failures = skipped = errors = 0
    suite_name = f"onnxtool.validate.{Path(str(report['candidate'])).stem}"
    for point in report["factors"]:
        label = _point_label(point["factor"])
        if not point["outputs"]:
            case = ET.Element("testcase", classname=suite_name, name=label, time=f"{point['seconds']:.4f}")
            if point["status"] == "skipped":
                ET.SubElement(case, "skipped", message=point["reason"])
                skipped += 1
            else:
                ET.SubElement(case, "error", message=point["reason"] or "failed to run")
                errors += 1
            cases.append(case)
            continue
        for out in point["outputs"]:
            case = ET.Element("testcase", classname=suite_name, name=f"{label}.{out['output']}",
                              time=f"{point['seconds'] / max(1, len(point['outputs'])):.4f}")
            if not out["passed"]:
                failures += 1
                message = out["note"] or "out of tolerance"
                failure = ET.SubElement(case, "failure", message=message, type="mismatch")
                failure.text = "\n".join(f"{k}: {_fmt(v) if not isinstance(v, list) else v}"
                                         for k, v in out.items() if k not in ("output", "passed"))
                if report.get("diagnosis"):
                    failure.text += f"\ndiagnosis: {report['diagnosis']['summary']}"
            cases.append(case)
    if not report["passed"] and not cases:
        case = ET.Element("testcase", classname=suite_name, name="sweep")
        ET.SubElement(case, "failure", message=report["summary"])
        cases.append(case)
        failures += 1
    suite = ET.Element("testsuite", name=suite_name, tests=str(len(cases)), failures=str(failures),
                       errors=str(errors), skipped=str(skipped),
                       time=f"{sum(p['seconds'] for p in report['factors']):.4f}")
    properties = ET.SubElement(suite, "properties")
    for key in ("candidate", "atol", "rtol", "seed"):
        ET.SubElement(properties, "property", name=key, value=str(report[key]))
    ET.SubElement(properties, "property", name="reference", value=str(report["reference"].get("label")))
    suite.extend(cases)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def check_junit_path(path: Union[str, os.PathLike], *, inputs: Sequence[Union[str, os.PathLike]] = ()) -> Path:
    """Refuse (UsageError, exit 2) a JUnit destination that cannot be written, before any work.

    ``inputs``: files the run reads (the candidate, an ONNX reference); the report must not
    overwrite one of them, whatever the spelling (``dir/../x``, a symlink to it).
    """
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--junit {target}: is a directory")
    if not target.parent.is_dir():
        raise UsageError(f"--junit {target}: folder {target.parent} does not exist")
    if not os.access(target.parent, os.W_OK):
        raise UsageError(f"--junit {target}: folder {target.parent} is not writable")
    if target.exists():
        for source in inputs:
            if Path(source).exists() and os.path.samefile(target, source):
                raise UsageError(f"--junit {target} is the input model {source}; the report would overwrite it")
    return target


def write_junit(report: Union[ValidationReport, Mapping[str, Any]], path: Union[str, os.PathLike]) -> Path:
    """Write :func:`junit_xml` to ``path`` atomically (temp file in the same folder, then rename)."""
    data = report.to_dict() if isinstance(report, ValidationReport) else report
    target = check_junit_path(path)
    try:
        return write_bytes_atomic(junit_xml(data).encode("utf-8"), target)
    except UsageError as exc:  # a read-only file system, a folder that went away: the user's to fix
        raise UsageError(f"--junit: {exc}") from None
