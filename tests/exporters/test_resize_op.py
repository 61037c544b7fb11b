"""torch.ops.onnxtool.resize: ONNX Resize (opset 19) conformance, interpolate agreement, errors, opcheck, export.

Ground truth is the ONNX specification: the node test cases that the installed
``onnx`` package generates (``onnx.backend.test.case.node.resize`` /
``.upsample``; their expected outputs come from onnx's reference
implementation), plus a grid of configurations the spec cases do not reach (other
ranks, fractional factors, every coordinate mode with every interpolation mode) against
ONNX Runtime's Resize where it runs them (the op computes ORT's arithmetic; see
``_reference``), else ``onnx.reference.ReferenceEvaluator``. The spec cases where ORT
and the reference disagree (align_corners with a fractional in * scale) compare with ORT.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

from exporters import ops

ops.load()  # torch.ops.onnxtool.* is called directly below

RTOL, ATOL = 1e-4, 1e-5
REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- spec cases


def _spec_cases() -> list:
    # Importing these modules runs their export_* functions, which append the
    # generated cases to onnx's module-level list (no data files needed).
    import onnx.backend.test.case.node.resize  # noqa: F401
    import onnx.backend.test.case.node.upsample  # noqa: F401
    from onnx.backend.test.case import node as node_cases

    return [c for c in node_cases._NodeTestCases if c.name.startswith(("test_resize_", "test_upsample_"))]


SPEC_CASES = {c.name: c for c in _spec_cases()}

# Attribute names the op takes under the same name.
_OP_ATTRS = (
    "mode",
    "coordinate_transformation_mode",
    "cubic_coeff_a",
    "exclude_outside",
    "nearest_mode",
    "extrapolation_value",
    "antialias",
)


class Inexpressible(Exception):
    """A spec case the op cannot express (it takes scales; no scale gives the case's output shape)."""


def _case_to_call(case) -> tuple[np.ndarray, np.ndarray, dict, np.ndarray | None, np.ndarray]:
    """Translate one spec case into (X, full-rank scales, op kwargs, roi, expected).

    Raises Inexpressible for the cases the op cannot express, with the reason.
    """
    node = case.model.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
    inputs, outputs = case.data_sets[0]
    named = dict(zip([n for n in node.input if n], inputs, strict=True))
    x = np.asarray(named[node.input[0]])
    expected = np.asarray(outputs[0])
    rank = x.ndim
    opset = case.model.opset_import[0].version

    kwargs = {k: (bool(v) if k in ("exclude_outside", "antialias") else v) for k, v in attrs.items() if k in _OP_ATTRS}
    if node.op_type == "Upsample":
        # Upsample-9 is Resize with asymmetric coordinates and floor rounding for nearest.
        kwargs["coordinate_transformation_mode"] = "asymmetric"
        if kwargs.get("mode", "nearest") == "nearest":
            kwargs["nearest_mode"] = "floor"
        scales = np.asarray(named[node.input[1]], dtype=np.float64)
        return x, scales, kwargs, None, expected
    assert opset >= 13, f"{case.name}: unexpected opset {opset}"

    axes = list(attrs.get("axes", range(rank)))
    names = list(node.input) + [""] * (4 - len(node.input))
    roi = named.get(names[1]) if names[1] else None
    if roi is not None and np.asarray(roi).size:
        roi = np.asarray(roi, dtype=np.float64)
        full_roi = np.array([0.0] * rank + [1.0] * rank)
        for i, d in enumerate(axes):
            full_roi[d] = roi[i]
            full_roi[rank + d] = roi[len(axes) + i]
        roi = full_roi
    else:
        roi = None

    scales = np.ones(rank, dtype=np.float64)
    if names[2]:
        for i, d in enumerate(axes):
            scales[d] = float(np.float32(named[names[2]][i]))
    else:
        sizes = np.asarray(named[names[3]], dtype=np.int64)
        # The op takes scales; the spec derives scale = size / input size from
        # sizes (then the aspect-ratio policy, if any). The case is expressible
        # when floor(input * scale) gives back the spec's output size.
        for i, d in enumerate(axes):
            scales[d] = sizes[i] / x.shape[d]
        policy = attrs.get("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            s = pick(scales[d] for d in axes)
            for d in axes:
                scales[d] = s
        produced = tuple(int(v) for v in np.floor(scales * np.array(x.shape)))
        if produced != expected.shape:
            raise Inexpressible(
                f"sizes-driven case: no scale reproduces output shape {expected.shape} "
                f"(floor(input * size/input) gives {produced})"
            )
    return x, scales, kwargs, roi, expected


# Spec cases whose expected output is the reference's and not ONNX Runtime's: align_corners
# on 4 * 0.8 = 3.2, where the reference divides by 3.2 - 1 and ORT by its output length 3 - 1.
# The op computes ORT's; its expected output here is ORT's run of the case's own model.
ORT_DIFFERS = {
    "test_resize_downsample_scales_cubic_align_corners",
    "test_resize_downsample_scales_linear_align_corners",
}


def _inexpressible(name: str) -> str | None:
    try:
        _case_to_call(SPEC_CASES[name])
    except Inexpressible as why:
        return str(why)
    return None


#: Spec cases no scale can express, and why: the op is called on every other case.
INEXPRESSIBLE = {
    "test_resize_downsample_sizes_nearest_not_smaller": "no scale reproduces output shape (1, 1, 2, 3) "
    "(floor(input * size/input) gives (1, 1, 1, 3))",
}


def test_the_inexpressible_spec_cases_are_exactly_the_known_ones() -> None:
    found = {name: why for name in SPEC_CASES if (why := _inexpressible(name)) is not None}
    assert sorted(found) == sorted(INEXPRESSIBLE), found
    for name, why in INEXPRESSIBLE.items():
        assert why in found[name], found[name]


@pytest.mark.parametrize("name", sorted(set(SPEC_CASES) - set(INEXPRESSIBLE)))
def test_spec_case(name: str) -> None:
    x, scales, kwargs, roi, expected = _case_to_call(SPEC_CASES[name])
    if name in ORT_DIFFERS:
        case = SPEC_CASES[name]
        feeds = dict(zip([i.name for i in case.model.graph.input], case.data_sets[0][0], strict=True))
        by_ort = ort.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, feeds
        )[0]
        assert np.max(np.abs(by_ort - expected)) > 1e-3  # the two really differ here
        expected = by_ort
    y = ops.resize(
        torch.from_numpy(x),
        torch.from_numpy(scales),
        roi=None if roi is None else torch.from_numpy(roi),
        **kwargs,
    )
    assert y.dtype == torch.from_numpy(x).dtype
    assert tuple(y.shape) == expected.shape
    np.testing.assert_allclose(y.numpy(), expected, rtol=RTOL, atol=ATOL)


def test_spec_cases_were_collected() -> None:
    # Guards against a silent empty parametrization if onnx reorganises its cases.
    assert len(SPEC_CASES) >= 39
    assert any(n.startswith("test_upsample_") for n in SPEC_CASES)


# ------------------------------------------- reference evaluator, wider grid


def _resize_model(x: np.ndarray, roi: np.ndarray | None, second: np.ndarray, slot: str, attrs: dict) -> onnx.ModelProto:
    node_attrs = {k: (int(v) if isinstance(v, bool) else v) for k, v in attrs.items()}
    inputs = ["X", "roi", "scales"] if slot == "scales" else ["X", "roi", "", "sizes"]
    node = helper.make_node("Resize", inputs, ["Y"], **node_attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
        initializer=[
            numpy_helper.from_array(second, slot),
            numpy_helper.from_array(np.asarray([] if roi is None else roi, np.float32), "roi"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return model


def _reference(x: np.ndarray, scales: np.ndarray, roi: np.ndarray | None, **attrs) -> np.ndarray:
    """What the op computes: ONNX Runtime's Resize where ORT runs the case, else the ONNX reference.

    The op follows ORT where ORT and the reference implementation differ (align_corners and
    tf_crop_and_resize on the integer output length, float32 coordinates at nearest ties,
    roi ignored on axes whose scale is 1); the reference runs where ORT cannot (cubic or
    linear on ranks its CPU kernel rejects), on ORT's output sizes for the two coordinate
    modes that depend on the lengths alone.
    """
    scales32 = np.asarray(scales, np.float32)
    try:
        session = ort.InferenceSession(
            _resize_model(x, roi, scales32, "scales", attrs).SerializeToString(), providers=["CPUExecutionProvider"]
        )
        return session.run(None, {"X": x})[0]
    except (ort_state.Fail, ort_state.NotImplemented, ort_state.InvalidArgument, ort_state.RuntimeException):
        pass
    if attrs.get("coordinate_transformation_mode") not in ("align_corners", "tf_crop_and_resize"):
        return ReferenceEvaluator(_resize_model(x, roi, scales32, "scales", attrs)).run(None, {"X": x})[0]
    # these two depend on the lengths alone: give the reference ORT's integer output length
    sizes = np.floor(np.array(x.shape, np.float32) * scales32).astype(np.int64)
    return ReferenceEvaluator(_resize_model(x, roi, sizes, "sizes", attrs)).run(None, {"X": x})[0]


def _identity_roi(roi: np.ndarray, scales) -> np.ndarray:
    # ORT ignores roi on an axis whose scale is 1 (no coordinate transform there), the
    # reference crops it: keep [0, 1] there so both define the same case.
    rank = len(scales)
    roi = roi.copy()
    for axis, s in enumerate(scales):
        if np.float32(s) == 1:
            roi[axis], roi[rank + axis] = 0, 1
    return roi


MODES = ["nearest", "linear", "cubic"]
COORDS = [
    "half_pixel",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "half_pixel_symmetric",
    "tf_crop_and_resize",
]
# (shape, scales): upsampling, downsampling, fractional and mixed factors, a
# size-1 axis, ranks 1 to 5, and axes left alone (scale 1).
GRID_SHAPES = [
    ((7,), (2.5,)),
    ((2, 3, 5, 6), (1.0, 1.0, 1.7, 0.6)),
    ((1, 2, 4, 1), (1.0, 1.0, 0.5, 3.0)),
    ((3, 5, 4), (1.0, 2.0, 1.25)),
    ((1, 2, 3, 4, 5), (1.0, 1.0, 2.0, 0.75, 1.5)),
]


def _grid_params():
    for mode, coord, (shape, scales) in itertools.product(MODES, COORDS, GRID_SHAPES):
        yield pytest.param(mode, coord, shape, scales, id=f"{mode}-{coord}-{'x'.join(map(str, shape))}")


@pytest.mark.parametrize(("mode", "coord", "shape", "scales"), list(_grid_params()))
def test_matches_reference_evaluator(mode: str, coord: str, shape, scales) -> None:
    rng = np.random.default_rng(abs(hash((mode, coord, shape))) % 2**32)
    x = rng.standard_normal(shape).astype(np.float32)
    roi = None
    if coord == "tf_crop_and_resize":
        rank = len(shape)
        # Starts below 0 and ends above 1 on some axes, so extrapolation is exercised.
        roi = np.concatenate([rng.uniform(-0.2, 0.4, rank), rng.uniform(0.6, 1.2, rank)]).astype(np.float32)
        roi = _identity_roi(roi, scales)
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    if coord == "tf_crop_and_resize":
        attrs["extrapolation_value"] = 7.5
    expected = _reference(x, np.asarray(scales), roi, **attrs)
    y = ops.resize(
        torch.from_numpy(x),
        torch.tensor(scales, dtype=torch.float32),
        roi=None if roi is None else torch.from_numpy(roi),
        **attrs,
    )
    assert tuple(y.shape) == expected.shape
    np.testing.assert_allclose(y.numpy(), expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("coord", ["half_pixel", "tf_crop_and_resize"])
@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.3, 0.8), (1.0, 1.0, 0.55, 1.7)], ids=["rows-grow", "rows-shrink"])
def test_large_planes_match_reference(mode: str, coord: str, scales) -> None:
    # Big enough that the kernel splits planes into several blocks of rows
    # (and threads), which the small grid cases never do; growing and
    # shrinking rows take the two orders of the fused pass.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 45, 37)).astype(np.float32)
    roi = np.array([0, 0, -0.1, 0.05, 1, 1, 0.93, 1.2], np.float32) if coord == "tf_crop_and_resize" else None
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    if coord == "tf_crop_and_resize":
        attrs["extrapolation_value"] = -3.0
    expected = _reference(x, np.asarray(scales), roi, **attrs)
    y = ops.resize(
        torch.from_numpy(x), torch.tensor(scales), roi=None if roi is None else torch.from_numpy(roi), **attrs
    )
    np.testing.assert_allclose(y.numpy(), expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners"])
def test_nearest_modes_match_reference(nearest_mode: str, coord: str) -> None:
    # 0.5 steps in the source coordinate land exactly on rounding ties.
    x = np.arange(2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8)
    for scales in ((1.0, 2.0, 2.0), (1.0, 1.0, 0.5), (1.0, 3.0, 1.5)):
        attrs = {"mode": "nearest", "coordinate_transformation_mode": coord, "nearest_mode": nearest_mode}
        expected = _reference(x, np.asarray(scales), None, **attrs)
        y = ops.resize(torch.from_numpy(x), torch.tensor(scales), **attrs)
        np.testing.assert_array_equal(y.numpy(), expected)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scales", [(1.0, 1.0, 0.5, 0.3), (1.0, 1.0, 0.7, 1.6), (1.0, 1.0, 2.0, 2.0)])
@pytest.mark.parametrize(
    "options",
    [
        {"antialias": True},
        {"exclude_outside": True, "cubic_coeff_a": -0.5},
        {"antialias": True, "exclude_outside": True},
    ],
)
def test_antialias_and_exclude_outside_match_reference(mode: str, scales, options) -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 11, 13)).astype(np.float32)
    attrs = {"mode": mode, **options}
    if mode == "linear":
        attrs.pop("cubic_coeff_a", None)
    expected = _reference(x, np.asarray(scales), None, **attrs)
    y = ops.resize(torch.from_numpy(x), torch.tensor(scales), **attrs)
    np.testing.assert_allclose(y.numpy(), expected, rtol=RTOL, atol=ATOL)


# ------------------------------------------------------ interpolate agreement


@pytest.mark.parametrize("factor", [2.0, 3.0, 4.0, 5.0, 0.5, 1.5])
@pytest.mark.parametrize("shape", [(2, 3, 12, 10), (1, 32, 128, 132)], ids=["small", "streamed"])
def test_nearest_matches_interpolate(factor: float, shape) -> None:
    # The second shape's x2 output (> 8 MiB) takes the streaming-store kernel.
    x = torch.rand(shape)
    expected = F.interpolate(x, scale_factor=factor, mode="nearest")
    y = ops.resize(
        x,
        torch.tensor([1.0, 1.0, factor, factor]),
        mode="nearest",
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


@pytest.mark.parametrize(("mode", "onnx_mode"), [("bilinear", "linear"), ("bicubic", "cubic")])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("factor", [2.0, 3.0, 0.5])
def test_linear_and_cubic_match_interpolate(mode: str, onnx_mode: str, align_corners: bool, factor: float) -> None:
    x = torch.rand(2, 3, 16, 12)
    expected = F.interpolate(x, scale_factor=factor, mode=mode, align_corners=align_corners)
    # PyTorch's bicubic is Keys with a = -0.75 and does not exclude outside
    # taps: the ONNX defaults. Its half-pixel mapping is ONNX half_pixel
    # (pytorch_half_pixel only differs for an output of size 1).
    y = ops.resize(
        x,
        torch.tensor([1.0, 1.0, factor, factor]),
        mode=onnx_mode,
        coordinate_transformation_mode="align_corners" if align_corners else "half_pixel",
    )
    torch.testing.assert_close(y, expected, rtol=RTOL, atol=ATOL)


def test_trilinear_matches_interpolate() -> None:
    x = torch.rand(1, 2, 5, 6, 7)
    expected = F.interpolate(x, scale_factor=2.0, mode="trilinear", align_corners=False)
    y = ops.resize(x, torch.tensor([1.0, 1.0, 2.0, 2.0, 2.0]), mode="linear")
    torch.testing.assert_close(y, expected, rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------- dtypes, misc


def test_float64_is_computed_in_double() -> None:
    x = torch.rand(1, 2, 9, 7, dtype=torch.float64)
    expected = _reference(x.numpy().astype(np.float32), np.array([1, 1, 1.5, 2.5]), None, mode="cubic")
    y = ops.resize(x, torch.tensor([1, 1, 1.5, 2.5], dtype=torch.float64), mode="cubic")
    assert y.dtype == torch.float64
    np.testing.assert_allclose(y.numpy(), expected, rtol=RTOL, atol=ATOL)
    # Same input in float32 agrees to float32 precision only.
    y32 = ops.resize(x.float(), torch.tensor([1, 1, 1.5, 2.5]), mode="cubic")
    torch.testing.assert_close(y.float(), y32, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_precision_computed_in_float32(dtype: torch.dtype) -> None:
    x = torch.rand(1, 3, 10, 10).to(dtype)
    scales = torch.tensor([1.0, 1.0, 2.0, 2.0])
    y = ops.resize(x, scales, mode="linear")
    assert y.dtype == dtype
    expected = ops.resize(x.float(), scales, mode="linear").to(dtype)
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


def test_unit_scales_return_an_equal_copy() -> None:
    x = torch.rand(2, 3, 4)
    for mode in MODES:
        y = ops.resize(x, torch.ones(3), mode=mode, coordinate_transformation_mode="align_corners")
        assert torch.equal(y, x)
        assert y.data_ptr() != x.data_ptr()


def test_non_contiguous_input() -> None:
    x = torch.rand(1, 3, 8, 10).transpose(2, 3)
    scales = torch.tensor([1.0, 1.0, 2.0, 1.5])
    torch.testing.assert_close(
        ops.resize(x, scales, mode="cubic"), ops.resize(x.contiguous(), scales, mode="cubic"), rtol=0, atol=0
    )


def test_empty_output_when_factor_floors_to_zero() -> None:
    y = ops.resize(torch.rand(1, 1, 3, 3), torch.tensor([1.0, 1.0, 0.2, 1.0]), mode="linear")
    assert tuple(y.shape) == (1, 1, 0, 3)


@pytest.mark.parametrize("mode", MODES)
def test_threads_give_identical_results(mode: str) -> None:
    x = torch.rand(2, 8, 40, 40)
    scales = torch.tensor([1.0, 1.0, 2.5, 2.5])
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = ops.resize(x, scales, mode=mode)
        torch.set_num_threads(2)
        two = ops.resize(x, scales, mode=mode)
    finally:
        torch.set_num_threads(previous)
    assert torch.equal(one, two)


def test_reused_output_buffers_never_alias_live_tensors() -> None:
    # Large outputs come from a cache of freed buffers (output_cache.h).
    x = torch.rand(1, 16, 128, 128)
    scales = torch.tensor([1.0, 1.0, 2.0, 2.0])
    first = ops.resize(x, scales, mode="linear")
    expected = first.clone()
    second = ops.resize(x, scales, mode="linear")
    assert first.data_ptr() != second.data_ptr()
    del first
    third = ops.resize(x * 2, scales, mode="linear")  # may reuse `first`'s memory
    torch.testing.assert_close(third, expected * 2)
    assert torch.equal(second, expected)
    # They are ordinary resizable CPU tensors.
    third.resize_(1, 16, 512, 512).fill_(1.0)
    assert third.sum().item() == 16 * 512 * 512


def test_concurrent_callers_share_the_pool_safely() -> None:
    # Python threads calling the op at once: one gets the helper threads, the
    # others run alone; every result must still be exact.
    from concurrent.futures import ThreadPoolExecutor

    x = torch.rand(2, 4, 30, 30)
    scales = torch.tensor([1.0, 1.0, 2.0, 2.0])
    expected = ops.resize(x, scales, mode="cubic")
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: ops.resize(x, scales, mode="cubic"), range(16)))
    assert all(torch.equal(r, expected) for r in results)


def test_works_in_a_forked_child() -> None:
    # The helper threads do not survive fork(); the child must neither hang nor differ.
    code = (
        "import os, torch, exporters.ops as ops\n"
        "torch.set_num_threads(2)\n"
        "x = torch.rand(1, 8, 64, 64); s = torch.tensor([1.0, 1.0, 2.0, 2.0])\n"
        "y = ops.resize(x, s, mode='linear')\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if torch.equal(ops.resize(x, s, mode='linear'), y) else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "raise SystemExit(os.waitstatus_to_exitcode(status))\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr


# ------------------------------------------------------------------- errors

X4 = torch.rand(1, 3, 4, 4)


@pytest.mark.parametrize(
    ("scales", "kwargs", "message"),
    [
        (torch.tensor([1.0, 2.0, 2.0]), {}, r"scales must have one entry per input dimension \(4\), got 3"),
        (torch.tensor([[1.0, 1.0, 2.0, 2.0]]), {}, r"scales must be a 1-D tensor, got 2-D"),
        (torch.tensor([1, 1, 2, 2]), {}, r"scales must be a floating-point tensor .*got Long"),
        (torch.tensor([1.0, 1.0, float("nan"), 2.0]), {}, r"scales\[2\] must be a finite number > 0, got nan"),
        (torch.tensor([1.0, 1.0, 0.0, 2.0]), {}, r"scales\[2\] must be a finite number > 0, got 0"),
        (torch.tensor([1.0, 1.0, -2.0, 2.0]), {}, r"scales\[2\] must be a finite number > 0, got -2"),
        (torch.tensor([1.0, 1.0, float("inf"), 2.0]), {}, r"scales\[2\] must be a finite number > 0, got inf"),
        (torch.tensor([1.0, 1.0, 3e9, 2.0]), {}, r"scales\[2\] = .* over the limit of 2\^31; check the scales"),
        (torch.tensor([1.0, 1.0, 3e4, 3e4]), {}, r"output shape \[1, 3, 120000, 120000\] .* over the limit of 2\^31"),
        (
            torch.tensor([1.0, 1.0, 2.0, 2.0]),
            {"mode": "bilinear"},
            r"mode must be one of 'nearest', 'linear', 'cubic', got 'bilinear'",
        ),
        (
            torch.tensor([1.0, 1.0, 2.0, 2.0]),
            {"coordinate_transformation_mode": "tf_half_pixel_for_nn"},
            r"coordinate_transformation_mode must be one of .*got 'tf_half_pixel_for_nn'",
        ),
        (torch.tensor([1.0, 1.0, 2.0, 2.0]), {"nearest_mode": "round"}, r"nearest_mode must be one of .*got 'round'"),
        (
            torch.tensor([1.0, 1.0, 2.0, 2.0]),
            {"antialias": True},
            r"antialias is only defined for mode 'linear' and 'cubic', got mode 'nearest'",
        ),
        (
            torch.tensor([1.0, 1.0, 2.0, 2.0]),
            {"coordinate_transformation_mode": "tf_crop_and_resize"},
            r"roi is required when coordinate_transformation_mode is 'tf_crop_and_resize'",
        ),
        (
            torch.tensor([1.0, 1.0, 2.0, 2.0]),
            {"coordinate_transformation_mode": "tf_crop_and_resize", "roi": torch.tensor([0.0, 1.0])},
            r"roi must be a 1-D tensor with 2 \* rank \(8\) entries",
        ),
    ],
    ids=[
        "short",
        "2d",
        "int",
        "nan",
        "zero",
        "negative",
        "inf",
        "huge-axis",
        "huge-total",
        "mode",
        "coord",
        "nearest-mode",
        "antialias-nearest",
        "no-roi",
        "short-roi",
    ],
)
def test_bad_input_is_rejected_with_a_clear_message(scales, kwargs, message) -> None:
    with pytest.raises(RuntimeError, match=message):
        ops.resize(X4, scales, **kwargs)


def test_bad_x_dtype_is_rejected() -> None:
    with pytest.raises(
        RuntimeError, match=r"X must be float32, float64, float16, bfloat16, uint8, int8 or int32, got Long"
    ):
        ops.resize(torch.ones(1, 1, 2, 2, dtype=torch.long), torch.ones(4))


def test_scalar_x_is_rejected() -> None:
    with pytest.raises(RuntimeError, match=r"X must have at least one dimension, got a 0-D tensor"):
        ops.resize(torch.tensor(1.0), torch.ones(0))


# --------------------------------------------------- opcheck, export, autograd

OPCHECK_SAMPLES = [
    ((torch.rand(1, 3, 5, 6), torch.tensor([1.0, 1.0, 2.0, 3.0])), {"mode": "cubic"}),
    ((torch.rand(2, 4, 7), torch.tensor([1.0, 0.5, 1.5])), {"mode": "linear", "antialias": True}),
    (
        (torch.rand(1, 1, 4, 4, dtype=torch.float64), torch.tensor([1.0, 1.0, 2.0, 2.0])),
        {
            "mode": "linear",
            "coordinate_transformation_mode": "tf_crop_and_resize",
            "roi": torch.tensor([0, 0, 0.1, 0.2, 1, 1, 0.9, 1.1]),
            "extrapolation_value": 3.0,
        },
    ),
    ((torch.rand(1, 2, 3, 3, requires_grad=True), torch.tensor([1.0, 1.0, 2.0, 2.0])), {"nearest_mode": "ceil"}),
]


@pytest.mark.parametrize(("args", "kwargs"), OPCHECK_SAMPLES, ids=["cubic", "aa-linear", "tf-crop", "grad-input"])
def test_opcheck(args, kwargs) -> None:
    results = torch.library.opcheck(torch.ops.onnxtool.resize.default, args, kwargs)  # raises on a failed check
    assert results and set(results.values()) == {"SUCCESS"}, results


def test_output_does_not_require_grad() -> None:
    y = ops.resize(torch.rand(1, 1, 2, 2, requires_grad=True), torch.tensor([1.0, 1.0, 2.0, 2.0]))
    assert not y.requires_grad


class _ResizeConv(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
        return self.conv(ops.resize(x, scales, mode="cubic", unscaled_axes=(0, 1)))


def test_torch_export_traces_the_op_with_runtime_scales() -> None:
    model = _ResizeConv().eval()
    x = torch.rand(1, 3, 8, 8)
    exported = torch.export.export(model, (x, torch.tensor([1.0, 1.0, 2.0, 2.0])))
    targets = {str(n.target) for n in exported.graph.nodes if n.op == "call_function"}
    assert "onnxtool.resize.default" in targets
    # The factor is a runtime input of the exported program, not a constant.
    for factor in (2.0, 3.0):
        scales = torch.tensor([1.0, 1.0, factor, factor])
        out = exported.module()(x, scales)
        assert out.shape == (1, 4, int(8 * factor), int(8 * factor))
        torch.testing.assert_close(out, model(x, scales), rtol=0, atol=0)


def test_unscaled_axes_is_checked_at_run_time() -> None:
    with pytest.raises(RuntimeError, match="axis 1 is declared unscaled"):
        ops.resize(torch.rand(1, 3, 2, 2), torch.tensor([1.0, 2.0, 1.0, 1.0]), unscaled_axes=(1,))


# ------------------------------------------------------------------- loader


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env={**os.environ, **env}, timeout=300
    )


def test_importing_the_op_face_builds_and_writes_nothing(tmp_path: Path) -> None:
    result = _python(
        "import exporters.ops, torch; assert not hasattr(torch.ops.onnxtool, 'resize')",
        ONNXTOOL_BUILD_DIR=str(tmp_path / "empty"),
    )
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "empty").exists()


def test_missing_build_without_compiler_says_what_to_run(tmp_path: Path) -> None:
    result = _python(
        "import exporters.ops as ops; ops.load()",
        ONNXTOOL_BUILD_DIR=str(tmp_path / "empty"),
        CXX=str(tmp_path / "no-such-compiler"),
    )
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("exporters.build.OpsBuildError:"), last
    assert "python -m exporters.build" in last
    assert "no-such-compiler: not found" in last  # the compiler's own reason, not the command line


def test_build_command_reuses_the_build() -> None:
    # `make setup` runs this; with the library built it must neither compile
    # nor run ninja: it checks the record and loads the .so (milliseconds; a
    # rebuild takes tens of seconds). The figure it prints covers the check
    # and the import of exporters.ops, not the interpreter or torch start-up.
    result = subprocess.run(
        [sys.executable, "-m", "exporters.ops", "build"], capture_output=True, text=True, cwd=REPO, timeout=600
    )
    assert result.returncode == 0, result.stderr
    match = re.fullmatch(r"onnxtool ops up to date: (\S+) \(([0-9.]+) s\)", result.stdout.strip())
    assert match, result.stdout
    assert Path(match.group(1)) == ops.library_path()
    assert float(match.group(2)) < 5.0
