"""lint --target tensorrt says what a DynamicTRTResize plugin would need for each site's element type."""

from __future__ import annotations

import golden
import onnx.parser
import pytest

from graphsurgeon_tools import swap_plugin
from graphsurgeon_tools.lint import lint_model
from graphsurgeon_tools.resize.plugin_dtypes import DTYPE_CODE


def _findings(model: onnx.ModelProto, rule: str) -> list:
    return [f for f in lint_model(model, "tensorrt").findings if f.rule == rule]


@pytest.mark.parametrize(
    ("dtype", "mode", "trt", "kernel"),
    [
        ("uint8", "nearest", "kUINT8", "kernel here takes it"),
        ("int8", "linear", "kINT8", "kernel here takes it"),
        ("int32", "nearest", "kINT32", "kernel here takes it"),
        ("float16", "nearest", "kHALF", "kernel here takes it"),
        ("uint8", "cubic", "kUINT8", DTYPE_CODE),
        ("int32", "cubic", "kINT32", DTYPE_CODE),
    ],
)
def test_a_site_that_is_not_float32_says_what_the_plugin_must_declare(
    dtype: str, mode: str, trt: str, kernel: str
) -> None:
    (finding,) = _findings(golden.typed_resize_model(dtype, mode), "trt-resize-dtype")
    assert finding.severity == "info" and f"X is {dtype}" in finding.reason
    assert trt in finding.reason and kernel in finding.reason
    if kernel == DTYPE_CODE:  # the reason is the one table's (resize.kernel_dtypes)
        assert "mode 'cubic'" in finding.reason


def test_an_integer_plugin_node_warns_that_it_needs_an_integer_plugin() -> None:
    plugin = swap_plugin(golden.typed_resize_model("int8", "linear"), check=False).model
    assert [n.op_type for n in plugin.graph.node] == ["DynamicTRTResize"]
    (finding,) = _findings(plugin, "trt-plugin-dtype")
    assert finding.severity == "warning" and "kINT8" in finding.reason


def test_a_float32_site_has_nothing_to_say() -> None:
    assert _findings(golden.typed_resize_model("float"), "trt-resize-dtype") == []


def test_a_quantized_site_says_the_plugin_runs_float32_inside_the_pair() -> None:
    model = onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (int8[1,2,4,4] xq) => (int8[1,2,8,8] yq) <float s = {0.1}, int8 z = {0}, float[4] k = {1.0, 1.0, 2.0, 2.0}> {
        x = DequantizeLinear(xq, s, z)
        y = Resize<mode = "linear">(x, , k)
        yq = QuantizeLinear(y, s, z)
    }""")
    (finding,) = _findings(model, "trt-resize-dtype")
    assert "quantized" in finding.reason and "kINT8" in finding.reason


def test_a_half_precision_plugin_node_warns_that_it_needs_a_khalf_plugin() -> None:
    plugin = swap_plugin(golden.typed_resize_model("float16"), check=False).model
    (finding,) = _findings(plugin, "trt-plugin-dtype")
    assert finding.severity == "warning" and "kHALF" in finding.reason
    assert _findings(swap_plugin(golden.typed_resize_model("float"), check=False).model, "trt-plugin-dtype") == []


def test_a_bfloat16_site_behind_a_cast_is_judged_by_the_cast_type() -> None:
    model = onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1,2,4,4] x0) => (float[1,2,8,8] y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> {
        x = Cast<to = 16>(x0)
        r = Resize<mode = "linear">(x, , s)
        y = Cast<to = 1>(r)
    }""")
    (finding,) = _findings(model, "trt-resize-dtype")
    assert "X is bfloat16" in finding.reason and "kBF16" in finding.reason and "kernel here takes it" in finding.reason
