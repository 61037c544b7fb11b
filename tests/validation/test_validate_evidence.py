"""validate never passes on nothing: empty outputs, all-NaN outputs and NaN inputs (the command's report of it:
tests/cli/test_validate_command.py)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hostile import models
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.errors import OnnxToolError
from graphsurgeon_tools.validation import validate
from graphsurgeon_tools.validation.evidence import refuse_nan_input, vacuous_reason


def _model(nodes, out_shape, inits=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        list(inits),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _i64(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def test_empty_outputs_fail_the_point(tmp_path) -> None:
    model = _model(
        [helper.make_node("Slice", ["x", "s", "e", "a"], ["y"])],
        [1, 0, 4, 4],
        [_i64("s", [0]), _i64("e", [0]), _i64("a", [1])],
    )
    path = models.write(model, tmp_path / "empty.onnx")
    report = validate(path, path)
    (point,) = report.factors
    assert point.status == "failed" and point.reason == "nothing compared: every output is empty (0 elements: 'y')"
    assert not report.passed


def test_all_nan_outputs_fail_the_point(tmp_path) -> None:
    path = models.write(models.all_nan_model(), tmp_path / "nan.onnx")
    (point,) = validate(path, path).factors
    assert point.status == "failed" and "output 'y' is NaN in every element of both models" in point.reason


def test_nan_data_input_is_refused_in_one_line(tmp_path) -> None:
    path = models.write(models.resize_model(), tmp_path / "m.onnx")
    npy = tmp_path / "x.npy"
    np.save(npy, np.where(np.arange(192).reshape(1, 3, 8, 8) % 2, np.nan, 1.0).astype(np.float32))
    with pytest.raises(OnnxToolError, match=r"input 'x' from .*x\.npy: 96 of 192 values are NaN") as caught:
        validate(path, path, inputs={"x": str(npy)})
    assert caught.value.exit_code == 3


def test_the_rules() -> None:
    finite = {"y": np.ones(3, np.float32)}
    assert vacuous_reason(finite, finite) is None
    assert vacuous_reason({}, {}) == "nothing compared: the reference gave no outputs"
    partly = {"y": np.array([1.0, np.nan], np.float32)}
    assert vacuous_reason(partly, partly) is None  # a NaN the model makes on purpose is not "nothing"
    nan = {"y": np.full(2, np.nan)}
    assert vacuous_reason(nan, finite).endswith("of the reference")
    assert vacuous_reason({"a": np.zeros(0), "b": np.ones(1)}, {}) is None  # one output has values
    refuse_nan_input("x", np.ones(3, np.float32), "array")  # finite: fine
    refuse_nan_input("ids", np.array([1, 2], np.int64), "array")  # integers cannot be NaN
