"""Conformance, linear and cubic (and antialias): the kernels against ONNX Runtime's own Resize.

Every dtype x mode x coordinate_transformation_mode on 1-D, 2-D and 3-D spatial inputs,
through the compiled ORT library (DynamicTRTResize in a real session) and the C++ torch op.

What "equal" means, per dtype (graphsurgeon_tools/resize/kernel_dtypes.py):
* linear on uint8 / int8 / int32 / float16 / bfloat16: bit for bit. The kernels evaluate
  ORT's one float32 expression per output and cast it as ORT does (integers truncate,
  halves round once); bfloat16, which ORT has no kernel for, is ORT's float32 result
  rounded to bfloat16.
* linear on float32: within LINEAR_ULPS (2) float32 ulps of max|X| (the kernels blend axis
  by axis, which is faster, and round differently from ORT's one expression).
* cubic on float32: within CUBIC_ULPS (4) ulps; on float16 / bfloat16 within 1 ulp of the
  half type (ORT normalises its coefficients in float32; the kernels use double weights).
* antialias (torch op only, float32 / float16): ANTIALIAS_ULPS (8) float32 ulps / 1 half ulp.
* float64: no ORT kernel (asserted); the float64 result is compared with ORT's float32 run
  on the same values, within float32's bound.
* Combinations ORT rejects (cubic on 1-D / 3-D spatial inputs; cubic on integers) are
  asserted to be rejected by ORT, and the kernels' own behaviour is stated: the torch op and
  the library agree on what ORT cannot run for floats, and refuse integer cubic with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest
from conformance_cases import (
    CTMS,
    DTYPES,
    ORT_DTYPES,
    SHAPES,
    as_f64,
    roi_for,
    run_op,
    run_ort,
    run_plugin,
    sample,
    ulp_bound,
)
from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

# Stated bounds, in ulps of the dtype at max(|X|, |Y|, 1); measured maxima on these cases:
# float32 linear 0.79, float32 cubic 1.55, float16 / bfloat16 cubic 0, antialias float32 3.1.
LINEAR_ULPS = 2
CUBIC_ULPS = 4
HALF_CUBIC_ULPS = 1
ANTIALIAS_ULPS = 8
INTEGERS = ("uint8", "int8", "int32")
ORT_ERRORS = (ort_state.Fail, ort_state.NotImplemented, ort_state.InvalidArgument, ort_state.RuntimeException)


def _bound(dtype: str, mode: str, expected: np.ndarray, x: np.ndarray) -> float:
    if dtype in INTEGERS or (mode == "linear" and dtype in ("float16", "bfloat16")):
        return 0.0
    if dtype in ("float16", "bfloat16"):
        return ulp_bound(dtype, expected, x, HALF_CUBIC_ULPS)
    # float64 is compared with ORT's float32 run, so float32's bound
    return ulp_bound("float32", expected, x, LINEAR_ULPS if mode == "linear" else CUBIC_ULPS)


def _reference(dtype: str, attrs: dict, x: np.ndarray, scales, roi):
    """ORT's result for the case (float32 for float64 / bfloat16, rounded to bfloat16 for bfloat16)."""
    if dtype in ORT_DTYPES:
        return run_ort(dtype, attrs, x, scales, roi)
    out = run_ort("float32", attrs, x.astype(np.float32), scales, roi)
    return out.astype(x.dtype)


def _compare(label: str, got: np.ndarray, expected: np.ndarray, bound: float) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape, label
    diff = np.max(np.abs(as_f64(got) - as_f64(expected))) if got.size else 0.0
    assert diff <= bound, f"{label}: max |diff| {diff} over the bound {bound}"


@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_blend_matches_onnxruntime(dtype: str, mode: str, ctm: str) -> None:
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
    crop = ctm == "tf_crop_and_resize"
    if crop:
        attrs["extrapolation_value"] = 7.0
    ran = refused = 0
    for spatial, cases in SHAPES.items():
        for k, (shape, scales) in enumerate(cases):
            x = sample(shape, dtype, seed=100 * spatial + k)
            roi = roi_for(len(shape)) if crop else None
            ort_dtype = dtype if dtype in ORT_DTYPES else "float32"
            if mode == "cubic" and (spatial != 2 or dtype in INTEGERS):
                # ORT's cubic takes only [1, 1, h, w]; on integers it fails at run time.
                with pytest.raises(ORT_ERRORS):
                    run_ort(ort_dtype, attrs, x if dtype in ORT_DTYPES else x.astype(np.float32), scales, roi)
                if dtype in INTEGERS:
                    with pytest.raises(RuntimeError, match="cubic.*not supported on integer"):
                        run_op(dtype, attrs, x, scales, roi)
                    if not crop:
                        with pytest.raises(ORT_ERRORS, match="cubic.*not supported on integer"):
                            run_plugin(dtype, attrs, x, scales)
                elif not crop:
                    # no reference: the two kernel paths must at least agree bit for bit
                    np.testing.assert_array_equal(
                        as_f64(run_op(dtype, attrs, x, scales)), as_f64(run_plugin(dtype, attrs, x, scales))
                    )
                refused += 1
                continue
            expected = _reference(dtype, attrs, x, scales, roi)
            bound = _bound(dtype, mode, expected, x)
            _compare(f"torch op {shape} x {scales}", run_op(dtype, attrs, x, scales, roi), expected, bound)
            if not crop:
                _compare(f"plugin {shape} x {scales}", run_plugin(dtype, attrs, x, scales), expected, bound)
            ran += 1
    if mode == "cubic" and dtype in INTEGERS:
        assert (ran, refused) == (0, 8)
    else:
        assert ran >= (2 if mode == "cubic" else 8), (ran, refused)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_antialias_torch_op_matches_onnxruntime(dtype: str, mode: str) -> None:
    # The plugin node has no antialias; the torch op has ORT's filter within a stated bound.
    attrs = {"mode": mode, "antialias": 1}
    for shape, scales in [((1, 2, 17, 13), (1, 1, 0.45, 0.7)), ((1, 1, 9, 8), (1, 1, 1.5, 0.5))]:
        x = sample(shape, dtype, seed=7)
        expected = run_ort(dtype, attrs, x, scales)
        _compare(
            f"antialias {shape} x {scales}",
            run_op(dtype, attrs, x, scales),
            expected,
            ulp_bound(dtype, expected, x, ANTIALIAS_ULPS if dtype == "float32" else 1),
        )


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_antialias_is_refused_by_the_torch_op(dtype: str) -> None:
    # ORT runs it with its own 22-bit fixed point filter, which the kernels do not implement.
    x = sample((1, 1, 8, 8), dtype, seed=1)
    run_ort(dtype, {"mode": "linear", "antialias": 1}, x, (1, 1, 0.5, 0.5))  # ORT takes it
    with pytest.raises(RuntimeError, match="antialias is not supported on integer"):
        run_op(dtype, {"mode": "linear", "antialias": 1}, x, (1, 1, 0.5, 0.5))
