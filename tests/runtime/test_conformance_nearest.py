"""Conformance, nearest: the compiled ORT library and the C++ torch op pick ONNX Runtime's pixels.

Every dtype x coordinate_transformation_mode x nearest_mode, on 1-D, 2-D and 3-D spatial
inputs (N, C, L) / (N, C, H, W) / (N, C, D, H, W), with exact half ties (20 -> 6, the
onnxruntime#28291 case) among the shapes. Nearest is a gather, so every comparison is exact
equality, whatever the dtype. float64 and bfloat16 have no ORT kernel: ORT is asserted to
refuse them, and the kernels are compared with ORT's float32 run on the same values (exact:
a gather does not round). tf_crop_and_resize needs roi, which the plugin node has no input
for: the library is asserted to refuse it, and the torch op is compared with ORT.
"""

from __future__ import annotations

import numpy as np
import pytest
from conformance_cases import (
    CTMS,
    DTYPES,
    NEAREST_MODES,
    ORT_DTYPES,
    SHAPES,
    as_f64,
    roi_for,
    run_op,
    run_ort,
    run_plugin,
    sample,
)
from onnxruntime.capi import onnxruntime_pybind11_state as ort_state


def _expected(dtype: str, attrs: dict, x: np.ndarray, scales, roi=None) -> np.ndarray:
    if dtype in ORT_DTYPES:
        return run_ort(dtype, attrs, x, scales, roi)
    return run_ort("float32", attrs, x.astype(np.float32), scales, roi)


@pytest.mark.parametrize("nearest_mode", NEAREST_MODES)
@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_nearest_matches_onnxruntime_exactly(dtype: str, ctm: str, nearest_mode: str) -> None:
    attrs = {"mode": "nearest", "coordinate_transformation_mode": ctm, "nearest_mode": nearest_mode}
    crop = ctm == "tf_crop_and_resize"
    if crop:
        attrs["extrapolation_value"] = 7.0
    compared = 0
    for spatial, cases in SHAPES.items():
        for k, (shape, scales) in enumerate(cases):
            x = sample(shape, dtype, seed=100 * spatial + k)
            roi = roi_for(len(shape)) if crop else None
            expected = _expected(dtype, attrs, x, scales, roi)
            got = run_op(dtype, attrs, x, scales, roi)
            assert got.dtype == x.dtype and got.shape == expected.shape, (shape, scales)
            np.testing.assert_array_equal(as_f64(got), as_f64(expected), err_msg=f"torch op {shape} x {scales}")
            if not crop:
                plugin = run_plugin(dtype, attrs, x, scales)
                assert plugin.dtype == x.dtype
                np.testing.assert_array_equal(as_f64(plugin), as_f64(expected), err_msg=f"plugin {shape} x {scales}")
            compared += 1
    assert compared == sum(len(c) for c in SHAPES.values())


def test_the_onnxruntime_28291_tie_is_exact() -> None:
    # half_pixel + round_prefer_ceil, 20 -> 6: x = 4.5 and 14.5 exactly; ORT picks 5 and 15.
    x = np.arange(20, dtype=np.float32).reshape(1, 1, 1, 20)
    attrs = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel", "nearest_mode": "round_prefer_ceil"}
    want = np.array([1, 5, 8, 11, 15, 18], np.float32)
    np.testing.assert_array_equal(run_ort("float32", attrs, x, (1, 1, 1, 0.3)).ravel(), want)
    np.testing.assert_array_equal(run_plugin("float32", attrs, x, (1, 1, 1, 0.3)).ravel(), want)
    np.testing.assert_array_equal(run_op("float32", attrs, x, (1, 1, 1, 0.3)).ravel(), want)


@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_onnxruntime_has_no_resize_for(dtype: str) -> None:
    # The skip in the table above is ORT's own refusal, asserted here.
    x = sample((1, 1, 4, 4), dtype, seed=0)
    with pytest.raises(ort_state.NotImplemented, match="Could not find an implementation for Resize"):
        run_ort(dtype, {"mode": "nearest"}, x, (1, 1, 2, 2))


def test_the_plugin_refuses_tf_crop_and_resize_with_the_reason() -> None:
    with pytest.raises(ort_state.RuntimeException, match="tf_crop_and_resize' needs roi"):
        run_plugin(
            "float32",
            {"mode": "nearest", "coordinate_transformation_mode": "tf_crop_and_resize"},
            sample((1, 1, 4, 4), "float32", seed=0),
            (1, 1, 2, 2),
        )


def test_an_output_of_the_input_shape_is_a_copy_in_the_library_as_in_onnxruntime() -> None:
    # ORT copies X when floor(in * scale) keeps every length (6 * 1.1 -> 6), whatever the scale;
    # the library does too. The torch op maps each axis by its scale (as interpolate does).
    x = sample((1, 1, 6, 6), "float32", seed=3)
    attrs = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel", "nearest_mode": "round_prefer_floor"}
    np.testing.assert_array_equal(run_ort("float32", attrs, x, (1, 1, 1.1, 1.1)), x)
    np.testing.assert_array_equal(run_plugin("float32", attrs, x, (1, 1, 1.1, 1.1)), x)
    assert not np.array_equal(run_op("float32", attrs, x, (1, 1, 1.1, 1.1)), x)
