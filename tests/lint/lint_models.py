"""Text-built models for the lint tests (onnx.parser): one Resize or plugin node each."""

from __future__ import annotations

import onnx
import onnx.parser


def parse(text: str, check: bool = True) -> onnx.ModelProto:
    model = onnx.parser.parse_model(text)
    if check:
        onnx.checker.check_model(model, full_check=True)
    return model


def resize(
    attrs: str = 'mode="nearest"',
    *,
    opset: int = 13,
    x: str = "float[1,3,8,8]",
    params: str = "",
    inputs: str = "",
    body_inputs: str = "X, , s",
    init: str = "",
    extra_nodes: str = "",
    check: bool = True,
) -> onnx.ModelProto:
    """``Y = Resize<attrs>(body_inputs)``; ``inputs`` adds graph inputs, ``init`` initializers."""
    graph_inputs = ", ".join(p for p in (f"{x} X", inputs) if p)
    initializers = f"<{init}>" if init else ""
    return parse(
        f"""
<ir_version: 8, opset_import: ["" : {opset}]>
g ({graph_inputs}) => (float[?,?,?,?] Y) {initializers} {{
  {extra_nodes}
  Y = Resize <{attrs}> ({body_inputs})
}}""",
        check,
    )


def constant_scales(values: str, **kw) -> onnx.ModelProto:
    return resize(init=f"float[4] s = {{{values}}}", **kw)


def plugin(attrs: str, *, second: str = "int64[4] sizes", body_inputs: str = "X, sizes") -> onnx.ModelProto:
    attributes = f"<{attrs}>" if attrs else ""
    return parse(
        f"""
<ir_version: 8, opset_import: ["" : 13, "trt.plugins" : 1]>
g (float[1,3,8,8] X, {second}) => (float[?,?,?,?] Y) {{
  Y = trt.plugins.DynamicTRTResize {attributes} ({body_inputs})
}}""",
        check=False,
    )
