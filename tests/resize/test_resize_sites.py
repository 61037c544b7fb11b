"""find_resize_sites: every Resize/Upsample version, every scales source, attributes, exporters' output."""

from __future__ import annotations

import golden
import onnx
import pytest

from graphsurgeon_tools.resize import ValueSource, find_resize_sites, trace_value

OP_VERSION = {10: 10, 11: 11, 13: 13, 18: 18, 19: 19}
SOURCE = {
    "initializer": ValueSource.INITIALIZER,
    "constant": ValueSource.CONSTANT,
    "identity": ValueSource.IDENTITY,
    "folded": ValueSource.FOLDED,
    "graph_input": ValueSource.GRAPH_INPUT,
    "runtime": ValueSource.RUNTIME,
}


@pytest.mark.parametrize("opset", golden.RESIZE_OPSETS)
@pytest.mark.parametrize("source", golden.SCALES_SOURCES)
def test_every_resize_version_and_scales_source(opset: int, source: str) -> None:
    model = golden.resize_model(opset, source=source, scales=(1.0, 1.0, 2.0, 3.0))
    before = model.SerializeToString()
    (site,) = find_resize_sites(model)
    assert model.SerializeToString() == before  # read-only
    assert (site.op_type, site.op_version, site.opset) == ("Resize", OP_VERSION[opset], opset)
    assert site.scales_source is SOURCE[source]
    assert site.node_name == "resize" and site.output_name == "resized" and site.input_name == "x"
    assert site.input_shape == (1, 3, 8, 8) and site.input_rank == 4
    if source in ("graph_input", "runtime"):
        assert site.scales is None and not site.has_constant_scales
    else:
        assert site.scales == (1.0, 1.0, 2.0, 3.0) and site.has_constant_scales
    if source == "runtime":
        assert any("graph input 'x'" in note for note in site.notes)
    if source == "identity":
        assert site.scales_nodes == ("scales_const_identity1", "scales_const_identity2")
    if source == "folded":
        assert set(site.scales_nodes) == {"scales_const_mul", "scales_const_concat"}
    if opset == 10:
        # Resize-10 has no such attributes: the spec's behaviour is reported, with a note
        assert (site.coordinate_transformation_mode, site.nearest_mode) == ("asymmetric", "floor")
        assert any("by definition" in note for note in site.notes)
    else:
        assert (site.coordinate_transformation_mode, site.nearest_mode) == ("half_pixel", "round_prefer_floor")


def test_attributes_are_reported_with_defaults_filled_in() -> None:
    (site,) = find_resize_sites(
        golden.resize_model(
            18,
            mode="cubic",
            axes=(2, 3),
            scales=(2.0, 2.5),
            antialias=1,
            coordinate_transformation_mode="pytorch_half_pixel",
        )
    )
    assert site.mode == "cubic" and site.cubic_coeff_a == -0.75 and site.exclude_outside == 0
    assert site.antialias == 1 and site.axes == (2, 3) and site.scales == (2.0, 2.5)
    assert site.coordinate_transformation_mode == "pytorch_half_pixel"
    assert site.keep_aspect_ratio_policy == "stretch" and site.extrapolation_value == 0.0
    data = site.to_dict()
    assert data["scales_source"] == "initializer" and data["axes"] == (2, 3)


def test_half_pixel_symmetric_at_resize_19() -> None:
    (site,) = find_resize_sites(
        golden.resize_model(19, mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
    )
    assert site.op_version == 19 and site.coordinate_transformation_mode == "half_pixel_symmetric"


def test_empty_string_roi_of_the_dynamo_exporter() -> None:
    (site,) = find_resize_sites(golden.resize_model(13, empty_roi="empty"))
    assert site.roi_tensor == "" and site.scales_source is ValueSource.INITIALIZER


@pytest.mark.parametrize(
    "version, opset, source",
    [(7, 7, ValueSource.ATTRIBUTE), (7, 8, ValueSource.ATTRIBUTE), (9, 9, ValueSource.CONSTANT)],
)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_7_and_9(version: int, opset: int, source: ValueSource, mode: str) -> None:
    (site,) = find_resize_sites(golden.upsample_model(version, opset=opset, mode=mode, scales=(1.0, 1.0, 2.0, 3.0)))
    assert site.op_type == "Upsample" and site.op_version == version and site.opset == opset
    assert site.scales == (1.0, 1.0, 2.0, 3.0) and site.scales_source is source
    assert site.mode == mode and site.coordinate_transformation_mode == "asymmetric"
    assert site.scales_tensor == ("" if version == 7 else "scales_const")


def test_fpn_sites_in_graph_order_with_their_own_factors() -> None:
    sites = find_resize_sites(golden.fpn_model(factors=(2.0, 4.0, 8.0)))
    assert [s.node_name for s in sites] == ["resize_0", "resize_1", "resize_2"]
    assert [s.scales for s in sites] == [(1, 1, 2, 2), (1, 1, 4, 4), (1, 1, 8, 8)]
    assert [s.scales_source for s in sites] == [ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.IDENTITY]
    assert [s.node_index for s in sites] == sorted(s.node_index for s in sites)
    assert sites[0].input_shape == ("N", 4, 2, 2)


@pytest.mark.parametrize("opset", [11, 13])
def test_sizes_driven_site(opset: int) -> None:
    (site,) = find_resize_sites(golden.sizes_model(opset, sizes=(1, 3, 24, 20)))
    assert site.sizes == (1, 3, 24, 20) and site.sizes_source is ValueSource.INITIALIZER
    assert site.scales is None and site.scales_source is ValueSource.ABSENT
    assert site.sizes_tensor == "sizes_const"


def test_trace_value_reports_why_a_value_is_not_constant() -> None:
    model = golden.resize_model(13, source="runtime")
    trace = trace_value(model, "scales_const")
    assert trace.source is ValueSource.RUNTIME and trace.value is None and "graph input 'x'" in trace.reason
    assert trace_value(model, "").source is ValueSource.ABSENT


def test_a_path_is_accepted(save_model_file) -> None:
    path = save_model_file(golden.resize_model(13))
    assert [s.node_name for s in find_resize_sites(path)] == ["resize"]


def test_no_sites_in_a_model_without_resize() -> None:
    model = onnx.parser.parse_model(
        """<ir_version: 8, opset_import: ["" : 13]> g (float[2] x) => (float[2] y) { y = Relu(x) }"""
    )
    assert find_resize_sites(model) == []


def test_the_exporters_output(srcnn_exports) -> None:
    expected_version = {"torchscript-11": 11, "torchscript-13": 13, "torchscript-17": 13, "dynamo": 19}
    expected_source = {
        "torchscript-11": ValueSource.CONSTANT,
        "torchscript-13": ValueSource.CONSTANT,
        "torchscript-17": ValueSource.CONSTANT,
        "dynamo": ValueSource.INITIALIZER,
    }
    for label, path in srcnn_exports.items():
        (site,) = find_resize_sites(path)
        assert site.mode == "cubic" and site.cubic_coeff_a == -0.75, label
        assert site.scales == (1.0, 1.0, 3.0, 3.0), label
        assert site.op_version == expected_version[label], label
        assert site.scales_source is expected_source[label], label


def test_the_real_paddle_model(ppocr_det_path) -> None:
    sites = find_resize_sites(ppocr_det_path)
    assert len(sites) == 6
    assert [s.scales[2] for s in sites] == [2.0, 2.0, 2.0, 8.0, 4.0, 2.0]
    assert {(s.mode, s.coordinate_transformation_mode, s.nearest_mode) for s in sites} == {
        ("nearest", "asymmetric", "floor")
    }
    # paddle2onnx writes Constant nodes named p2o.helper.constant.N (roi empty, scales filled)
    assert all(
        s.scales_source is ValueSource.CONSTANT and s.scales_tensor.startswith("p2o.helper.constant.") for s in sites
    )


def test_scales_stored_as_external_data_are_read_from_the_models_folder(tmp_path) -> None:
    model = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 3.0))
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    (site,) = find_resize_sites(tmp_path / "m.onnx")
    assert site.scales == (1.0, 1.0, 2.0, 3.0) and site.scales_source is ValueSource.INITIALIZER


@pytest.mark.parametrize(
    "build, problem",
    [
        (lambda: golden.resize_model(13, scales=(1.0, 1.0, float("inf"), 2.0), infer=False), "not a positive finite"),
        (lambda: golden.resize_model(13, scales=(1.0, 2.0, 2.0), infer=False), "3 entries for a rank-4 input"),
        (lambda: golden.resize_model(18, axes=(2, 2), scales=(2.0, 2.0), infer=False), "repeat an axis"),
    ],
)
def test_nonsense_is_described_not_raised(build, problem) -> None:
    model = build()
    (site,) = find_resize_sites(model)
    assert any(problem in p for p in site.problems), site.problems


def test_sane_sites_have_no_problems() -> None:
    for model in (golden.resize_model(10), golden.sizes_model(11), golden.upsample_model(7), golden.fpn_model()):
        assert all(not s.problems for s in find_resize_sites(model))
