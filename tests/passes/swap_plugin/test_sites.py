"""swap-plugin's sites: rank from the scales, nothing added when nothing is swapped,
sizes from static shapes, Resize-18 ``axes`` sites, and each site's factor freedom in the report."""

from __future__ import annotations

import engines
import golden
import numpy as np
import onnx
import onnx.parser
import pytest

from graphsurgeon_tools.errors import RefusedRequestError
from graphsurgeon_tools.passes.swap_plugin import swap_plugin

_HEADER = '< ir_version: 8, opset_import: ["" : 13, "custom" : 1] >'


def _parse(body: str, header: str = _HEADER) -> onnx.ModelProto:
    return onnx.parser.parse_model(header + body)


def _fed(result, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    feeds = dict(feeds)
    for item in result.new_inputs:
        if item.get("value") is not None:
            feeds[item["name"]] = np.asarray(item["value"], dtype=np.float32)
    return feeds


def test_size_tensor_takes_the_rank_from_a_four_entry_scales_input() -> None:
    # X comes out of a custom op (no shape), the scales are a graph input declared float[4].
    model = _parse("""
    g (float[1,3,8,8] x0, float[4] scales) => (float[1,3,16,16] y) <float[0] roi = {}>
    {
        x = custom.Opaque (x0)
        y = Resize <mode = "nearest"> (x, roi, scales)
    }
    """)
    result = swap_plugin(model, signature="size-tensor")
    assert not result.skipped, result.skipped
    (swapped,) = result.swapped
    assert swapped.signature == "size-tensor"
    dims = next(n for n in result.model.graph.node if n.op_type == "Concat" and "size_tensor" in n.name)
    ones = next(i for i in result.model.graph.initializer if i.name == dims.input[0])
    assert list(ones.dims) == [2]  # rank 4: two leading ones before H, W


def test_nothing_swapped_adds_no_inputs_and_changes_nothing() -> None:
    # x 7 * 1.5 is not whole: the size-tensor signature refuses the site, before any scales input is made.
    # A second site the signature takes makes the request succeed; the refused one leaves no trace.
    model = golden.resize_model(13, scales=(1.0, 1.0, 1.5, 1.5), shape=(1, 3, 7, 7))
    with pytest.raises(RefusedRequestError, match="size-tensor-inexact"):
        swap_plugin(model, signature="size-tensor")
    two = _parse("""
    g (float[1,3,7,7] x) => (float[1,3,10,10] y, float[1,3,14,14] z)
    <float[4] a = {1.0, 1.0, 1.5, 1.5}, float[4] b = {1.0, 1.0, 2.0, 2.0}>
    {
        y = Resize <mode = "nearest"> (x, , a)
        z = Resize <mode = "nearest"> (x, , b)
    }
    """)
    result = swap_plugin(two, signature="size-tensor")
    assert [s.node for s in result.skipped] == ["y"] and len(result.swapped) == 1
    assert result.new_inputs and all(i["name"] != "a" for i in result.new_inputs)
    resize_y = [n for n in result.model.graph.node if n.op_type == "Resize"]
    assert [n.output[0] for n in resize_y] == ["y"] and list(resize_y[0].input)[2] == "a"


def test_sizes_from_static_shapes_say_that_simplify_folds_them() -> None:
    model = golden.sizes_from_static_shapes_model()
    with pytest.raises(RefusedRequestError) as refused:  # the scales signature refused its only site
        swap_plugin(model, signature="scales")
    (skip,) = refused.value.skipped
    assert "computed from the static shape of 'x' [1,4,8,8], 'lateral' [1,4,16,16]" in skip.reason
    assert "simplify=True folds it" in skip.reason


@pytest.mark.parametrize("axes, scales", [((2, 3), (2.0, 3.0)), ((3, 2), (3.0, 2.0))], ids=["axes_2_3", "axes_3_2"])
@pytest.mark.parametrize("signature", ["scales", "size-tensor"])
def test_resize_18_axes_sites_are_swapped_with_scales_expanded_in_graph(axes, scales, signature) -> None:
    # The ONNX spec cases test_resize_upsample_scales_nearest_axes_2_3 and _3_2.
    x = np.array([[[[1, 2], [3, 4]]]], dtype=np.float32)
    model = onnx.helper.make_model(
        onnx.helper.make_graph(
            [
                onnx.helper.make_node(
                    "Resize", ["X", "", "scales"], ["Y"], name="resize", mode="nearest", axes=list(axes)
                )
            ],
            "axes",
            [onnx.helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 1, 2, 2])],
            [onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [1, 1, 4, 6])],
            [onnx.numpy_helper.from_array(np.array(scales, np.float32), "scales")],
        ),
        opset_imports=[onnx.helper.make_opsetid("", 19)],
    )
    model.ir_version = 9
    expected = engines.ort_run(model, {"X": x})[0]
    assert expected.shape == (1, 1, 4, 6)
    result = swap_plugin(model, signature=signature)
    assert not result.skipped, result.skipped
    (swapped,) = result.swapped
    onnx.checker.check_model(result.model, full_check=True)
    feeds = _fed(result, {"X": x})
    np.testing.assert_array_equal(engines.plugin_run(result.model, feeds)[0], expected)
    restored = swap_plugin(result.model, reverse=True)
    np.testing.assert_array_equal(engines.ort_run(restored.model, feeds)[0], expected)


def test_the_report_says_which_sites_are_free() -> None:
    model = golden.fpn_model(13, factors=(2.0, 4.0))
    report = swap_plugin(model).to_dict()
    assert [s["free"] for s in report["swapped"]] == [False, False]
    assert report["swapped"][0]["pinned_by"].startswith("Add add_0 cannot broadcast [1,4,6,6] with [1,4,4,4]")
    report = swap_plugin(golden.resize_model(13)).to_dict()
    assert report["swapped"][0]["free"] is True and report["swapped"][0]["pinned_by"] is None
