"""Small, valid, deterministic models that the hostile cases are made from.

Everything is built with ``onnx.helper`` and written with ``SerializeToString`` (never
``onnx.save``, which would rewrite external-data references behind our back). Each
model passes ``onnx.checker.check_model(full_check=True)`` and runs in ONNX Runtime,
so a command that fails on a derived case fails because of what the case broke.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
X_SHAPE = (1, 3, 8, 8)
WEIGHT_SHAPE = (16, 16)  # multiplies the x2 Resize output, so external-data cases have a real tensor


def _symbolic(shape: Sequence[int]) -> list[str]:
    """Graph outputs need a shape for the checker; symbolic dims promise nothing about size."""
    return [f"y_d{axis}" for axis in range(len(shape))]


def scales_tensor(values: Sequence[float], name: str = "scales", dtype: int = FLOAT) -> TensorProto:
    """A 1-D tensor; any values at all (NaN, zero, negative), which is what the bad cases need."""
    array = np.asarray(values, dtype=helper.tensor_dtype_to_np_dtype(dtype))
    return numpy_helper.from_array(array, name)


def resize_model(
    scales: Optional[Sequence[float]] = (1.0, 1.0, 2.0, 2.0),
    *,
    opset: int = 13,
    x_shape: Sequence[int] = X_SHAPE,
    mode: str = "nearest",
    source: str = "initializer",
    sizes: Optional[Sequence[int]] = None,
    roi: Optional[Sequence[float]] = None,
    scales_dtype: int = FLOAT,
    scales_dims: Optional[Sequence[int]] = None,
    y_shape: Optional[Sequence[int]] = None,
) -> onnx.ModelProto:
    """X -> Resize -> Y with the scales as an initializer or a Constant node (``source``).

    ``scales=None`` leaves the scales slot empty; ``sizes``/``roi`` fill theirs. The output
    dims are symbolic unless ``y_shape`` is given, so nonsense values do not also produce a
    shape contradiction the case did not ask for.
    """
    nodes: list[onnx.NodeProto] = []
    inits: list[TensorProto] = []
    slots = {"roi": "", "scales": "", "sizes": ""}
    values = {}
    if roi is not None:
        values["roi"] = scales_tensor(roi, "roi")
    if scales is not None:
        tensor = scales_tensor(scales, "scales", scales_dtype)
        if scales_dims is not None:
            tensor.dims[:] = list(scales_dims)
        values["scales"] = tensor
    if sizes is not None:
        values["sizes"] = numpy_helper.from_array(np.asarray(sizes, dtype=np.int64), "sizes")
    for slot, tensor in values.items():
        slots[slot] = tensor.name
        if source == "constant":
            nodes.append(helper.make_node("Constant", [], [tensor.name], name=f"const_{slot}", value=tensor))
        else:
            inits.append(tensor)
    if opset in (11, 12):
        # roi and scales are required there: exporters fill the unused ones with empty tensors.
        for slot in ("roi", "scales"):
            if slot not in values:
                empty = numpy_helper.from_array(np.zeros((0,), dtype=np.float32), f"{slot}_empty")
                inits.append(empty)
                slots[slot] = empty.name
    if opset == 10:
        inputs = ["x", slots["scales"]]
    else:
        inputs = ["x", slots["roi"], slots["scales"], slots["sizes"]]
        while inputs[-1] == "":  # trailing optional inputs are dropped, as exporters do
            inputs.pop()
    nodes.append(helper.make_node("Resize", inputs, ["y"], name="up", mode=mode))
    graph = helper.make_graph(
        nodes,
        "resize",
        [helper.make_tensor_value_info("x", FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", FLOAT, list(y_shape) if y_shape is not None else _symbolic(x_shape))],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="hostile-corpus")


def upsample7_model(scales: Sequence[float], x_shape: Sequence[int] = X_SHAPE) -> onnx.ModelProto:
    """Upsample-7: the scales are an attribute (a list of floats), not a tensor."""
    node = helper.make_node("Upsample", ["x"], ["y"], name="up", mode="nearest", scales=[float(s) for s in scales])
    graph = helper.make_graph(
        [node],
        "upsample7",
        [helper.make_tensor_value_info("x", FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", FLOAT, _symbolic(x_shape))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)], producer_name="hostile-corpus")


def weighted_model(opset: int = 13) -> onnx.ModelProto:
    """X -> Resize(x2, nearest) -> Mul(w) -> Y, with a real 16x16 weight (1 KiB) to put in external data."""
    model = resize_model(opset=opset)
    weight = numpy_helper.from_array(
        np.linspace(-1.0, 1.0, num=int(np.prod(WEIGHT_SHAPE)), dtype=np.float32).reshape(WEIGHT_SHAPE), "w"
    )
    model.graph.initializer.append(weight)
    model.graph.node[-1].output[0] = "up_out"
    model.graph.node.append(helper.make_node("Mul", ["up_out", "w"], ["y"], name="scale_by_w"))
    return model


def all_nan_model() -> onnx.ModelProto:
    """``y = x * NaN`` on float[1,3,4,4], opset 13: every output element is NaN whatever the input."""
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "n"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor("n", FLOAT, [], [float("nan")])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def externalize(
    model: onnx.ModelProto, tensor_name: str, location: str, *, offset: int = 0, length: Optional[int] = None
) -> bytes:
    """Mark one initializer as external at ``location`` (written verbatim) and return its raw bytes.

    The caller decides where (and whether) the bytes go: that is the point of the bad cases.
    """
    for tensor in model.graph.initializer:
        if tensor.name == tensor_name:
            raw = numpy_helper.to_array(tensor).tobytes()
            tensor.ClearField("raw_data")
            tensor.ClearField("float_data")
            tensor.data_location = TensorProto.EXTERNAL
            entries = [
                ("location", location),
                ("offset", str(offset)),
                ("length", str(len(raw) if length is None else length)),
            ]
            for key, value in entries:
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
            return raw
    raise KeyError(tensor_name)


def write(model: onnx.ModelProto, path: Path) -> Path:
    """Serialize verbatim (no checker, no external-data handling) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path
