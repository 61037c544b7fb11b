"""compare_arrays' one-pass figures: 0-d arrays, non-finite elements, float32 overflow of the relative error."""

from __future__ import annotations

import math

import numpy as np

from graphsurgeon_tools.check.compare import abs_diff, compare_arrays


def test_zero_dimensional_arrays_are_compared() -> None:
    result = compare_arrays(np.float32(3.0), np.float32(3.01), atol=1e-4, rtol=1e-3)
    assert not result.passed and result.mismatched == 1
    assert math.isclose(result.max_abs_error, 0.01, rel_tol=1e-4)
    assert abs_diff(np.float64(1.0), np.float64(1.5)).shape == ()


def test_equal_infinities_and_nan_at_the_same_place_agree() -> None:
    a = np.array([1.0, np.inf, np.nan, 2.0], np.float32)
    b = np.array([1.0, np.inf, np.nan, np.nan], np.float32)
    result = compare_arrays(a, b, atol=1e-4, rtol=1e-3)
    assert result.mismatched == 1 and result.max_abs_error == math.inf


def test_float32_relative_error_on_a_tiny_reference_element_stays_finite() -> None:
    b = np.array([1e-38, 1.0], np.float32)
    a = np.array([1.0, 1.0], np.float32)
    result = compare_arrays(a, b, atol=0.0, rtol=0.0)
    assert math.isfinite(result.max_rel_error) and result.max_rel_error > 1e37
