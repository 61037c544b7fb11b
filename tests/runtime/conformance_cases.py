"""Cases and runners for the Resize conformance suite (test_conformance_*.py).

Three paths compute every case: ONNX Runtime's own Resize (the reference), the compiled
ORT library (a DynamicTRTResize node in a real ORT session made by make_session), and the
C++ torch op. Sessions take X of any rank and the scales as an input, so one session per
(dtype, attributes) serves every shape.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import ml_dtypes
import numpy as np
import onnxruntime as ort
import torch
from onnx import TensorProto, helper

from exporters import ops
from graphsurgeon_tools.runtime import make_session

DTYPES = ("float32", "float16", "bfloat16", "float64", "uint8", "int8", "int32")
ORT_DTYPES = ("float32", "float16", "uint8", "int8", "int32")  # ORT's CPU Resize has kernels for these
ELEM = {
    "float32": TensorProto.FLOAT,
    "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16,
    "float64": TensorProto.DOUBLE,
    "uint8": TensorProto.UINT8,
    "int8": TensorProto.INT8,
    "int32": TensorProto.INT32,
}
TORCH = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
    "uint8": torch.uint8,
    "int8": torch.int8,
    "int32": torch.int32,
}
CTMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
# The plugin node has neither roi nor antialias.
PLUGIN_CTMS = CTMS[:-1]

# (shape, scales) per number of spatial axes: exact half ties (20 -> 6 is onnxruntime#28291),
# fractional up- and downscales, a kept axis whose scale is not 1, and the N/C axes left alone.
SHAPES: dict[int, list[tuple[tuple[int, ...], tuple[float, ...]]]] = {
    1: [((1, 2, 20), (1, 1, 0.3)), ((2, 1, 7), (1, 1, 2.5)), ((1, 1, 23), (1, 1, 1.7))],
    2: [((1, 1, 1, 20), (1, 1, 1, 0.3)), ((1, 2, 9, 11), (1, 1, 1.7, 0.55)), ((1, 1, 6, 5), (1, 1, 2.0, 1.1))],
    3: [((1, 1, 4, 5, 6), (1, 1, 1.5, 0.6, 2.0)), ((1, 2, 3, 7, 4), (1, 1, 2.0, 1.3, 0.75))],
}


def numpy_dtype(dtype: str) -> Any:
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)


def sample(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype in ("uint8", "int8"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    if dtype == "int32":
        # past 2**24: ORT blends integers in float32, which rounds them
        return rng.integers(-(2**26), 2**26, size=shape).astype(np.int32)
    return (rng.standard_normal(shape) * 10).astype(np.float32).astype(numpy_dtype(dtype))


def roi_for(rank: int) -> np.ndarray:
    """A roi cropping into the spatial axes, starting below 0 so some outputs extrapolate."""
    starts = [0.0, 0.0] + [-0.1, 0.2, 0.05][: rank - 2]
    ends = [1.0, 1.0] + [0.9, 1.15, 0.8][: rank - 2]
    return np.array(starts + ends, np.float32)


def _model(op_type: str, dtype: str, attrs: dict[str, Any], domain: str = "") -> bytes:
    x = helper.make_tensor_value_info("X", ELEM[dtype], None)
    s = helper.make_tensor_value_info("S", TensorProto.FLOAT, [None])
    y = helper.make_tensor_value_info("Y", ELEM[dtype], None)
    inputs = [x, s]
    if op_type == "Resize":
        names = (
            ["X", "R", "S"] if attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize" else ["X", "", "S"]
        )
        if names[1]:
            inputs.append(helper.make_tensor_value_info("R", TensorProto.FLOAT, [None]))
    else:
        names = ["X", "S"]
    node = helper.make_node(op_type, names, ["Y"], domain=domain, **attrs)
    opsets = [helper.make_opsetid("", 19)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(helper.make_graph([node], "resize", inputs, [y]), opset_imports=opsets)
    model.ir_version = 9
    return model


def _options() -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 4
    return options


@cache
def ort_session(dtype: str, attrs: tuple[tuple[str, Any], ...]) -> ort.InferenceSession:
    return ort.InferenceSession(
        _model("Resize", dtype, dict(attrs)).SerializeToString(), _options(), providers=["CPUExecutionProvider"]
    )


@cache
def plugin_session(dtype: str, attrs: tuple[tuple[str, Any], ...]) -> ort.InferenceSession:
    return make_session(_model("DynamicTRTResize", dtype, dict(attrs), domain="trt.plugins"), sess_options=_options())


def run_ort(dtype: str, attrs: dict[str, Any], x: np.ndarray, scales, roi: np.ndarray | None = None) -> np.ndarray:
    feeds = {"X": x, "S": np.asarray(scales, np.float32)}
    if roi is not None:
        feeds["R"] = roi
    return ort_session(dtype, tuple(sorted(attrs.items()))).run(None, feeds)[0]


def run_plugin(dtype: str, attrs: dict[str, Any], x: np.ndarray, scales) -> np.ndarray:
    session = plugin_session(dtype, tuple(sorted(attrs.items())))
    scales = np.asarray(scales, np.float32)
    if dtype != "bfloat16":
        return session.run(None, {"X": x, "S": scales})[0]
    # ORT's Python layer has no numpy type for bfloat16: bind its bits as uint16 buffers.
    shape = [int(np.float32(n) * s) for n, s in zip(x.shape, scales)]
    out = np.empty(shape, np.uint16)
    binding = session.io_binding()
    binding.bind_ortvalue_input(
        "X",
        ort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.ascontiguousarray(x).view(np.uint16), TensorProto.BFLOAT16),
    )
    binding.bind_cpu_input("S", scales)
    binding.bind_ortvalue_output("Y", ort.OrtValue.ortvalue_from_numpy_with_onnx_type(out, TensorProto.BFLOAT16))
    session.run_with_iobinding(binding)
    return out.view(ml_dtypes.bfloat16)


def run_op(dtype: str, attrs: dict[str, Any], x: np.ndarray, scales, roi: np.ndarray | None = None) -> np.ndarray:
    kwargs = {k: (bool(v) if k in ("exclude_outside", "antialias") else v) for k, v in attrs.items()}
    xt = torch.from_numpy(x.astype(np.float32)).to(TORCH[dtype]) if dtype == "bfloat16" else torch.from_numpy(x)
    y = ops.resize(
        xt, torch.tensor(scales, dtype=torch.float32), roi=None if roi is None else torch.from_numpy(roi), **kwargs
    )
    return y.to(torch.float32).numpy().astype(numpy_dtype(dtype)) if dtype == "bfloat16" else y.numpy()


def ulp_bound(dtype: str, reference: np.ndarray, x: np.ndarray, ulps: float) -> float:
    """``ulps`` units in the last place of ``dtype`` at the larger of the input's and the output's magnitude."""
    eps = float(ml_dtypes.finfo(numpy_dtype(dtype)).eps)
    scale = max(float(np.max(np.abs(x.astype(np.float64)))), float(np.max(np.abs(reference.astype(np.float64)))), 1.0)
    return ulps * eps * scale


def as_f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)
