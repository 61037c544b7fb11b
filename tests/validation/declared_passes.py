"""Two small passes written on the public pass contract only (``passes.base.Pass``, ``PassResult.declared_inputs``,
``core.declared_inputs.DeclaredInput``), for the tests that show a new pass is drivable by validate without
any change in validation/ (tests/validation/test_declared_inputs.py, the API; tests/cli/
test_declared_inputs_command.py, the command):

* ``DynamicMul``: each Mul's constant multiplier becomes a graph input a factor drives (layout ``factor``);
* ``DynamicPad``: each Pad's constant amounts become a graph input no factor drives (layout ``value``);
* ``original_model()``: Conv -> Mul(MULTIPLIER) -> Pad(PADS, reflect) -> Relu;
* ``files`` (module fixture): the original and both passes' output (the record merges), saved.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.core.declared_inputs import DeclaredInput
from graphsurgeon_tools.io import save_model
from graphsurgeon_tools.passes.base import Pass, PassResult

MULTIPLIER = np.float32(0.625)  # not 1, 2, 3, 4: a factor sweep that ignored it could not pass by chance


PADS = np.asarray([0, 0, 1, 2, 0, 0, 2, 1], dtype=np.int64)


@dataclass(frozen=True)
class ConstantToInputOptions:
    check: bool = False


class _ConstantToInput(Pass):
    """Each ``op_type`` node's constant input ``slot`` becomes a graph input of the same name, declared."""

    Options = ConstantToInputOptions
    op_type = ""
    slot = 1
    layout = "value"

    def call(self, model: onnx.ModelProto) -> PassResult:
        out = onnx.ModelProto()
        out.CopyFrom(model)
        result = PassResult(model=out)
        constants = {t.name: t for t in out.graph.initializer}
        for node in out.graph.node:
            if node.op_type != self.op_type or node.input[self.slot] not in constants:
                continue
            tensor = constants.pop(node.input[self.slot])
            value = numpy_helper.to_array(tensor)
            out.graph.initializer.remove(tensor)
            out.graph.input.append(helper.make_tensor_value_info(tensor.name, tensor.data_type, list(value.shape)))
            result.rewritten.append(node.name)
            result.new_inputs.append({"name": tensor.name, "dtype": value.dtype.name, "shape": list(value.shape)})
            result.declared_inputs.append(
                DeclaredInput(
                    name=tensor.name,
                    drives=(node.name,),
                    dtype=value.dtype.name,
                    shape=tuple(value.shape),
                    layout=self.layout,
                    original=tuple(value.ravel().tolist()),
                    by=self.name,
                )
            )
        return result


class DynamicMul(_ConstantToInput):
    name, op_type, layout = "make-dynamic-mul", "Mul", "factor"


class DynamicPad(_ConstantToInput):
    name, op_type, layout = "make-dynamic-pad", "Pad", "value"


def original_model() -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    weights = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c", "multiplier"], ["m"], name="mul"),
        helper.make_node("Pad", ["m", "pads"], ["p"], name="pad", mode="reflect"),
        helper.make_node("Relu", ["p"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes,
        "declared",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 11, 11])],
        initializer=[
            numpy_helper.from_array(weights, "w"),
            numpy_helper.from_array(np.asarray([MULTIPLIER]), "multiplier"),
            numpy_helper.from_array(PADS, "pads"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("declared")
    original = original_model()
    candidate = DynamicPad()(DynamicMul()(original).model).model  # two passes: the record merges
    paths = {"original": folder / "original.onnx", "candidate": folder / "candidate.onnx"}
    save_model(original, paths["original"])
    save_model(candidate, paths["candidate"])
    return paths
