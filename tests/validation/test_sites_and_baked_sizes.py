"""validate on sizes-driven and vacuous sites: sizes-driven sites have a baked factor each site is fed;
site outputs are compared; a sweep point with only vacuous comparisons is not a pass."""

from __future__ import annotations

import golden
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools import make_dynamic_scale, validate
from graphsurgeon_tools.validation.junit import junit_xml


def test_a_rewrite_of_sizes_sites_is_fed_each_sites_own_factor_against_its_original() -> None:
    original = golden.sizes_model(13, sizes=(1, 3, 24, 20), shape=(1, 3, 8, 10))
    candidate = make_dynamic_scale(original, from_sizes=True).model
    report = validate(candidate, original)
    data = report.to_dict()
    assert report.passed, data["summary"]
    assert data["reference"]["baked_factor"] is None  # 3 x 2: no single factor
    (point,) = data["factors"]
    assert point["factor"] == "baked" and point["scale_feeds"] == {"scales": [1.0, 1.0, 3.0, 2.0]}


def test_validate_compares_the_site_outputs_too() -> None:
    original = golden.fpn_model(13, symbolic=False)
    candidate = make_dynamic_scale(original).model
    data = validate(candidate, original).to_dict()
    (point,) = data["factors"]
    kinds = [(o["output"], o["kind"]) for o in point["outputs"]]
    assert kinds == [("y", "output"), ("up_0", "site"), ("up_1", "site"), ("up_2", "site")]
    assert data["counts"]["sites"] == 3 and data["passed"]


def test_a_sweep_point_with_only_vacuous_comparisons_is_not_a_pass() -> None:
    model = golden.constant_output_model()
    report = validate(model, "onnx-reference", factors=None)
    data = report.to_dict()
    assert not report.passed
    assert [p["status"] for p in data["factors"]] == ["vacuous"]
    assert "vacuous" in data["summary"] and data["counts"]["vacuous"] == 1
    xml = junit_xml(data)
    assert 'type="vacuous"' in xml and 'skipped="1"' in xml


def _sizes_from_shape_model() -> onnx.ModelProto:
    """``Resize(x, sizes=Concat(Shape(x)[:2], Shape(x)[2:] * [2, 3]))`` on a static x, as the
    TorchScript exporter writes ``interpolate(size=...)``: sizes computed at run time from static shapes."""
    inits = [
        numpy_helper.from_array(np.array(v, np.int64), n)
        for n, v in (("zero", [0]), ("two", [2]), ("four", [4]), ("mult", [2, 3]))
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Slice", ["shape", "zero", "two"], ["nc"], name="nc"),
        helper.make_node("Slice", ["shape", "two", "four"], ["hw"], name="hw"),
        helper.make_node("Mul", ["hw", "mult"], ["hw_out"], name="hw_out"),
        helper.make_node("Concat", ["nc", "hw_out"], ["sizes"], name="sizes", axis=0),
        helper.make_node(
            "Resize",
            ["x", "", "", "sizes"],
            ["y"],
            name="resize",
            mode="linear",
            coordinate_transformation_mode="half_pixel",
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "sizes_from_shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 18])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_sizes_computed_from_static_shapes_bake_a_factor_too() -> None:
    from graphsurgeon_tools.validation.ports import model_ports

    original = _sizes_from_shape_model()
    assert model_ports(original).baked_scales == {"resize": (1.0, 1.0, 2.0, 3.0)}
    candidate = make_dynamic_scale(
        golden.sizes_model(13, sizes=(1, 2, 8, 18), shape=(1, 2, 4, 6)), from_sizes=True
    ).model
    report = validate(candidate, original)
    assert report.passed, report.summary_line()
    assert report.to_dict()["factors"][0]["scale_feeds"] == {"scales": [1.0, 1.0, 2.0, 3.0]}
