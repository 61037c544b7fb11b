"""Tolerances that know their dtype (check.tolerance.UlpTolerance) in the built-in checks.

A half-precision model that differs by one float16 ulp passes; a float32 output in the hundreds
that differs by 4.1e-5 (DepthAnything's case: one element cancels to near zero) passes under the
magnitude-scaled bound; a real difference still fails; explicit atol/rtol keep working.
"""

from __future__ import annotations

import numpy as np
import onnx.parser
import pytest

from graphsurgeon_tools import swap_plugin
from graphsurgeon_tools.check.compare import compare_arrays
from graphsurgeon_tools.check.equivalence import compare_models
from graphsurgeon_tools.check.tolerance import EPS, UlpTolerance, magnitude
from graphsurgeon_tools.passes.swap_plugin.check import KERNEL_ULPS


def _judge(actual: np.ndarray, expected: np.ndarray, tolerance: UlpTolerance) -> bool:
    atol, rtol = tolerance.bounds(actual, expected, "t")
    return compare_arrays(actual, expected, atol=atol, rtol=rtol).passed


def test_one_float16_ulp_passes_and_a_real_difference_does_not() -> None:
    expected = np.linspace(-1.9, 1.9, 64, dtype=np.float16)
    one_ulp = np.nextafter(expected, np.float16(np.inf))
    kernel = UlpTolerance(dict(KERNEL_ULPS))
    assert _judge(one_ulp, expected, kernel)
    assert not _judge(expected + np.float16(0.05), expected, kernel)
    # the bound is in float16 units, not float32's: 2 ulps of float16 at magnitude 1.9
    atol, rtol = kernel.bounds(one_ulp, expected)
    assert atol == pytest.approx(2 * EPS["float16"] * 1.9, rel=1e-3) and rtol == 2 * EPS["float16"]


def test_float32_in_the_hundreds_is_judged_at_its_magnitude() -> None:
    rng = np.random.default_rng(0)
    expected = (rng.standard_normal((1, 1, 32, 32)) * 150).astype(np.float32)
    expected.flat[7] = 1e-3  # an element that cancels to near zero
    actual = expected.copy()
    actual.flat[7] += 4.1e-5
    kernel = UlpTolerance(dict(KERNEL_ULPS))
    assert _judge(actual, expected, kernel)
    # the fixed bound it replaces refused exactly this
    assert not compare_arrays(actual, expected, atol=1e-5, rtol=1e-5).passed
    # and a difference of 1e-2 on that element is still a failure
    actual.flat[7] = expected.flat[7] + 1e-2
    assert not _judge(actual, expected, kernel)
    assert magnitude(expected) > 100


def test_a_float16_model_compared_with_float32_values_is_judged_in_float16() -> None:
    tolerance = UlpTolerance({"float32": 64.0, "float16": 2.0})
    expected = np.linspace(0, 1, 16, dtype=np.float32)
    actual = expected.astype(np.float16)  # rounding to float16: up to half a float16 ulp
    assert _judge(actual, expected, tolerance)
    assert tolerance.used["t"][3] == "float16"


def test_integer_tensors_are_compared_in_steps() -> None:
    expected = np.arange(10, dtype=np.int8)
    assert not _judge(expected + 1, expected, UlpTolerance({}))  # exact by default
    assert _judge((expected + 1).astype(np.int8), expected, UlpTolerance({}, integer_steps=1))


def _half_model(mode: str) -> onnx.ModelProto:
    return onnx.parser.parse_model(f"""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[1,3,8,8] x) => (float16[1,3,16,16] y) <float[4] s = {{1.0, 1.0, 2.0, 2.0}}> {{
        r = Resize<mode = "{mode}">(x, , s)
        y = Mul(r, r)
    }}""")


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_swap_plugin_checks_a_half_precision_model_in_float16_ulps(mode: str) -> None:
    result = swap_plugin(_half_model(mode))
    check = result.check
    assert check.passed is True, check.summary
    assert "ulps of float16" in check.tolerance and "float32" not in check.tolerance
    assert 0 < check.atol <= 2 * EPS["float16"] * max(1.0, 16.0)  # x*x of N(0,1) inputs stays below 16
    assert any("dtype-aware" in note for note in result.notes)


def test_explicit_atol_and_rtol_still_decide() -> None:
    import golden

    model = golden.resize_model(13, mode="linear")
    same = compare_models(model, model, atol=0.0, rtol=0.0)
    assert same.passed is True and same.atol == 0.0 and same.tolerance == ""
    loose = compare_models(model, model, atol=0.5, rtol=0.1)
    assert loose.passed is True and loose.atol == 0.5
