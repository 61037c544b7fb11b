"""Write detector_nms.onnx: boxes and scores in, NonMaxSuppression with constant thresholds out.

The built-in `nms` spec (graphsurgeon_tools/plugins/specs/nms.toml) turns the node into a CustomNMS plugin whose thresholds are plugin fields,
so the three scalar inputs must be constants: here they are initializers. Runs once in ORT.
"""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

boxes = helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, "num_boxes", 4])
scores = helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, "num_boxes"])
selected = helper.make_tensor_value_info("selected", TensorProto.INT64, ["num_selected", 3])
constants = [
    numpy_helper.from_array(np.array([10], np.int64), "max_output_boxes_per_class"),
    numpy_helper.from_array(np.array([0.5], np.float32), "iou_threshold"),
    numpy_helper.from_array(np.array([0.3], np.float32), "score_threshold"),
]
node = helper.make_node(
    "NonMaxSuppression", ["boxes", "scores", *[c.name for c in constants]], ["selected"], name="nms", center_point_box=0
)
model = helper.make_model(
    helper.make_graph([node], "detector_nms", [boxes, scores], [selected], constants),
    opset_imports=[helper.make_opsetid("", 13)],
)
onnx.checker.check_model(model, full_check=True)
onnx.save(model, "detector_nms.onnx")

# Two overlapping boxes and one apart: NMS keeps the better of the pair and the lone one.
b = np.array([[[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]]], np.float32)
s = np.array([[[0.9, 0.8, 0.7]]], np.float32)
(kept,) = ort.InferenceSession("detector_nms.onnx", providers=["CPUExecutionProvider"]).run(
    None, {"boxes": b, "scores": s}
)
print(f"wrote detector_nms.onnx; NMS keeps boxes {kept[:, 2].tolist()}")
assert kept[:, 2].tolist() == [0, 2]
