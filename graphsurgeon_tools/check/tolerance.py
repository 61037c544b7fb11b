"""Tolerances that know their dtype: bounds in units of a tensor's precision at its magnitude.

``UlpTolerance(ulps, ...).bounds(actual, expected) -> (atol, rtol)``, for
:func:`graphsurgeon_tools.check.compare.compare_arrays`::

    |actual - expected| <= atol + rtol * |expected|
    atol = ulps(dtype) * eps(dtype) * max(1, M)      M = max |expected| over its finite elements
    rtol = ulps(dtype) * eps(dtype)

``dtype`` is the less precise of the two arrays (a float16 model compared with a float32
reference is judged in float16 ulps); ``eps`` is the spacing of that dtype at 1 (float16
2**-10, bfloat16 2**-7, float32 2**-23, float64 2**-52). The absolute term scales with the
tensor's largest magnitude, not the element's: two implementations that sum the same
interpolation terms in another order differ by a few ulps of the *inputs'* magnitude, so an
element that cancels to near zero from values in the hundreds (DepthAnything's depth) still
differs by ~1e-5 in float32, which no per-element relative bound admits.

Integer tensors (quantized activations, integer Resize) are compared in whole units:
``integer_steps`` (0: exact).

Requires: numpy arrays. Ensures: finite, non-negative bounds and a one-line description
(:meth:`UlpTolerance.describe`) that reports print. Does NOT compare anything itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import numpy as np

__all__ = ["EPS", "UlpTolerance", "dtype_label", "eps_of", "magnitude"]

#: Spacing of each float dtype at 1.0 (one ulp there), by numpy name (ml_dtypes names bfloat16).
EPS: dict[str, float] = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def dtype_label(array: np.ndarray) -> str:
    return str(np.asarray(array).dtype)


def eps_of(name: str) -> Optional[float]:
    """One ulp at 1.0 of the float dtype ``name``; None for integers, bools and unknown types."""
    return EPS.get(name)


def magnitude(array: np.ndarray) -> float:
    """The largest finite magnitude of ``array`` (0 for an empty or all-non-finite array)."""
    values = np.asarray(array)
    if values.size == 0 or not (np.issubdtype(values.dtype, np.number) or values.dtype.name == "bfloat16"):
        return 0.0
    as_float = np.abs(values.astype(np.float64, copy=False))
    finite = as_float[np.isfinite(as_float)]
    return float(finite.max()) if finite.size else 0.0


def _less_precise(a: np.ndarray, b: np.ndarray) -> str:
    names = [dtype_label(a), dtype_label(b)]
    floats = [n for n in names if n in EPS]
    if len(floats) < len(names):  # an integer side: the comparison is in whole units
        return next(n for n in names if n not in EPS)
    return max(floats, key=lambda n: EPS[n])


@dataclass
class UlpTolerance:
    """A default bound per dtype, in ulps of that dtype at the compared tensor's magnitude.

    ``ulps`` maps a float dtype name to a count; ``floor`` (atol, rtol) is a lower bound on
    both terms (validate keeps its float32 defaults as the floor); ``integer_steps``: whole
    units an integer tensor may differ by.
    """

    ulps: Mapping[str, float]
    floor: tuple[float, float] = (0.0, 0.0)
    integer_steps: int = 0
    why: str = ""
    used: dict[str, tuple[float, float, float, str]] = field(default_factory=dict, compare=False)

    def bounds(self, actual: Any, expected: Any, name: str = "") -> tuple[float, float]:
        """(atol, rtol) for comparing ``actual`` with ``expected``."""
        actual, expected = np.asarray(actual), np.asarray(expected)
        dtype = _less_precise(actual, expected)
        eps = eps_of(dtype)
        if eps is None:
            atol, rtol = float(self.integer_steps), 0.0
        else:
            unit = self.ulps.get(dtype, self.ulps.get("float32", 0.0)) * eps
            atol = max(self.floor[0], unit * max(1.0, magnitude(expected)))
            rtol = max(self.floor[1], unit)
        if name:
            self.used[name] = (atol, rtol, magnitude(expected), dtype)
        assert math.isfinite(atol) and math.isfinite(rtol)
        return atol, rtol

    def largest_atol(self) -> float:
        return max((a for a, *_ in self.used.values()), default=0.0)

    def describe(self) -> str:
        """What the default bound is, in words (reports print it)."""
        seen = {dtype for *_, dtype in self.used.values()}  # only the dtypes compared, once some were
        parts = [
            f"{count:g} ulps of {name} ({count * EPS[name]:.3g} relative)"
            for name, count in self.ulps.items()
            if name in EPS and (not seen or name in seen)
        ]
        text = "dtype-aware default: |diff| <= k*eps*(max(1, max|ref|) + |ref|)" + (
            f" with k*eps = {', '.join(parts)}" if parts else ""
        )
        if any(self.floor):
            text += f"; at least atol {self.floor[0]:g} and rtol {self.floor[1]:g}"
        if self.integer_steps:
            text += f"; integer tensors within {self.integer_steps} step(s)"
        return text + (f" ({self.why})" if self.why else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "ulps",
            "ulps": dict(self.ulps),
            "floor": list(self.floor),
            "integer_steps": self.integer_steps,
            "description": self.describe(),
            "per_tensor": {
                k: {"atol": a, "rtol": r, "magnitude": m, "dtype": d} for k, (a, r, m, d) in self.used.items()
            },
        }
