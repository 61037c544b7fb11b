"""Plugin specs: the TOML format, the built-in DynamicTRTResize spec, the two example specs.

The example specs are applied to models built from text (onnx.parser) and checked three
ways: the op types and attributes that result, onnx.checker (full), and shape inference
continuing past the plugin node. Near-misses (a node the spec must not match) stay unchanged.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import pytest

from graphsurgeon_tools.errors import ExitCode
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.plugins import (
    BUILTIN_SPECS,
    AttributeRules,
    InvalidSpecError,
    builtin_spec,
    load_spec,
    parse_spec,
)

SPECS = Path(__file__).resolve().parents[3] / "graphsurgeon_tools" / "plugins" / "specs"  # package data


def _parse(text: str) -> onnx.ModelProto:
    model = onnx.parser.parse_model(text)
    onnx.checker.check_model(model, full_check=True)
    return model


def _inferred_types(model: onnx.ModelProto) -> dict[str, tuple[int, int]]:
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    return {
        v.name: (v.type.tensor_type.elem_type, len(v.type.tensor_type.shape.dim))
        for v in list(inferred.graph.value_info) + list(inferred.graph.output)
    }


def _attrs(node: onnx.NodeProto) -> dict:
    out = {}
    for attr in node.attribute:
        value = onnx.helper.get_attribute_value(attr)
        out[attr.name] = value.decode() if isinstance(value, bytes) else value
    return out


# --------------------------------------------------------------------------- built-in spec


def test_builtin_dynamic_trt_resize_spec_is_a_toml_file_shipped_with_the_package():
    spec = builtin_spec()
    assert BUILTIN_SPECS["DynamicTRTResize"].suffix == ".toml"
    assert (spec.op_type, spec.domain, spec.plugin_version, spec.plugin_namespace) == (
        "DynamicTRTResize",
        "trt.plugins",
        "1",
        "",
    )
    assert spec.handler == "resize"
    assert spec.match.op_types == ("Resize", "Upsample")
    attrs = spec.attributes.apply(
        {
            "mode": "cubic",
            "coordinate_transformation_mode": "align_corners",
            "cubic_coeff_a": -0.5,
            "exclude_outside": 0,
            "nearest_mode": "floor",
            "antialias": 0,
        }
    )
    assert attrs == {
        "mode": "cubic",
        "coordinate_transformation_mode": "align_corners",
        "cubic_coeff_a": -0.5,
        "exclude_outside": 0,
        "nearest_mode": "floor",
        "align_corners": 1,
    }
    assert spec.attributes.apply({"coordinate_transformation_mode": "half_pixel"})["align_corners"] == 0


def test_unknown_builtin_name_is_a_one_line_error():
    with pytest.raises(InvalidSpecError, match="no built-in plugin spec named 'Nope'"):
        builtin_spec("Nope")


def test_attribute_rules_apply_in_documented_order():
    rules = AttributeRules(
        keep=("mode", "size", "flag"),
        drop=("size",),
        values={"mode": {"a": 10, "b": 20}},
        derive={"is_b": ("mode", "b")},
        rename={"mode": "kind"},
        defaults={"flag": 7, "extra": 1.5},
        set={"forced": "yes"},
    )
    out = rules.apply({"mode": "b", "size": 3, "other": 9})
    # keep drops "other", drop removes "size", values maps before rename, derive reads the original
    assert out == {"kind": 20, "is_b": 1, "flag": 7, "extra": 1.5, "forced": "yes"}
    with pytest.raises(InvalidSpecError, match=r"mode='c' has no entry"):
        rules.apply({"mode": "c"})


# --------------------------------------------------------------------------- invalid specs

_VALID = """
[plugin]
op_type = "P"
[match]
op_type = "Relu"
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("this is = = not toml", "is not valid TOML"),
        ("[match]\nop_type='Relu'", "missing the [plugin] table"),
        ("[plugin]\nop_type='P'", "missing the [match] table"),
        ("[plugin]\n[match]\nop_type='Relu'", "missing op_type"),
        (_VALID + "[extra]\n", "unknown key(s) extra"),
        (_VALID.replace('op_type = "P"', 'op_type = "P"\nhandler = "magic"'), "unknown handler 'magic'"),
        (_VALID.replace('op_type = "P"', 'op_type = "P"\ndomain = ""'), "must not be empty"),
        (_VALID.replace('op_type = "P"', 'op_type = "P"\ndomain = "ai.onnx"'), "standard ONNX domain"),
        (_VALID.replace('op_type = "P"', 'op_type = "bad name"'), "not a valid name"),
        (_VALID + "[inputs]\norder = []\n", "non-empty list"),
        (_VALID + "[inputs]\norder = [-1]\n", "must be >= 0"),
        (_VALID + "[inputs]\norder = [1.5]\n", "by index or schema name"),
        (_VALID + "[[inputs.extra]]\nname='k'\ndtype='int32'\n", "needs a value"),
        (_VALID + "[[inputs.extra]]\nname='k'\ndtype='complex'\nvalue=1\n", "unknown dtype 'complex'"),
        (_VALID + "[attributes]\ncopy = 'yes'\n", "expected true or false"),
        (_VALID + "[attributes.values]\nmode = {}\n", "non-empty table"),
        (_VALID + "[attributes.derive.x]\nfrom='a'\n", "needs from and equals"),
        (_VALID + "[attributes.set]\nplugin_version = '2'\n", "come from [plugin]"),
        (_VALID + "[[outputs]]\nrank = 2\n", "exactly one of"),
        (_VALID + "[[outputs]]\ntype = 'same_as:0'\n", "same_as_input:0"),
        (_VALID + "[[outputs]]\ndtype = 'int64'\nrank = 2\nshape = [1]\n", "shape has 1 dims but rank is 2"),
        (
            "[plugin]\nop_type='P'\nhandler='resize'\n[match]\nop_type='Resize'\n[inputs]\norder=[0]\n",
            "builds its own inputs",
        ),
    ],
)
def test_invalid_spec_is_one_line_naming_the_file(text, message):
    with pytest.raises(InvalidSpecError) as info:
        parse_spec(text, source="my_spec.toml")
    text_of_error = str(info.value)
    assert message in text_of_error
    assert "my_spec.toml" in text_of_error
    assert "\n" not in text_of_error
    assert info.value.exit_code == ExitCode.INVALID_INPUT


def test_missing_spec_file(tmp_path):
    with pytest.raises(InvalidSpecError, match="plugin spec not found"):
        load_spec(tmp_path / "absent.toml")


# --------------------------------------------------------------------------- GridSample example

GRID_SAMPLE_MODEL = """
<ir_version: 8, opset_import: ["" : 16]>
g (float[N,3,8,8] x, float[N,4,5,2] grid) => (float[N,3,4,5] y) {
  s = GridSample <mode="bicubic", align_corners=1, padding_mode="border"> (x, grid)
  y = Relu(s)
}
"""


def test_grid_sample_spec_emits_mmdeploy_grid_sampler_fields():
    model = _parse(GRID_SAMPLE_MODEL)
    before = model.SerializeToString()
    result = swap_plugin(model, spec=SPECS / "gridsample.toml")
    assert model.SerializeToString() == before  # input untouched
    node = result.model.graph.node[0]
    assert (node.op_type, node.domain, list(node.input)) == ("grid_sampler", "mmdeploy", ["x", "grid"])
    assert _attrs(node) == {
        "interpolation_mode": 2,
        "padding_mode": 1,
        "align_corners": 1,
        "plugin_version": "1",
        "plugin_namespace": "",
    }
    assert any(op.domain == "mmdeploy" for op in result.model.opset_import)
    onnx.checker.check_model(result.model, full_check=True)
    # shape inference continues past the plugin: the Relu after it gets a typed, rank-4 output
    types = _inferred_types(result.model)
    assert types["s"] == (onnx.TensorProto.FLOAT, 4)
    assert types["y"] == (onnx.TensorProto.FLOAT, 4)


def test_grid_sample_spec_fills_schema_defaults_and_opset20_names():
    model = _parse("""
    <ir_version: 9, opset_import: ["" : 20]>
    g (float[1,1,4,4] x, float[1,2,2,2] grid) => (float[1,1,2,2] y) {
      y = GridSample <mode="linear"> (x, grid)
    }""")
    node = swap_plugin(model, spec=SPECS / "gridsample.toml").model.graph.node[0]
    # padding_mode and align_corners were absent: the plugin still gets them (ONNX defaults)
    assert _attrs(node)["interpolation_mode"] == 0
    assert _attrs(node)["padding_mode"] == 0
    assert _attrs(node)["align_corners"] == 0


def test_grid_sample_near_miss_stays_unchanged():
    # a spec narrowed by a node-name pattern leaves other GridSample nodes alone
    model = _parse(GRID_SAMPLE_MODEL)
    spec_text = (
        (SPECS / "gridsample.toml")
        .read_text()
        .replace('op_type = "GridSample"', 'op_type = "GridSample"\nname = "decoder/*"')
    )
    result = swap_plugin(model, spec=parse_spec(spec_text, source="narrow.toml"))
    assert not result.swapped
    assert [n.op_type for n in result.model.graph.node] == ["GridSample", "Relu"]


def test_match_attribute_conditions_skip_with_reason():
    model = _parse(GRID_SAMPLE_MODEL)
    spec_text = (
        (SPECS / "gridsample.toml")
        .read_text()
        .replace('mode = ["bilinear", "linear", "nearest", "bicubic", "cubic"]', 'mode = "nearest"')
    )
    result = swap_plugin(model, spec=parse_spec(spec_text, source="nearest_only.toml"))
    assert not result.swapped
    assert [s.reason for s in result.skipped] == ["the spec's [match.attributes] conditions do not hold"]


# --------------------------------------------------------------------------- NMS example

NMS_MODEL = """
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,6,4] boxes, float[1,2,6] scores) => (int64[K,3] selected, int64[K] box_index) {
  max_out = Constant <value = int64[1] {3}> ()
  iou = Constant <value = float[1] {0.5}> ()
  score = Constant <value = float[1] {0.25}> ()
  selected = NonMaxSuppression <center_point_box=1> (boxes, scores, max_out, iou, score)
  idx = Constant <value = int64[1] {2}> ()
  picked = Gather <axis=1> (selected, idx)
  idx_axis = Constant <value = int64[1] {1}> ()
  box_index = Squeeze (picked, idx_axis)
}
"""


def _nms_model() -> onnx.ModelProto:
    return _parse(NMS_MODEL)


def test_nms_spec_turns_constant_inputs_into_plugin_fields():
    model = _nms_model()
    result = swap_plugin(model, spec=SPECS / "nms.toml")
    (swapped,) = result.swapped
    nodes = {n.output[0]: n for n in result.model.graph.node}
    node = nodes["selected"]
    assert (node.op_type, node.domain) == ("CustomNMS", "custom.trt")
    keep_top_k = node.input[2]
    assert list(node.input[:2]) == ["boxes", "scores"]
    init = {i.name: onnx.numpy_helper.to_array(i) for i in result.model.graph.initializer}
    assert init[keep_top_k].dtype == np.int32 and int(init[keep_top_k]) == 100
    attrs = _attrs(node)
    assert attrs["box_coding"] == 1
    assert attrs["max_output_boxes_per_class"] == 3
    assert attrs["iou_threshold"] == pytest.approx(0.5)
    assert attrs["score_threshold"] == pytest.approx(0.25)
    assert (attrs["plugin_version"], attrs["plugin_namespace"]) == ("2", "detection")
    # the Constant nodes that only fed the moved inputs are gone; the others stay
    remaining = [n.output[0] for n in result.model.graph.node if n.op_type == "Constant"]
    assert sorted(remaining) == ["idx", "idx_axis"]
    assert sorted(result.removed_nodes) == ["iou", "max_out", "score"]
    onnx.checker.check_model(result.model, full_check=True)
    # the fixed output rule (int64, rank 2) lets inference type the Gather/Squeeze after it
    types = _inferred_types(result.model)
    assert types["selected"] == (onnx.TensorProto.INT64, 2)
    assert types["picked"] == (onnx.TensorProto.INT64, 2)


def test_nms_spec_uses_defaults_for_absent_optional_inputs():
    model = _parse("""
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,6,4] boxes, float[1,1,6] scores) => (int64[K,3] selected) {
      selected = NonMaxSuppression (boxes, scores)
    }""")
    attrs = _attrs(swap_plugin(model, spec=SPECS / "nms.toml").model.graph.node[0])
    assert attrs["score_threshold"] == 0.0 and attrs["max_output_boxes_per_class"] == 0
    assert attrs["box_coding"] == 0  # ONNX's default center_point_box, filled from the schema
    assert "iou_threshold" not in attrs  # no default in the spec: the plugin's own applies


def test_nms_with_runtime_threshold_is_skipped_with_reason():
    model = _parse("""
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,6,4] boxes, float[1,1,6] scores, float[1] iou) => (int64[K,3] selected) {
      selected = NonMaxSuppression (boxes, scores, "", iou)
    }""")
    result = swap_plugin(model, spec=SPECS / "nms.toml")
    assert not result.swapped
    assert result.model.graph.node[0].op_type == "NonMaxSuppression"
    (skip,) = result.skipped
    assert "must be constant to become attribute 'iou_threshold'" in skip.reason


def test_generic_spec_has_no_reverse():
    with pytest.raises(Exception, match="reverse=True only exists for the resize handler"):
        swap_plugin(_nms_model(), spec=SPECS / "nms.toml", reverse=True)
