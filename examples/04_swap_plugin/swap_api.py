"""Example 04 through the API: swap in DynamicTRTResize, run it in ONNX Runtime, validate it."""

import numpy as np

from exporters import export, srcnn
from graphsurgeon_tools import make_dynamic_scale, make_session, save_model, swap_plugin, validate

model = srcnn("static", factor=3)
export(model, model.example_inputs(), "srcnn_x3.onnx", input_names=["input"], output_names=["output"])
dynamic = make_dynamic_scale("srcnn_x3.onnx").raise_if_failed().model

result = swap_plugin(dynamic)  # the built-in DynamicTRTResize spec, (X, scales) signature
for swapped in result.swapped:
    print(f"swapped: {swapped.to_dict()}")
save_model(result.model, "srcnn_plugin_api.onnx")

# make_session registers onnxtool's kernel for the plugin node; plain ORT would refuse it.
session = make_session("srcnn_plugin_api.onnx")
x = np.random.default_rng(0).random((1, 3, 20, 24), dtype=np.float32)
for factor in (2.0, 3.0, 4.0):
    (y,) = session.run(None, {"input": x, "scales": np.array([1, 1, factor, factor], np.float32)})
    print(f"x{factor:g}: {x.shape} -> {y.shape}")
    assert y.shape == (1, 3, int(20 * factor), int(24 * factor))

report = validate("srcnn_plugin_api.onnx", "torch:srcnn", factors=[2, 3, 4])
print(report.summary_line())
report.raise_if_failed()
