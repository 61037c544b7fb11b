"""Where the built-in check proves exactness, and what it reports besides.

The check runs both models at ORT_ENABLE_EXTENDED (exact for a rewrite that only turns constant
scales into inputs), one session each; asked (optimized_figure=True) it reports ORT_ENABLE_ALL's
difference as a figure: the layout pass builds other kernels for constant scales. Dims written as dim_value -1 are symbolic.
"""

from __future__ import annotations

import golden
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools import make_dynamic_scale
from graphsurgeon_tools.check.equivalence import EXACT_LEVEL, compare_models


def two_conv_bilinear(channels: int = 16, size: int = 16, seed: int = 0) -> onnx.ModelProto:
    """conv -> Resize(linear x2, constant scales) -> conv, the shape the issue saw fail at opset 17."""
    rng = np.random.default_rng(seed)
    inits = [
        numpy_helper.from_array(rng.standard_normal((channels, 3, 3, 3)).astype(np.float32), "w1"),
        numpy_helper.from_array(rng.standard_normal((3, channels, 3, 3)).astype(np.float32), "w2"),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales_const"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node(
            "Resize",
            ["c1", "", "scales_const"],
            ["up"],
            name="resize",
            mode="linear",
            coordinate_transformation_mode="half_pixel",
        ),
        helper.make_node("Conv", ["up", "w2"], ["y"], name="conv2", pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "two_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2 * size, 2 * size])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_check_is_exact_at_the_extended_level_and_reports_the_optimized_difference() -> None:
    result = make_dynamic_scale(two_conv_bilinear(), optimized_figure=True)
    check = result.check
    assert check.passed is True and check.level == EXACT_LEVEL == "ORT_ENABLE_EXTENDED"
    assert [o.max_abs_diff for o in check.outputs] == [0.0]
    # ORT_ENABLE_ALL's layout pass differs for constant scales: a figure, not a failure
    optimized = check.to_dict()["optimized"]
    assert optimized["level"] == "ORT_ENABLE_ALL"
    assert 0 < optimized["max_abs_diff"] < 1e-3 and optimized["original_drift"] > 0
    assert "ORT_ENABLE_ALL" in check.summary
    assert check.to_dict()["levels"] == ["ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL"]


def test_by_default_the_check_runs_the_exact_level_only_and_says_so() -> None:
    check = make_dynamic_scale(two_conv_bilinear()).check
    assert check.passed is True and [o.max_abs_diff for o in check.outputs] == [0.0]
    report = check.to_dict()
    assert report["optimized"] == {} and report["levels"] == ["ORT_ENABLE_EXTENDED"]
    assert report["sessions"] == [
        {"model": "reference", "level": "ORT_ENABLE_EXTENDED", "reused": False},
        {"model": "candidate", "level": "ORT_ENABLE_EXTENDED", "reused": False},
    ]
    assert "ORT_ENABLE_ALL" not in check.summary


def test_check_compares_site_outputs_and_names_the_site_that_differs() -> None:
    original = two_conv_bilinear()
    changed = onnx.ModelProto()
    changed.CopyFrom(original)
    resize = next(n for n in changed.graph.node if n.op_type == "Resize")
    next(a for a in resize.attribute if a.name == "coordinate_transformation_mode").s = b"align_corners"
    check = compare_models(original, changed)
    assert check.passed is False
    assert [s.name for s in check.sites] == ["up"] and check.differing_sites == ["up"]
    assert "first differing site output: up" in check.summary
    assert check.to_dict()["sites"][0]["passed"] is False


def test_dims_written_as_minus_one_are_symbolic_in_the_check() -> None:
    model = golden.resize_model(13, shape=(1, 3, 8, 8))
    for dim in model.graph.input[0].type.tensor_type.shape.dim[2:]:
        dim.dim_value = -1  # what older paddle2onnx writes for a dynamic dim
    result = make_dynamic_scale(model)
    assert result.check.passed is True
    assert result.check.input_shapes == {"x": [1, 3, 32, 32]}


def test_a_check_on_constant_tensors_only_is_skipped_as_vacuous() -> None:
    model = golden.constant_output_model()
    check = make_dynamic_scale(model).check
    assert check.passed is None and check.skipped.startswith("vacuous")
    assert all(o.vacuous for o in check.outputs)


def test_exact_level_is_a_level_onnxruntime_knows() -> None:
    import onnxruntime as ort

    assert getattr(ort.GraphOptimizationLevel, EXACT_LEVEL) == ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
