"""Write warp.onnx: a small image-warping model with an ONNX GridSample node (opset 16).

GridSample is the op the built-in `gridsample` spec (graphsurgeon_tools/plugins/specs/gridsample.toml) turns into MMDeploy's grid_sampler plugin.
The model is built in code and checked; the script runs it once in ONNX Runtime too.
"""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

image = helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, "h", "w"])
grid = helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, "out_h", "out_w", 2])
warped = helper.make_tensor_value_info("warped", TensorProto.FLOAT, [1, 3, "out_h", "out_w"])
node = helper.make_node(
    "GridSample", ["image", "grid"], ["warped"], name="warp", mode="bilinear", padding_mode="border", align_corners=0
)
model = helper.make_model(
    helper.make_graph([node], "warp", [image, grid], [warped]), opset_imports=[helper.make_opsetid("", 16)]
)
onnx.checker.check_model(model, full_check=True)
onnx.save(model, "warp.onnx")

# An identity grid reproduces the image: a quick sanity run. With align_corners=0 the
# pixel centres sit at (2i + 1) / n - 1, not at linspace(-1, 1, n).
centres = (2 * np.arange(8) + 1) / 8 - 1
ys, xs = np.meshgrid(centres, centres, indexing="ij")
identity = np.stack([xs, ys], axis=-1)[None].astype(np.float32)
picture = np.random.default_rng(0).random((1, 3, 8, 8), dtype=np.float32)
session = ort.InferenceSession("warp.onnx", providers=["CPUExecutionProvider"])
(out,) = session.run(None, {"image": picture, "grid": identity})
print(f"wrote warp.onnx; identity warp max |diff| {np.abs(out - picture).max():.2g}")
assert np.abs(out - picture).max() < 1e-5
