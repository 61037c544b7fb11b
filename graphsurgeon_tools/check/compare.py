"""The ONE comparison of two arrays: :class:`OutputComparison` and :func:`compare_arrays`.

Used by ``validate`` (candidate vs reference, per factor and output) and by the built-in
equivalence check of the passes (original vs rewritten model).

An element is within tolerance when ``|actual - expected| <= atol + rtol * |expected|``
(numpy's ``isclose``); equal infinities and NaN-vs-NaN count as equal.

A comparison is *vacuous* when the reference cannot tell a right candidate from a wrong one: it
is constant (every finite element equal, e.g. a detector's all-zero map on noise), or its largest
magnitude is below ``atol`` (anything near zero passes). Its figures are kept, ``vacuous`` says so,
and callers do not count it as a pass on its own. PSNR is given only for image-like outputs
(NCHW with 1 or 3 channels) whose reference is not vacuous, with the reference's range as peak.

Requires: two arrays (anything ``np.asarray`` accepts).
Ensures: an :class:`OutputComparison` with figures, or a note saying why there are none
(shapes differ; non-numeric outputs are compared for equality only).
Does NOT broadcast, print, or raise on a mismatch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["OutputComparison", "abs_diff", "compare_arrays"]


@dataclass
class OutputComparison:
    """One output compared. Figures are ``None`` when the shapes differ or a side failed."""

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
    mismatched: int = 0  # elements out of tolerance (all of the reference's when shapes differ)
    vacuous: bool = False  # the reference is constant or below atol: a pass here proves nothing
    kind: str = "output"  # "output" (a graph output) or "site" (a Resize/Upsample/plugin node's output)

    # The equivalence check's vocabulary (CheckResult.to_dict keeps these keys).
    @property
    def name(self) -> str:
        return self.output

    @property
    def shape(self) -> list[int]:
        return list(self.reference_shape or ())

    @property
    def max_abs_diff(self) -> float:
        return math.inf if self.max_abs_error is None else self.max_abs_error

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
            "vacuous": self.vacuous,
            "kind": self.kind,
            "note": self.note,
        }


def _is_image_like(shape: Sequence[int]) -> bool:
    return len(shape) == 4 and shape[1] in (1, 3)


def _work_dtype(actual: np.ndarray, expected: np.ndarray) -> type:
    """float32 when both sides are floats of at most 32 bits (exact enough for 3-digit figures), else float64."""
    small = all(np.issubdtype(a.dtype, np.floating) and a.dtype.itemsize <= 4 for a in (actual, expected))
    return np.float32 if small else np.float64


def _abs_diff(actual: np.ndarray, expected: np.ndarray, dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(|a - b|, a, b)`` in ``dtype``; 0 where both agree (equal infinities, NaN at the same place), inf at a lone NaN."""
    a = np.atleast_1d(actual.astype(dtype, copy=False))
    b = np.atleast_1d(expected.astype(dtype, copy=False))
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.subtract(a, b)
        np.abs(diff, out=diff)
    if not np.isfinite(diff.max()):  # NaN or inf somewhere: the rare path, element by element
        # inf - inf is NaN: equal infinities and NaN at the same place count as agreement.
        agree = (a == b) | (np.isnan(a) & np.isnan(b))
        diff[agree] = 0.0
        diff[np.isnan(diff)] = np.inf
    return diff, a, b


def abs_diff(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """``|actual - expected|`` in float64, 0 where both agree (equal infinities, NaN at the same place)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    return _abs_diff(actual, expected, np.float64)[0].reshape(np.broadcast_shapes(actual.shape, expected.shape))


def compare_arrays(
    actual: np.ndarray,
    expected: np.ndarray,
    *,
    atol: float,
    rtol: float,
    name: str = "output",
    reference_name: str = "",
    kind: str = "output",
) -> OutputComparison:
    """Statistics of ``actual`` (candidate) against ``expected`` (reference).

    Relative error is taken over elements with ``|expected| > atol`` (near zero, atol is the
    yardstick). ``vacuous`` when the reference is constant or below atol; PSNR only for
    image-like, non-vacuous references (peak: the reference's range). Does not broadcast: a
    shape difference is a failure with a note, no figures. One pass over the data: the
    absolute difference is taken once (in float32 for float32 inputs; sums in float64) and
    reused for every figure.
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    result = OutputComparison(
        output=name,
        reference_output=reference_name or name,
        candidate_shape=tuple(int(d) for d in actual.shape),
        reference_shape=tuple(int(d) for d in expected.shape),
        passed=False,
        kind=kind,
    )
    if actual.shape != expected.shape:
        result.note = f"shape {list(actual.shape)} differs from the reference's {list(expected.shape)}"
        result.mismatched = int(expected.size)
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
        result.mismatched = int(np.sum(unequal))
        result.mismatch_share = float(np.mean(unequal))
        result.note = f"non-numeric output ({actual.dtype} vs {expected.dtype}) compared for equality" + (
            "" if result.passed else f": {result.mismatched} of {unequal.size} elements differ"
        )
        return result
    dtype = _work_dtype(actual, expected)
    diff, _, b = _abs_diff(actual, expected, dtype)
    b_abs = np.abs(b)
    largest = float(b_abs.max())
    b_finite_all = math.isfinite(largest)  # max propagates NaN: finite means every element is
    if not b_finite_all:
        b_abs[~np.isfinite(b_abs)] = 0.0  # a non-finite reference element gets no relative allowance
    size = diff.size
    # excess = diff - rtol*|b|: out of tolerance where > atol; its max is the passing atol.
    excess = np.multiply(b_abs, dtype(rtol))
    np.subtract(diff, excess, out=excess)
    result.max_abs_error = float(diff.max())
    result.mean_abs_error = float(diff.mean(dtype=np.float64))
    significant = b_abs > atol
    if significant.any():
        with np.errstate(over="ignore"):
            ratio = np.divide(diff, b_abs, out=np.zeros_like(diff), where=significant)
        result.max_rel_error = float(ratio.max())
        del ratio
        if not math.isfinite(result.max_rel_error) and math.isfinite(result.max_abs_error):
            # float32 overflowed on a tiny reference element: those few in float64
            result.max_rel_error = float((diff[significant].astype(np.float64) / b_abs[significant]).max())
    else:
        result.max_rel_error = 0.0
    result.mismatched = int(np.count_nonzero(excess > atol))
    result.mismatch_share = result.mismatched / size
    result.passing_atol = float(max(0.0, float(excess.max())))
    del excess
    if b_finite_all:
        finite = b
        spread = float(b.max()) - float(b.min())
    else:
        finite = b[np.isfinite(b)]
        spread = float(finite.max()) - float(finite.min()) if finite.size else 0.0
        largest = float(np.max(np.abs(finite))) if finite.size else 0.0
    if expected.size > 1 and spread == 0.0:  # one element cannot vary: judged by atol alone
        result.vacuous = True
        result.note = "vacuous: the reference is constant" + (
            f" ({float(finite.flat[0]):g} everywhere)" if finite.size == expected.size else " (no finite spread)"
        )
    elif largest < atol:
        result.vacuous = True
        result.note = f"vacuous: the reference's largest magnitude {largest:.3g} is below atol {atol:g}"
    if _is_image_like(expected.shape) and not result.vacuous:
        if math.isfinite(result.max_abs_error):
            np.square(diff, out=diff)
            mse = float(diff.mean(dtype=np.float64))
        else:
            mse = math.inf
        result.psnr_db = math.inf if mse == 0 else (0.0 if not math.isfinite(mse) else 10 * math.log10(spread**2 / mse))
    result.passed = result.mismatched == 0
    if not result.passed:
        result.note = "; ".join(filter(None, (f"{result.mismatched} of {size} elements out of tolerance", result.note)))
    return result
