"""Example 01 through the Python API: export the static SRCNN, run it in ONNX Runtime next to PyTorch."""

import numpy as np
import onnxruntime as ort
import torch

from exporters import export, srcnn

model = srcnn("static", factor=3)  # shipped x3 weights, eval mode
(x,) = model.example_inputs(height=24, width=32)
result = export(
    model, (x,), "srcnn_x3_api.onnx", exporter="torchscript", input_names=["input"], output_names=["output"]
)
print(f"wrote {result.path}: opset {result.opset}, ops {result.op_types}")

session = ort.InferenceSession("srcnn_x3_api.onnx", providers=["CPUExecutionProvider"])
probe = torch.rand(1, 3, 40, 20)  # another size: batch, height and width are dynamic
(onnx_out,) = session.run(None, {"input": probe.numpy()})
with torch.no_grad():
    torch_out = model(probe).numpy()
diff = float(np.abs(onnx_out - torch_out).max())
print(f"ONNX Runtime {onnx_out.shape} vs PyTorch {torch_out.shape}: max |diff| {diff:.2g}")
assert onnx_out.shape == (1, 3, 120, 60) and diff < 1e-4
