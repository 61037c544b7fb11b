"""The compiled ONNX Runtime custom-op library (graphsurgeon_tools.runtime.ort_library, csrc/ort/).

Every numeric check runs the library inside a plain ``onnxruntime.InferenceSession`` and
compares with (a) the original model (standard Resize) in ONNX Runtime, at the acceptance
tolerance, and (b) the onnxruntime-extensions path (``make_session`` with the library
switched off), which the library must reproduce bit for bit: both run the same kernel
source with the same scale arithmetic. Skipped as a whole, with the reason, where the
library cannot be built here (no headers, no compiler).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import engines
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx_spec_cases import SPEC_CASES, spec_case
from user_ops import library, twice_as_mul, user_library, user_resize_model  # noqa: F401 - fixtures

from graphsurgeon_tools.runtime import ort_library

RTOL, ATOL = 1e-4, 1e-5
OPSET = 19
ROOT = Path(__file__).resolve().parents[2]


def _lib_session(model: onnx.ModelProto, library: Path, threads: int = 1) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.register_custom_ops_library(str(library))
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _extensions_session(model: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch) -> ort.InferenceSession:
    """make_session on the onnxruntime-extensions fallback (the library switched off)."""
    from graphsurgeon_tools.runtime import make_session

    with monkeypatch.context() as patch:
        patch.setattr(ort_library, "library_path", lambda **_: None)
        return make_session(model)


def _run(session: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    names = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in feeds.items() if k in names})


def _plugin_model(second_shape, *, x_type=TensorProto.FLOAT, second_type=TensorProto.FLOAT, name="plugin", **attrs):
    node = helper.make_node(
        "DynamicTRTResize",
        ["X", "S"],
        ["Y"],
        name=name,
        domain="trt.plugins",
        plugin_version="1",
        plugin_namespace="",
        **attrs,
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("X", x_type, ["N", "C", "H", "W"]),
            helper.make_tensor_value_info("S", second_type, second_shape),
        ],
        [helper.make_tensor_value_info("Y", x_type, None)],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("trt.plugins", 1)]
    )


# --------------------------------------------------------------------------- the op against the Python kernel


ATTRS = [
    dict(mode="nearest"),
    dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    dict(mode="nearest", coordinate_transformation_mode="align_corners", nearest_mode="ceil"),
    dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"),
    dict(mode="linear"),
    dict(mode="linear", coordinate_transformation_mode="align_corners"),
    dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
    dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric"),
    dict(mode="cubic"),
    dict(mode="cubic", coordinate_transformation_mode="align_corners", align_corners=1),
    dict(mode="cubic", coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.5, exclude_outside=1),
    dict(mode="cubic", coordinate_transformation_mode="asymmetric"),
]
SCALES = [
    (1, 1, 2, 2),
    (1, 1, 3, 3),
    (1, 1, 0.5, 0.5),
    (1, 1, 1.7, 2.3),
    (1, 1, 0.6, 1.5),
    (2, 1, 1, 1.5),
    (1, 1, 0.7, 0.7),
]


@pytest.mark.parametrize("attrs", ATTRS, ids=lambda a: "-".join(str(v) for v in a.values()))
def test_scales_signature_is_the_python_kernel_bit_for_bit_and_ort_within_tolerance(library, attrs):
    from graphsurgeon_tools.runtime import resize_kernel

    session = _lib_session(_plugin_model([4], **attrs), library)
    rng = np.random.default_rng(0)
    for shape in [(2, 3, 6, 8), (1, 1, 10, 10), (1, 2, 2, 4)]:
        x = rng.random(shape, dtype=np.float32)
        for scales in SCALES:
            s = np.array(scales, np.float32)
            got = session.run(None, {"X": x, "S": s})[0]
            want = resize_kernel(x, s, **{k: v for k, v in attrs.items() if k != "align_corners"})
            assert got.shape == want.shape, (shape, scales)
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} {scales}")


@pytest.mark.parametrize("attrs", ATTRS[4:10], ids=lambda a: "-".join(str(v) for v in a.values()))
@pytest.mark.parametrize("out_hw", [(18, 24), (7, 5), (13, 29)])
def test_size_tensor_signature_resizes_to_its_last_two_dims_like_ort(library, attrs, out_hw):
    rng = np.random.default_rng(1)
    x = rng.random((1, 3, 6, 8), dtype=np.float32)
    size_tensor = np.full((1, 1, *out_hw), 7.0, dtype=np.float32)  # values never read
    session = _lib_session(_plugin_model([1, 1, "OH", "OW"], **attrs), library)
    got = session.run(None, {"X": x, "S": size_tensor})[0]
    resize_attrs = {k: v for k, v in attrs.items() if k != "align_corners"}
    node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], **resize_attrs)
    graph = helper.make_graph(
        [node],
        "r",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("sizes", TensorProto.INT64, [4]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    want = engines.ort_run(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]),
        {"X": x, "sizes": np.array([1, 3, *out_hw], np.int64)},
    )[0]
    assert got.shape == (1, 3, *out_hw)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_v3_sizes_form_takes_int64_sizes_of_every_axis_or_of_h_w(library):
    from graphsurgeon_tools.runtime import resize_kernel

    x = np.random.default_rng(2).random((1, 2, 5, 7), dtype=np.float32)
    model = _plugin_model([4], second_type=TensorProto.INT64, mode="linear", tensorrt_plugin_shape_input_indices=[1])
    got = _lib_session(model, library).run(None, {"X": x, "S": np.array([1, 2, 11, 9], np.int64)})[0]
    want = resize_kernel(x, np.zeros((1, 1, 11, 9), np.float32), mode="linear")  # the size-tensor path: same sizes
    np.testing.assert_array_equal(got, want)
    model2 = _plugin_model([2], second_type=TensorProto.INT64, mode="linear")
    got2 = _lib_session(model2, library).run(None, {"X": x, "S": np.array([11, 9], np.int64)})[0]
    np.testing.assert_array_equal(got2, want)
    model3 = _plugin_model([2], second_type=TensorProto.INT32, mode="linear")
    got3 = _lib_session(model3, library).run(None, {"X": x, "S": np.array([11, 9], np.int32)})[0]
    np.testing.assert_array_equal(got3, want)
    with pytest.raises(
        ort.capi.onnxruntime_pybind11_state.InvalidArgument,
        match=r"node 'plugin': sizes must have 2 or rank\(X\) = 4 entries, got 3",
    ):
        _lib_session(_plugin_model([None], second_type=TensorProto.INT64), library).run(
            None, {"X": x, "S": np.array([2, 11, 9], np.int64)}
        )


@pytest.mark.parametrize(
    ("x_type", "np_type", "s_type"),
    [
        (TensorProto.DOUBLE, np.float64, TensorProto.FLOAT),
        (TensorProto.DOUBLE, np.float64, TensorProto.DOUBLE),
    ],
)
def test_float64_input_is_the_extensions_path_bit_for_bit(library, x_type, np_type, s_type, monkeypatch):
    x = np.random.default_rng(3).random((1, 2, 5, 6)).astype(np_type)
    s = np.array([1, 1, 1.5, 2], dtype=helper.tensor_dtype_to_np_dtype(s_type))
    model = _plugin_model([4], x_type=x_type, second_type=s_type, mode="cubic")
    got = _lib_session(model, library).run(None, {"X": x, "S": s})[0]
    want = _extensions_session(model, monkeypatch).run(None, {"X": x, "S": s})[0]
    assert got.dtype == np_type and got.shape == want.shape == (1, 2, 7, 12)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("s_type", [TensorProto.FLOAT, TensorProto.FLOAT16])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_float16_is_computed_in_float32_and_rounded_once(library, s_type, mode):
    # (onnxruntime-extensions' Python ops cannot take float16 at all: they abort the process)
    x = (np.random.default_rng(3).random((1, 2, 5, 6)) * 100).astype(np.float16)
    s = np.array([1, 1, 1.5, 2.5], dtype=helper.tensor_dtype_to_np_dtype(s_type))
    got = _lib_session(_plugin_model([4], x_type=TensorProto.FLOAT16, second_type=s_type, mode=mode), library).run(
        None, {"X": x, "S": s}
    )[0]
    if mode == "cubic":  # the library's own float32 arithmetic, rounded once
        in_float = _lib_session(_plugin_model([4], mode=mode), library).run(
            None, {"X": x.astype(np.float32), "S": s.astype(np.float32)}
        )[0]
    else:  # linear and nearest: ONNX Runtime's own float32 expression, rounded once (what ORT's float16 does)
        in_float = _stock_resize(x.astype(np.float32), s.astype(np.float32), mode)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, in_float.astype(np.float16))


def _stock_resize(x: np.ndarray, scales: np.ndarray, mode: str) -> np.ndarray:
    node = helper.make_node("Resize", ["X", "", "S"], ["Y"], mode=mode)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape)),
            helper.make_tensor_value_info("S", TensorProto.FLOAT, [x.ndim]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": x, "S": scales}
    )[0]


def test_float16_conversion_rounds_like_numpy(library):
    # every finite float16 through an identity resize, and halfway/overflow/subnormal float32 values
    all_halves = np.arange(65536, dtype=np.uint16).view(np.float16)
    x = all_halves[np.isfinite(all_halves)].reshape(1, 1, 1, -1)
    got = _lib_session(_plugin_model([4], x_type=TensorProto.FLOAT16, mode="nearest"), library).run(
        None, {"X": x, "S": np.ones(4, np.float32)}
    )[0]
    np.testing.assert_array_equal(got.view(np.uint16), x.view(np.uint16))
    up = _lib_session(_plugin_model([4], x_type=TensorProto.FLOAT16, mode="linear"), library).run(
        None, {"X": x[..., :4096], "S": np.array([1, 1, 1, 1.5], np.float32)}
    )[0]
    in_float = _stock_resize(x[..., :4096].astype(np.float32), np.array([1, 1, 1, 1.5], np.float32), "linear")
    np.testing.assert_array_equal(up.view(np.uint16), in_float.astype(np.float16).view(np.uint16))


def test_threads_do_not_change_a_single_bit(library):
    x = np.random.default_rng(4).random((2, 8, 37, 53), dtype=np.float32)
    for attrs in (dict(mode="nearest"), dict(mode="linear"), dict(mode="cubic")):
        for scales in ((1, 1, 2.5, 0.75), (1, 1, 3, 3), (1, 2, 1.5, 1)):
            s = np.array(scales, np.float32)
            one = _lib_session(_plugin_model([4], **attrs), library, threads=1).run(None, {"X": x, "S": s})[0]
            two = _lib_session(_plugin_model([4], **attrs), library, threads=2).run(None, {"X": x, "S": s})[0]
            np.testing.assert_array_equal(one, two)


def test_output_shape_is_inferred_where_the_inputs_tell_it(library):
    sized = _lib_session(_plugin_model([1, 1, 12, 16], mode="linear"), library)
    assert sized.get_outputs()[0].shape == ["N", "C", 12, 16]
    scaled = _lib_session(_plugin_model([4], mode="linear"), library)
    shape = scaled.get_outputs()[0].shape
    assert len(shape) == 4 and all(isinstance(d, str) for d in shape)  # rank known, sizes depend on values


# --------------------------------------------------------------------------- errors name the node


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (dict(mode="bilinear"), "node 'bad': mode must be one of 'nearest', 'linear', 'cubic', got 'bilinear'"),
        (
            dict(coordinate_transformation_mode="tf_crop_and_resize"),
            "node 'bad': coordinate_transformation_mode 'tf_crop_and_resize' needs roi",
        ),
        (dict(coordinate_transformation_mode="half_pixel", align_corners=1), "node 'bad': align_corners=1 contradicts"),
        (dict(mode=3), "node 'bad': attribute mode must be a string"),
        (dict(antialias=1, mode="linear"), "node 'bad': antialias=1 is not supported"),
    ],
)
def test_bad_attributes_fail_the_session_naming_the_node(library, attrs, message):
    with pytest.raises(
        (
            ort.capi.onnxruntime_pybind11_state.Fail,
            ort.capi.onnxruntime_pybind11_state.RuntimeException,
            ort.capi.onnxruntime_pybind11_state.NotImplemented,
            ort.capi.onnxruntime_pybind11_state.InvalidArgument,
        ),
        match=message,
    ):
        _lib_session(_plugin_model([4], name="bad", **attrs), library)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (np.array([1, 1, 2], np.float32), r"node 'p': scales must have one entry per input dimension \(4\), got 3"),
        (np.array([1, 1, 0, 2], np.float32), r"node 'p': scales\[2\] must be a finite number > 0, got 0"),
        (np.array([1, 1, np.nan, 2], np.float32), r"node 'p': scales\[2\] must be a finite number > 0, got nan"),
        (np.array([1, 1, 0.1, 2], np.float32), r"node 'p': scales \[1, 1, 0.1, 2\] give an empty output"),
        (np.array([1, 1, 1e10, 1], np.float32), r"node 'p': scales\[2\] .* over the limit of 2\^31"),
    ],
)
def test_bad_scales_fail_the_run_naming_the_node(library, second, message):
    session = _lib_session(_plugin_model([None], name="p", mode="linear"), library)
    x = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument, match=message):
        session.run(None, {"X": x, "S": second})


# --------------------------------------------------------------------------- ONNX spec cases and SRCNN, end to end


def _new_input_feeds(result, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    feeds = dict(feeds)
    for item in result.new_inputs:
        feeds[item["name"]] = np.asarray(item["value"], dtype=np.float32)
    return feeds


def _sized_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray | None:
    """Scales-driven case as a size tensor where in*scale is fractional: ORT's Resize at floor(in*scale)."""
    node = model.graph.node[0]
    if node.op_type != "Resize" or len(node.input) < 3 or not node.input[2]:
        return None
    x, scales = feeds[node.input[0]], feeds[node.input[2]].astype(np.float32)
    axes = next((list(a.ints) for a in node.attribute if a.name == "axes"), None)
    if axes is not None:  # scales of the listed axes only: the others keep their size
        full = np.ones(x.ndim, np.float32)
        full[[a % x.ndim for a in axes]] = scales
        scales = full
    products = np.float32(x.shape) * scales
    if np.all(products == np.floor(products)):
        return None
    sized = onnx.ModelProto()
    sized.CopyFrom(model)
    del sized.graph.node[0].input[:]
    sized.graph.node[0].input.extend([node.input[0], "", "", "sizes"])
    kept = [a for a in sized.graph.node[0].attribute if a.name != "axes"]
    del sized.graph.node[0].attribute[:]
    sized.graph.node[0].attribute.extend(kept)
    del sized.graph.input[1:]
    sized.graph.input.append(helper.make_tensor_value_info("sizes", TensorProto.INT64, [len(products)]))
    return engines.ort_run(sized, {node.input[0]: x, "sizes": np.floor(products).astype(np.int64)})[0]


def _expected_refusal(case: str, signature: str):
    """The refusal code swap-plugin gives an ONNX spec case the plugin cannot express (None: it swaps)."""
    if "antialias" in case:
        return "antialias"
    if "not_larger" in case or "not_smaller" in case:
        return "keep-aspect-ratio"
    if "tf_crop_and_resize" in case:
        return "tf-crop-and-resize"
    if "_sizes_" in case and signature == "scales":
        return "sizes-driven"
    return None


@pytest.mark.parametrize("signature", ["scales", "size-tensor"])
@pytest.mark.parametrize(("op", "method"), SPEC_CASES, ids=[f"{op}.{m}" for op, m in SPEC_CASES])
def test_onnx_spec_cases_through_the_library(library, op, method, signature, monkeypatch):
    from graphsurgeon_tools.errors import RefusedRequestError
    from graphsurgeon_tools.passes.swap_plugin import swap_plugin

    model, feeds, _ = spec_case(op, method)
    expected = _expected_refusal(f"{op}.{method}", signature)
    try:
        result = swap_plugin(model, signature=signature)
        swapped, skipped = bool(result.swapped), result.skipped
    except RefusedRequestError as refused:  # the signature itself refuses every site: exit 3, not a success
        swapped, skipped = False, refused.skipped
    if expected is not None:  # a case the plugin cannot express: the refusal is the result under test
        assert not swapped and {s.code for s in skipped} == {expected}, [s.to_dict() for s in skipped]
        return
    assert swapped, [s.to_dict() for s in skipped]
    feeds = _new_input_feeds(result, feeds)
    got = _run(_lib_session(result.model, library), feeds)[0]
    bridge = _run(_extensions_session(result.model, monkeypatch), feeds)[0]
    np.testing.assert_array_equal(got, bridge)
    reference = engines.ort_run(model, feeds)[0]
    if signature == "size-tensor":
        sized = _sized_reference(model, feeds)
        reference = reference if sized is None else sized
    assert got.shape == reference.shape
    np.testing.assert_allclose(got, reference, rtol=RTOL, atol=ATOL)


def test_spec_cases_through_the_library_are_not_mostly_skips():
    from graphsurgeon_tools.errors import RefusedRequestError
    from graphsurgeon_tools.passes.swap_plugin import swap_plugin

    def swaps(model, signature: str) -> bool:
        try:
            return bool(swap_plugin(model, signature=signature).swapped)
        except RefusedRequestError:  # the signature refuses every site of this case
            return False

    swapped = {sig: sum(swaps(spec_case(op, m)[0], sig) for op, m in SPEC_CASES) for sig in ("scales", "size-tensor")}
    assert swapped["scales"] >= 15 and swapped["size-tensor"] >= 20, swapped


@pytest.mark.slow
@pytest.mark.parametrize("signature", ["scales", "size-tensor"])
@pytest.mark.parametrize("export", ["torchscript-11", "torchscript-13", "torchscript-17", "dynamo"])
def test_srcnn_family_through_the_library(library, srcnn_exports, export, signature, monkeypatch):
    from graphsurgeon_tools.passes.swap_plugin import swap_plugin

    model = onnx.load(srcnn_exports[export])
    # odd sizes where the export left H, W dynamic; the export's own size where it did not
    dims = [d.dim_value or None for d in model.graph.input[0].type.tensor_type.shape.dim]
    n, h, w = dims[0] or 1, dims[2] or 5, dims[3] or 7
    x = np.random.default_rng(0).random((n, 3, h, w), dtype=np.float32)
    feeds = {model.graph.input[0].name: x}
    original = engines.ort_run(model, feeds)[0]
    result = swap_plugin(model, signature=signature)
    assert result.swapped
    feeds = _new_input_feeds(result, feeds)
    for threads in (1, 2):
        got = _run(_lib_session(result.model, library, threads), feeds)[0]
        assert got.shape == original.shape == (n, 3, 3 * h, 3 * w)
        np.testing.assert_allclose(got, original, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(got, _run(_extensions_session(result.model, monkeypatch), feeds)[0])


# --------------------------------------------------------------------------- the build itself


def test_library_exports_only_its_entry_point_and_needs_no_torch(library):
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    symbols = subprocess.run(
        [nm, "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True
    ).stdout
    assert [line.split()[-1] for line in symbols.splitlines() if line.strip()] == ["RegisterCustomOps"]
    needed = subprocess.run(["ldd", str(library)], capture_output=True, text=True).stdout
    assert "torch" not in needed and "onnxruntime" not in needed


def test_rebuild_is_a_cache_hit(library):
    before = library.stat().st_mtime_ns
    assert ort_library.build(fetch=False) == library
    assert library.stat().st_mtime_ns == before


def test_include_dir_from_the_environment_must_hold_the_header(tmp_path, monkeypatch):
    monkeypatch.setenv("ONNXRUNTIME_INCLUDE_DIR", str(tmp_path))
    assert ort_library.build(fetch=False) is None
    assert "holds no onnxruntime_c_api.h" in ort_library.unavailable_reason()


# --------------------------------------------------------------------------- users' own libraries


def _user_model() -> onnx.ModelProto:
    twice = helper.make_node("Twice", ["X"], ["T"], domain="user.ops", name="twice")
    resize = helper.make_node("DynamicTRTResize", ["T", "S"], ["Y"], domain="trt.plugins", name="up", mode="linear")
    graph = helper.make_graph(
        [twice, resize],
        "g",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 3, 3]),
            helper.make_tensor_value_info("S", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(
        graph,
        opset_imports=[
            helper.make_opsetid("", OPSET),
            helper.make_opsetid("user.ops", 1),
            helper.make_opsetid("trt.plugins", 1),
        ],
    )


def test_a_user_library_runs_next_to_the_plugin_library(library, user_library):
    options = ort.SessionOptions()
    options.register_custom_ops_library(str(user_library))
    options.register_custom_ops_library(str(library))
    session = ort.InferenceSession(_user_model().SerializeToString(), options, providers=["CPUExecutionProvider"])
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    y = session.run(None, {"X": x, "S": np.array([1, 1, 2, 2], np.float32)})[0]
    want = _lib_session(_plugin_model([4], mode="linear"), library).run(
        None, {"X": 2 * x, "S": np.array([1, 1, 2, 2], np.float32)}
    )[0]
    np.testing.assert_array_equal(y, want)


# --------------------------------------------------------------------------- the C++ example


@pytest.mark.slow
def test_cxx_example_runs_a_plugin_model_identically_to_python(library, tmp_path):
    from graphsurgeon_tools.passes.swap_plugin import swap_plugin

    if shutil.which("g++") is None:
        pytest.skip("no g++")
    conv = helper.make_node("Conv", ["input", "w"], ["c"], pads=[1, 1, 1, 1])
    resize = helper.make_node("Resize", ["c", "", "scales"], ["output"], mode="cubic")
    graph = helper.make_graph(
        [conv, resize],
        "g",
        [
            helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, "H", "W"]),
            helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, "OH", "OW"])],
        initializer=[
            onnx.numpy_helper.from_array(np.random.default_rng(5).random((3, 3, 3, 3), dtype=np.float32), "w")
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    result = swap_plugin(model)
    assert result.swapped
    onnx.save(result.model, tmp_path / "plugin.onnx")
    script = ROOT / "examples" / "08_ort_cxx_runner" / "run_cxx.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for threads in ("1", "2"):
        done = subprocess.run(
            [sys.executable, str(script), "plugin.onnx", "--threads", threads],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "output output float32 1x3x48x48" in done.stdout
        assert "identical" in done.stdout, done.stdout


# --------------------------------------------------------------------------- make_session on the library


def test_make_session_runs_trt_plugins_nodes_in_the_library_unchanged(library, tmp_path):
    from graphsurgeon_tools.runtime import make_session

    model = _plugin_model([4], mode="cubic")
    onnx.save(model, tmp_path / "plugin.onnx")
    x = np.random.default_rng(6).random((1, 2, 5, 6), dtype=np.float32)
    s = np.array([1, 1, 2.5, 1.5], np.float32)
    want = _lib_session(model, library).run(None, {"X": x, "S": s})[0]
    for source in (model, tmp_path / "plugin.onnx", str(tmp_path / "plugin.onnx")):
        session = make_session(source)
        assert type(session) is ort.InferenceSession  # not the extensions bridge's wrapper
        np.testing.assert_array_equal(session.run(None, {"X": x, "S": s})[0], want)


@pytest.mark.parametrize("path", ["library", "extensions"])
def test_one_session_options_serves_any_number_of_make_session_calls(library, user_library, path, monkeypatch):
    from graphsurgeon_tools.runtime import make_session

    if path == "extensions":
        monkeypatch.setattr(ort_library, "library_path", lambda **_: None)
    options = ort.SessionOptions()
    x = np.random.default_rng(7).random((1, 1, 3, 3), dtype=np.float32)
    s = np.array([1, 1, 2, 2], np.float32)
    first = make_session(_plugin_model([4], mode="linear"), sess_options=options).run(None, {"X": x, "S": s})[0]
    for _ in range(3):  # the second call used to fail: "Conflicting with a registered kernel"
        again = make_session(_plugin_model([4], mode="linear"), sess_options=options, custom_op_libs=[user_library])
        np.testing.assert_array_equal(again.run(None, {"X": x, "S": s})[0], first)
    both = make_session(_user_model(), sess_options=options, custom_op_libs=[user_library])
    np.testing.assert_array_equal(both.run(None, {"X": x / 2, "S": s})[0], first)


def test_custom_op_libs_runs_a_users_library_with_make_session(library, user_library):
    from graphsurgeon_tools.runtime import make_session

    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    s = np.array([1, 1, 2, 2], np.float32)
    got = make_session(_user_model(), custom_op_libs=[user_library]).run(None, {"X": x, "S": s})[0]
    want = _lib_session(_plugin_model([4], mode="linear"), library).run(None, {"X": 2 * x, "S": s})[0]
    np.testing.assert_array_equal(got, want)
    got_one = make_session(_user_model(), custom_op_libs=str(user_library)).run(None, {"X": x, "S": s})[0]
    np.testing.assert_array_equal(got_one, want)


def test_custom_op_libs_that_cannot_load_are_usage_errors(tmp_path):
    from graphsurgeon_tools.errors import UsageError
    from graphsurgeon_tools.runtime import make_session

    with pytest.raises(UsageError, match=r"custom_op_libs=\['.*nope.so'\]: no such file"):
        make_session(_plugin_model([4]), custom_op_libs=[tmp_path / "nope.so"])
    junk = tmp_path / "junk.so"
    junk.write_text("not a library")
    with pytest.raises(UsageError, match=r"custom_op_libs=\['.*junk.so'\]: ONNX Runtime cannot load it"):
        make_session(_plugin_model([4]), custom_op_libs=[junk])


def test_other_domains_and_the_forced_fallback_take_the_extensions_path(library, monkeypatch):
    from graphsurgeon_tools.runtime import make_session

    x = np.random.default_rng(8).random((1, 1, 4, 5), dtype=np.float32)
    s = np.array([1, 1, 1.5, 2], np.float32)
    want = _lib_session(_plugin_model([4], mode="linear"), library).run(None, {"X": x, "S": s})[0]
    other = _plugin_model([4], mode="linear")
    other.graph.node[0].domain = "my.plugins"
    other.opset_import[1].domain = "my.plugins"
    session = make_session(other)
    assert type(session) is not ort.InferenceSession  # the bridge's wrapper that re-raises kernel errors
    np.testing.assert_array_equal(session.run(None, {"X": x, "S": s})[0], want)
    monkeypatch.setenv("ONNXTOOL_RUNTIME_FALLBACK", "1")
    forced = make_session(_plugin_model([4], mode="linear"))
    assert type(forced) is not ort.InferenceSession


def test_v3_sizes_form_runs_through_make_session(library):
    from graphsurgeon_tools.runtime import make_session

    x = np.random.default_rng(9).random((1, 2, 4, 6), dtype=np.float32)
    model = _plugin_model([4], second_type=TensorProto.INT64, mode="nearest", tensorrt_plugin_shape_input_indices=[1])
    got = make_session(model).run(None, {"X": x, "S": np.array([1, 2, 8, 12], np.int64)})[0]
    np.testing.assert_array_equal(got, np.repeat(np.repeat(x, 2, axis=2), 2, axis=3))


# --------------------------------------------------------------------------- custom_op_libs through validate, passes, CLI


def test_validate_registers_custom_op_libs_on_every_session(library, user_library):
    from graphsurgeon_tools.validation import validate

    candidate = user_resize_model(plugin=True)
    reference = twice_as_mul(user_resize_model(plugin=False))
    report = validate(candidate, reference, factors=[2, 3], custom_op_libs=[user_library])
    assert report.passed, report.to_dict()
    with pytest.raises(Exception, match="user.ops|Twice"):
        validate(candidate, reference, factors=[2])  # without the library ORT cannot load the candidate


def test_the_built_in_check_runs_models_with_a_users_op(library, user_library):
    from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale

    model = user_resize_model(plugin=False, constant_scales=True)
    without = make_dynamic_scale(model)
    assert without.check is not None and without.check.passed is None  # skipped: ORT lacks user.ops
    checked = make_dynamic_scale(model, custom_op_libs=[user_library])
    assert checked.check is not None and checked.check.passed is True, checked.check.to_dict()


def test_float16_on_the_extensions_path_is_refused_naming_the_node_not_a_crash(monkeypatch):
    from graphsurgeon_tools.errors import UnsupportedModelError
    from graphsurgeon_tools.runtime import make_session

    monkeypatch.setattr(ort_library, "library_path", lambda **_: None)
    model = _plugin_model([4], x_type=TensorProto.FLOAT16, name="half")
    with pytest.raises(
        UnsupportedModelError, match=r"node 'half': no DynamicTRTResize kernel for input types \(float16, float\)"
    ):
        make_session(model)


def test_the_extensions_path_leaves_the_environment_as_it_was():
    # onnxruntime_extensions sets PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python on import; every
    # subprocess started later (CLI tests, the C++ example) would inherit the slow parser.
    # A fresh interpreter: the import's side effect happens only once per process.
    script = (
        "import os; from graphsurgeon_tools.runtime import session; "
        "session._import_extensions('get_library_path'); "
        "print(os.environ.get('PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "None", done.stdout + done.stderr


def test_without_a_compiler_a_built_library_is_still_used(library, monkeypatch):
    monkeypatch.setattr(ort_library, "_compiler", lambda: None)
    assert ort_library.build(fetch=False) == library
