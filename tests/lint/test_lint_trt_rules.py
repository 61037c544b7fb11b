"""Each TensorRT rule: a model that breaks it and one that passes (text-built, checker-clean)."""

from __future__ import annotations

import lint_models as m
import pytest

from graphsurgeon_tools.lint import lint_model

INT_SIZES_FROM_FACTOR = (
    "shp = Shape <start=2> (X)\n  hw = Mul(shp, f)\n  nc = Constant <value = int64[2] {1, 3}> ()\n"
    "  sz = Concat <axis=0> (nc, hw)"
)

CASES = {
    "trt-shape-input-integer": (
        m.resize(inputs="float[4] s"),  # float scales graph input (today's layout)
        m.resize(inputs="int64[2] f", extra_nodes=INT_SIZES_FROM_FACTOR, body_inputs="X, , , sz", opset=15),
    ),
    "trt-tensor-scales-iota-axes": (
        m.resize('mode="nearest", axes=[2, 3]', opset=18, inputs="float[2] s"),
        m.resize('mode="nearest", axes=[2, 3]', opset=18, inputs="int64[2] sz", body_inputs="X, , , sz"),
    ),
    "trt-cubic-axes": (
        m.constant_scales("1.0, 2.0, 2.0, 2.0", attrs='mode="cubic"'),
        m.constant_scales("1.0, 1.0, 2.0, 2.0", attrs='mode="cubic"'),
    ),
    "trt-linear-axes": (
        m.constant_scales("2.0, 2.0, 2.0, 2.0", attrs='mode="linear"'),
        m.constant_scales("1.0, 2.0, 2.0, 2.0", attrs='mode="linear"'),
    ),
    "trt-antialias": (
        m.constant_scales("1.0, 1.0, 0.5, 0.5", attrs='mode="linear", antialias=1', opset=18),
        m.constant_scales("1.0, 1.0, 0.5, 0.5", attrs='mode="linear", antialias=0', opset=18),
    ),
    "trt-keep-aspect-ratio": (
        m.resize(
            'mode="nearest", keep_aspect_ratio_policy="not_larger"',
            opset=18,
            init="int64[4] sz = {1, 3, 16, 12}",
            body_inputs="X, , , sz",
        ),
        m.resize(
            'mode="nearest", keep_aspect_ratio_policy="stretch"',
            opset=18,
            init="int64[4] sz = {1, 3, 16, 12}",
            body_inputs="X, , , sz",
        ),
    ),
    "trt-coordinate-mode": (
        m.constant_scales(
            "1.0, 1.0, 2.0, 2.0", attrs='mode="linear", coordinate_transformation_mode="half_pixel_symmetric"', opset=19
        ),
        m.constant_scales(
            "1.0, 1.0, 2.0, 2.0", attrs='mode="linear", coordinate_transformation_mode="half_pixel"', opset=19
        ),
    ),
    "trt-opset10-asymmetric": (
        # Resize-10 has no cubic; an exporter that wrote it anyway gets asymmetric linear from TensorRT
        m.constant_scales("1.0, 1.0, 2.0, 2.0", attrs='mode="cubic"', opset=10, body_inputs="X, s", check=False),
        m.constant_scales("1.0, 1.0, 2.0, 2.0", attrs='mode="linear"', opset=10, body_inputs="X, s"),
    ),
    "trt-upsample-scales-float": (
        m.parse(
            """
<ir_version: 8, opset_import: ["" : 9]>
g (float[1,3,4,4] X) => (float[?,?,?,?] Y) <double[4] s = {1.0, 1.0, 2.0, 2.0}> { Y = Upsample (X, s) }""",
            check=False,
        ),
        m.parse("""
<ir_version: 8, opset_import: ["" : 9]>
g (float[1,3,4,4] X) => (float[?,?,?,?] Y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> { Y = Upsample (X, s) }"""),
    ),
    "trt-plugin-lookup-attributes": (
        m.plugin('plugin_version=1, plugin_namespace=""', second="float[4] s", body_inputs="X, s"),
        m.plugin('plugin_version="1", plugin_namespace=""', second="float[4] s", body_inputs="X, s"),
    ),
    "trt-plugin-shape-inputs": (
        m.plugin(
            'plugin_version="1", plugin_namespace="", tensorrt_plugin_shape_input_indices=[1]', second="float[4] sizes"
        ),
        m.plugin('plugin_version="1", plugin_namespace="", tensorrt_plugin_shape_input_indices=[1]'),
    ),
}


def _rules_hit(model, target="tensorrt", severity="error"):
    return {f.rule for f in lint_model(model, target).findings if f.severity == severity}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_model_that_breaks_the_rule_fails_it(rule):
    report = lint_model(CASES[rule][0], "tensorrt")
    assert rule in {f.rule for f in report.findings if f.severity == "error"}, report.to_dict()
    assert report.failed
    finding = next(f for f in report.findings if f.rule == rule)
    assert finding.source.startswith(("onnx/onnx-tensorrt", "NVIDIA/TensorRT"))
    assert finding.node and finding.reason


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_model_that_keeps_the_rule_passes_it(rule):
    # informational notes (severity "info") are not failures: the V3 form's note says a V2 creator ignores it
    assert rule not in {f.rule for f in lint_model(CASES[rule][1], "tensorrt").findings if f.severity != "info"}


def test_the_shape_input_walk_stops_at_shape_so_a_float_data_input_is_not_a_shape_input():
    model = m.resize(inputs="int64[2] f", extra_nodes=INT_SIZES_FROM_FACTOR, body_inputs="X, , , sz", opset=15)
    report = lint_model(model, "tensorrt")
    assert not report.failed, report.to_dict()


def test_tensor_scales_report_tensorrts_out_over_in_arithmetic_as_information():
    report = lint_model(m.resize(inputs="float[4] s"), "tensorrt")
    info = [f for f in report.findings if f.rule == "trt-scale-arithmetic"]
    assert info and info[0].severity == "info" and "out/in" in info[0].reason


def test_constant_scales_behind_an_identity_where_in_times_scale_is_not_whole_warn_about_arithmetic():
    model = m.resize('mode="linear"', init="float[4] c = {1.0, 1.0, 1.3, 1.3}", extra_nodes="s = Identity(c)")
    report = lint_model(model, "tensorrt")
    warned = [f for f in report.findings if f.rule == "trt-scale-arithmetic"]
    assert warned and warned[0].severity == "warning"
    assert (
        lint_model(
            m.resize('mode="linear"', init="float[4] c = {1.0, 1.0, 2.0, 2.0}", extra_nodes="s = Identity(c)"),
            "tensorrt",
        ).findings
        == []
    )


def test_a_plugin_without_lookup_attributes_is_a_warning_not_a_failure():
    report = lint_model(m.plugin("", second="float[4] s", body_inputs="X, s"), "tensorrt")
    assert [f.severity for f in report.findings if f.rule == "trt-plugin-lookup-attributes"] == ["warning"]
    assert not report.failed


def test_shape_input_indices_out_of_range_and_mistyped_fail():
    out_of_range = m.plugin('plugin_version="1", plugin_namespace="", tensorrt_plugin_shape_input_indices=[2]')
    mistyped = m.plugin('plugin_version="1", plugin_namespace="", tensorrt_plugin_shape_input_indices=1')
    for model in (out_of_range, mistyped):
        assert "trt-plugin-shape-inputs" in _rules_hit(model)


def test_opset_outside_the_documented_range_warns():
    report = lint_model(m.constant_scales("1.0, 1.0, 2.0, 2.0", opset=21), "tensorrt")
    assert [f.severity for f in report.findings if f.rule == "trt-opset-range"] == ["warning"]


def test_every_finding_serialises_with_its_rule_source_node_and_fix():
    from graphsurgeon_tools import make_dynamic_scale

    written = make_dynamic_scale(m.constant_scales("1.0, 1.0, 2.0, 2.0"), check=False).model  # float scales input
    data = lint_model(written, "tensorrt").to_dict()
    assert data["failed"] is True and data["counts"]["error"] == 1
    first = data["findings"][0]
    assert set(first) == {"rule", "target", "severity", "source", "node", "op_type", "reason", "fix"}
    assert first["fix"]["call"] == "make_dynamic_scale" and first["fix"]["keywords"] == {"layout": "sizes"}


def test_a_float_input_of_the_users_own_gets_no_fix_since_no_rewrite_of_this_tool_makes_it_pass():
    data = lint_model(m.resize(inputs="float[4] s"), "tensorrt").to_dict()
    assert data["failed"] is True and [f["fix"] for f in data["findings"]] == [None, None]


def test_an_unknown_target_is_a_usage_error():
    from graphsurgeon_tools.errors import UsageError

    with pytest.raises(UsageError, match="not a lint target"):
        lint_model(m.resize(inputs="float[4] s"), "tflite")


def test_sites_inside_control_flow_bodies_are_linted_and_say_where():
    model = m.parse(
        """
<ir_version: 8, opset_import: ["" : 18]>
g (float[1,3,8,8] X, bool c) => (float[?,?,?,?] Y) {
  Y = If (c) <
    then_branch = t () => (float[?,?,?,?] A) {
      s = Constant <value = float[4] {1.0, 1.0, 2.0, 2.0}> ()
      A = Resize <mode="linear", antialias=1> (X, , s)
    },
    else_branch = e () => (float[?,?,?,?] B) { B = Identity(X) }
  >
}""",
        check=False,
    )
    report = lint_model(model, "tensorrt")
    (finding,) = [f for f in report.findings if f.rule == "trt-antialias"]
    assert finding.reason.startswith("in If ") and finding.node == "A"
