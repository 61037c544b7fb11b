"""One-Resize models for the certify tests, built from text-free onnx.helper calls (opset 19).

``resize_model(mode, ctm, nearest_mode)``: X [1, 1, h, w] and ``scales`` [4] as graph inputs,
one Resize node named "up" -- a model whose site holds exactly the configuration under test.
``run_ort``/``run_reference``: that Resize run directly (no probes) on one input, to cross-check
what a certificate claims.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper


def resize_model(
    mode: str, ctm: str, nearest_mode: str = "round_prefer_floor", param: str = "scales"
) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    if param == "sizes":
        p = helper.make_tensor_value_info("sizes", TensorProto.INT64, [4])
        inputs = ["x", "", "", "sizes"]
    else:
        p = helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])
        inputs = ["x", "", "scales"]
    node = helper.make_node(
        "Resize", inputs, ["y"], name="up", mode=mode, coordinate_transformation_mode=ctm, nearest_mode=nearest_mode
    )
    return helper.make_model(
        helper.make_graph([node], "g", [x, p], [y]), opset_imports=[helper.make_opsetid("", 19)], ir_version=9
    )


def run_ort(model: onnx.ModelProto, x: np.ndarray, factor: float, *, sizes: bool = False) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    if sizes:
        out = [1, 1, x.shape[2], int(np.floor(x.shape[3] * np.float32(factor)))]
        return session.run(None, {"x": x, "sizes": np.asarray(out, dtype=np.int64)})[0]
    return session.run(None, {"x": x, "scales": np.asarray([1, 1, 1, factor], dtype=np.float32)})[0]


def run_reference(model: onnx.ModelProto, x: np.ndarray, factor: float) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    scales = np.asarray([1, 1, 1, factor], dtype=np.float32)
    return np.asarray(ReferenceEvaluator(model).run(None, {"x": x, "scales": scales})[0], dtype=np.float32)


def differ(a: np.ndarray, b: np.ndarray, atol: float = 0.0) -> bool:
    return a.shape != b.shape or bool(np.max(np.abs(a.astype(np.float64) - b)) > atol)
