"""Example 03 through the API: rewrite a normal export, and show it equals the symbolic export."""

from exporters import export, srcnn
from graphsurgeon_tools import make_dynamic_scale, save_model, validate

# 1. A normal export: the factor 3 is a constant in the graph.
static = srcnn("static", factor=3)
export(static, static.example_inputs(), "srcnn_x3.onnx", input_names=["input"], output_names=["output"])

# 2. The rewrite: a ModelProto (or path) in, a ModelProto plus a report out. No file I/O
#    happens until save_model, which writes atomically. The built-in ORT check's verdict is
#    in result.check; raise_if_failed() turns a difference into CheckFailedError (exit 1).
result = make_dynamic_scale("srcnn_x3.onnx").raise_if_failed()
for site in result.rewritten:
    print(f"rewrote {site.node}: {site.mode} resize, scales {site.original_scales} now from input {site.new_input!r}")
save_model(result.model, "srcnn_dynamic_api.onnx")

# 3. Example 02's route: the tutorial's autograd.Function symbolic, exported directly.
tutorial = srcnn("new-interpolate")
export(
    tutorial,
    tutorial.example_inputs(3),
    "srcnn_new_interpolate.onnx",
    input_names=["input", "scales"],
    output_names=["output"],
)

# 4. Same weights, same resize semantics: the two files must agree at every factor.
report = validate("srcnn_dynamic_api.onnx", "srcnn_new_interpolate.onnx", factors=[2, 3, 4])
print(report.summary_line())
report.raise_if_failed()
