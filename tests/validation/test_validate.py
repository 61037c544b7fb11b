"""validate: statistics, sweep planning, references, diagnosis, rendering, through the API.

Small Resize -> Conv models built in code (golden.resize_conv); the last test runs PaddleOCR's
detector. The `onnxtool validate` command (exit codes, JSON/JUnit, the real SRCNN against the
PyTorch C++-op reference): tests/cli/test_validate_command.py.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import pytest
from golden import resize_conv
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.errors import CheckFailedError, InvalidScalesError, OnnxToolError
from graphsurgeon_tools.validation import compare_arrays, junit_xml, render_report, validate
from graphsurgeon_tools.validation.ports import model_ports


def two_resizes(*, dynamic: bool) -> onnx.ModelProto:
    """x -> Resize(x2) -> a; x -> Resize(x4) -> b: a model whose nodes bake different factors."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])]
    inits = []
    names = []
    for index, factor in enumerate((2.0, 4.0)):
        name = f"scales_{index}"
        if dynamic:
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [4]))
        else:
            inits.append(numpy_helper.from_array(np.array([1, 1, factor, factor], np.float32), name))
        names.append(name)
    nodes = [
        helper.make_node("Resize", ["x", "", names[0]], ["a"], name="up2", mode="linear"),
        helper.make_node("Resize", ["x", "", names[1]], ["b"], name="up4", mode="nearest"),
    ]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("a", "b")]
    graph = helper.make_graph(nodes, "two", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# ------------------------------------------------------------------------------ statistics


def test_compare_arrays_figures() -> None:
    stats = compare_arrays(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 0.0]), atol=0.1, rtol=0.1)
    assert not stats.passed
    assert stats.max_abs_error == pytest.approx(3.0)
    assert stats.mean_abs_error == pytest.approx(3.5 / 3)
    assert stats.mismatch_share == pytest.approx(2 / 3)
    assert stats.max_rel_error == pytest.approx(0.2)  # over |b| > atol only: 0/1 and 0.5/2.5
    assert stats.passing_atol == pytest.approx(3.0)
    assert stats.psnr_db is None  # not image-like
    # The atol it reports would indeed have passed, and a hair less would not.
    assert compare_arrays(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 0.0]), atol=3.0, rtol=0.1).passed
    assert not compare_arrays(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 0.0]), atol=2.99, rtol=0.1).passed


def test_compare_arrays_psnr_nan_inf_and_shapes() -> None:
    ref = np.linspace(0, 1, 3 * 16, dtype=np.float32).reshape(1, 3, 4, 4)
    stats = compare_arrays(ref + np.float32(0.1), ref, atol=0.0, rtol=0.0)
    assert stats.psnr_db == pytest.approx(20.0, abs=1e-3)  # peak 1, mse 0.01
    assert compare_arrays(ref, ref, atol=0, rtol=0).psnr_db == math.inf
    both = np.array([np.nan, np.inf, 1.0])
    assert compare_arrays(both, both.copy(), atol=0, rtol=0).passed
    lonely_nan = compare_arrays(np.array([np.nan, 1.0]), np.array([0.0, 1.0]), atol=1, rtol=1)
    assert not lonely_nan.passed and lonely_nan.max_abs_error == math.inf
    mismatch = compare_arrays(np.zeros((1, 3, 4, 4)), np.zeros((1, 3, 4, 5)), atol=1, rtol=1)
    assert not mismatch.passed and mismatch.max_abs_error is None and "shape" in mismatch.note


@settings(max_examples=60, deadline=None)
@given(
    arrays=st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.float32, n, elements=st.floats(-1e3, 1e3, width=32)),
            hnp.arrays(np.float32, n, elements=st.floats(-1e3, 1e3, width=32)),
        )
    ),
    rtol=st.sampled_from([0.0, 1e-3, 0.1]),
)
def test_passing_atol_is_the_smallest_that_passes(arrays: tuple[np.ndarray, np.ndarray], rtol: float) -> None:
    """The law behind the "passing atol" column: it passes, and anything clearly below fails."""
    actual, expected = arrays
    stats = compare_arrays(actual, expected, atol=0.0, rtol=rtol)
    assert stats.passed == (stats.mismatch_share == 0.0) == (stats.passing_atol == 0.0)
    slack = 1e-9 * (1 + stats.passing_atol)
    assert compare_arrays(actual, expected, atol=stats.passing_atol + slack, rtol=rtol).passed
    if stats.passing_atol > 1e-6:
        assert not compare_arrays(actual, expected, atol=stats.passing_atol * 0.999, rtol=rtol).passed


# ------------------------------------------------------------------------------ ports


def test_ports_detect_scale_inputs_layouts_and_baked_factor() -> None:
    full = model_ports(resize_conv(scales="input"))
    assert [(s.name, s.layout) for s in full.scale_inputs] == [("scales", "scales")]
    assert [d.name for d in full.data_inputs] == ["x"]
    assert full.scale_inputs[0].feed(2.5, (1, 3, 8, 8)).tolist() == [1, 1, 2.5, 2.5]
    pair = model_ports(resize_conv(scales="pair"))
    assert [(s.name, s.layout) for s in pair.scale_inputs] == [("factor_hw", "pair")]
    assert pair.scale_inputs[0].feed(3, (1, 3, 8, 8)).tolist() == [3, 3]
    static = model_ports(resize_conv(scales="constant", factor=3.0))
    assert not static.is_dynamic and static.baked_factor == 3.0
    mixed = model_ports(two_resizes(dynamic=False))
    assert mixed.baked_factor is None and "different factors" in mixed.baked_note
    assert mixed.baked_scales == {"up2": (1, 1, 2, 2), "up4": (1, 1, 4, 4)}


# ------------------------------------------------------------------------------ sweeps


def test_right_model_matches_static_reference_exactly_at_its_factor() -> None:
    report = validate(resize_conv(scales="input"), resize_conv(scales="constant", factor=3.0), factors=[2, 3, 4])
    assert report.passed
    by_factor = {f.factor: f for f in report.factors}
    assert by_factor[3.0].status == "passed"
    assert by_factor[3.0].outputs[0].max_abs_error == 0.0  # same graph, original factor: bit-exact
    assert by_factor[3.0].scale_feeds == {"scales": [1.0, 1.0, 3.0, 3.0]}
    for skipped in (2.0, 4.0):
        assert by_factor[skipped].status == "skipped"
        assert "static (baked x3)" in by_factor[skipped].reason
    assert report.diagnosis is None
    assert report.raise_if_failed() is report


def test_default_factors_follow_the_static_side() -> None:
    report = validate(resize_conv(scales="input"), resize_conv(scales="constant", factor=2.0))
    assert [f.factor for f in report.factors] == [2.0]
    assert report.passed


def test_nothing_compared_is_a_failure() -> None:
    report = validate(resize_conv(scales="input"), resize_conv(scales="constant", factor=3.0), factors=[2])
    assert not report.passed
    assert "nothing was compared" in report.summary_line()
    with pytest.raises(CheckFailedError, match="nothing was compared"):
        report.raise_if_failed()


@pytest.mark.parametrize(
    ("wrong", "attribute", "expected"),
    [
        ({"mode": "linear"}, "mode", "cubic"),
        ({"ctm": "align_corners"}, "coordinate_transformation_mode", "half_pixel"),
        ({"ctm": "asymmetric"}, "coordinate_transformation_mode", "half_pixel"),
        ({"coeff": -0.5}, "cubic_coeff_a", -0.75),
    ],
)
def test_wrong_resize_setting_fails_and_is_named(wrong: dict, attribute: str, expected: object) -> None:
    report = validate(resize_conv(scales="input", **wrong), resize_conv(scales="input"), factors=[2, 3])
    assert not report.passed
    assert all(f.status == "failed" for f in report.factors)
    diagnosis = report.diagnosis
    assert diagnosis is not None and diagnosis.explained_by is not None
    assert diagnosis.explained_by["change"] == {attribute: expected}
    assert diagnosis.explained_by["max_abs_error_after"] <= 1e-4
    assert f"{attribute}={expected!r}" in diagnosis.summary


def test_nudged_weight_fails_and_points_at_the_weight() -> None:
    report = validate(resize_conv(scales="input", nudge=0.05), resize_conv(scales="constant", factor=3.0))
    assert not report.passed
    diagnosis = report.diagnosis
    assert diagnosis is not None
    assert diagnosis.explained_by is None  # no Resize setting explains a changed weight
    assert [w["name"] for w in diagnosis.weights] == ["conv.weight"]
    assert diagnosis.weights[0]["elements_differing"] == 1
    assert diagnosis.pattern["border_to_interior"] < 5  # spread over the whole image
    assert "conv.weight" in diagnosis.summary


def test_border_pattern_is_reported() -> None:
    # exclude_outside only changes the cubic weights next to the border.
    candidate = resize_conv(scales="input")
    for node in candidate.graph.node:
        if node.op_type == "Resize":
            node.attribute.append(helper.make_attribute("exclude_outside", 1))
    report = validate(candidate, resize_conv(scales="input"), factors=[3], input_size=48)
    assert not report.passed
    assert report.diagnosis.pattern["border_to_interior"] > 5
    assert report.diagnosis.explained_by["change"] == {"exclude_outside": 0}


def test_pair_input_and_onnx_reference_evaluator() -> None:
    report = validate(resize_conv(scales="pair"), "onnx-reference", factors=[2, 3], input_size=12)
    assert report.passed, report.summary_line()
    assert report.factors[0].scale_feeds == {"factor_hw": [2.0, 2.0]}
    assert report.reference["kind"] == "onnx-reference"
    assert report.factors[1].outputs[0].candidate_shape == (1, 3, 36, 36)


def plugin_model(signature: str) -> onnx.ModelProto:
    """DynamicTRTResize in its two signatures, as swap-plugin and MMDeploy write it."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])]
    if signature == "scales":
        inputs.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]))
    else:  # only the shape of the second input is read; MMDeploy pins its channel dim to 1
        inputs.append(helper.make_tensor_value_info("size_tensor", TensorProto.FLOAT, ["n", 1, "H", "W"]))
    node = helper.make_node(
        "DynamicTRTResize",
        [i.name for i in inputs],
        ["y"],
        domain="trt.plugins",
        mode="cubic",
        coordinate_transformation_mode="half_pixel",
        cubic_coeff_a=-0.75,
        exclude_outside=0,
        nearest_mode="floor",
        align_corners=0,
        plugin_version="1",
        plugin_namespace="",
    )
    graph = helper.make_graph([node], "plugin", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("trt.plugins", 1)])


@pytest.mark.parametrize("signature", ["scales", "size-tensor"])
def test_plugin_node_both_signatures_vs_onnx_reference(signature: str) -> None:
    model = plugin_model(signature)
    (scale,) = model_ports(model).scale_inputs
    assert scale.layout == signature
    if signature == "size-tensor":
        assert scale.feed(2.0, (1, 3, 8, 5)).shape == (1, 1, 16, 10)
    report = validate(model, "onnx-reference", factors=[2, 3], input_size=8)
    assert report.passed, report.summary_line()
    assert [f.outputs[0].candidate_shape for f in report.factors] == [(1, 3, 16, 16), (1, 3, 24, 24)]
    # And against the same resize written as a stock Resize node (a different kernel entirely).
    resize = helper.make_node(
        "Resize",
        ["x", "", "scales"],
        ["y"],
        mode="cubic",
        coordinate_transformation_mode="half_pixel",
        cubic_coeff_a=-0.75,
    )
    stock = helper.make_model(
        helper.make_graph(
            [resize],
            "stock",
            [
                helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"]),
                helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]),
            ],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        ),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    assert validate(model, stock, factors=[2, 3]).passed


def test_reference_with_different_factors_per_node_is_compared_at_its_baked_scales() -> None:
    report = validate(two_resizes(dynamic=True), two_resizes(dynamic=False), factors=[3])
    assert report.passed
    assert [f.factor for f in report.factors] == [None]
    assert report.factors[0].scale_feeds == {"scales_0": [1, 1, 2, 2], "scales_1": [1, 1, 4, 4]}
    assert any("factors= ignored" in note for note in report.notes)


def test_python_reference_module_file(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    module = tmp_path / "my_reference.py"
    module.write_text(
        "import torch\n"
        "from torch import nn\n"
        "import torch.nn.functional as F\n"
        "class Up(nn.Module):\n"
        "    def forward(self, x, scales):\n"
        "        f = [float(s) for s in scales[2:]]\n"
        "        return F.interpolate(x, scale_factor=f, mode='bicubic', align_corners=False)\n"
        "def make():\n"
        "    return Up()\n"
    )
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"]),
        helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]),
    ]
    node = helper.make_node(
        "Resize",
        ["x", "", "scales"],
        ["y"],
        mode="cubic",
        coordinate_transformation_mode="half_pixel",
        cubic_coeff_a=-0.75,
    )
    graph = helper.make_graph([node], "up", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    report = validate(model, f"python-scales:{module}:make", factors=[2, 3])
    assert report.passed, report.summary_line()
    assert report.reference["kind"] == "torch"
    # PyTorch's bicubic is not ONNX's align_corners: that must fail, and be named.
    bad = onnx.ModelProto()
    bad.CopyFrom(model)
    next(a for a in bad.graph.node[0].attribute if a.name == "coordinate_transformation_mode").s = b"align_corners"
    failed = validate(bad, f"python-scales:{module}:make", factors=[2])
    assert not failed.passed
    assert failed.diagnosis.explained_by["change"]["coordinate_transformation_mode"] in (
        "half_pixel",
        "pytorch_half_pixel",
    )


def test_progress_callback_reports_every_step() -> None:
    steps = []
    validate(
        resize_conv(scales="input"),
        resize_conv(scales="input"),
        factors=[2, 3],
        progress=lambda step, done, total: steps.append((step, done, total)),
    )
    assert steps[0] == ("comparing at x2", 0, 3)
    assert steps[-1] == ("done", 3, 3)


def test_api_errors() -> None:
    model = resize_conv(scales="input")
    with pytest.raises(InvalidScalesError):
        validate(model, "onnx-reference", factors=[0])
    with pytest.raises(OnnxToolError, match="unknown reference"):
        validate(model, "torch:nonexistent")
    with pytest.raises(OnnxToolError, match="must look like python:MODULE:CALLABLE"):
        validate(model, "python:nocallable")
    with pytest.raises(OnnxToolError, match="no such input"):
        validate(model, "onnx-reference", inputs={"nope": np.zeros(3)})


# ------------------------------------------------------------------------------ rendering


def test_table_and_junit_render_the_report() -> None:
    report = validate(
        resize_conv(scales="input", ctm="asymmetric"), resize_conv(scales="input"), factors=[2, 5]
    ).to_dict()
    text = render_report(report)
    assert "x2" in text and "FAIL" in text and "diagnosis" in text and "FAILED" in text
    root = ET.fromstring(junit_xml(report))
    suite = root.find("testsuite")
    # one testcase per factor and compared tensor: the output and the Resize site's output
    assert suite.get("tests") == "4" and suite.get("failures") == "4"
    assert [c.get("name") for c in suite.findall("testcase")][:2] == ["x2.y", "x2.up"]
    assert "coordinate_transformation_mode" in suite.find("testcase/failure").text


# ------------------------------------------------------------------------------ a real model


def test_real_model_with_different_factors_per_node(ppocr_det_path: Path) -> None:
    """PaddleOCR's PP-OCRv4 detector (six Resize nodes: x2 and x4 and x8): after the rewrite,
    each scale input is fed its own node's original scales, and the result is bit-exact."""
    from graphsurgeon_tools import make_dynamic_scale

    rewritten = make_dynamic_scale(ppocr_det_path).model
    report = validate(rewritten, ppocr_det_path, atol=0, rtol=0, input_size=64)
    assert report.passed, report.summary_line()
    (point,) = report.factors
    assert point.factor is None and point.outputs[0].max_abs_error == 0
    fed = {tuple(v) for v in point.scale_feeds.values()}
    assert fed == {(1.0, 1.0, 2.0, 2.0), (1.0, 1.0, 4.0, 4.0), (1.0, 1.0, 8.0, 8.0)}
    # One factor for all six inputs breaks the FPN's shapes: skipped as not free, naming the node.
    uniform = validate(rewritten, "onnx-reference", factors=[2])
    assert not uniform.passed and uniform.factors[0].status == "skipped"
    assert uniform.factors[0].reason.startswith("not free at x2: ") and "Concat" in uniform.factors[0].reason
