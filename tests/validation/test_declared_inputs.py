"""A new pass is drivable by validate without any change in validation/: it declares its new inputs.

Two small passes are defined HERE, on the public pass contract only (``passes.base.Pass``,
``PassResult.declared_inputs``, ``core.declared_inputs.DeclaredInput``): one turns each Mul's
constant multiplier into a graph input a factor drives (layout ``factor``), one turns each Pad's
constant amounts into a graph input no factor drives (layout ``value``). The contract records the
declarations in the written model, so ``validate`` on the saved FILE (API and CLI) feeds them: the
originals for the comparison with the model the passes were given, the requested factors where the
declaration says how. Without the declarations the same file fails validation (the new inputs are
then data inputs, fed random values), and a declaration with a wrong original fails it too: the
declared value is what is fed, and the comparison can fail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools import validate
from graphsurgeon_tools.core.declared_inputs import (
    DECLARED_INPUTS_KEY,
    DeclaredInput,
    read_declared_inputs,
    record_declared_inputs,
)
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
            result.declared_inputs.append(DeclaredInput(
                name=tensor.name, drives=(node.name,), dtype=value.dtype.name, shape=tuple(value.shape),
                layout=self.layout, original=tuple(value.ravel().tolist()), by=self.name))
        return result


class DynamicMul(_ConstantToInput):
    name, op_type, layout = "make-dynamic-mul", "Mul", "factor"


class DynamicPad(_ConstantToInput):
    name, op_type, layout = "make-dynamic-pad", "Pad", "value"


def _original() -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    weights = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c", "multiplier"], ["m"], name="mul"),
        helper.make_node("Pad", ["m", "pads"], ["p"], name="pad", mode="reflect"),
        helper.make_node("Relu", ["p"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "declared", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 11, 11])],
        initializer=[numpy_helper.from_array(weights, "w"),
                     numpy_helper.from_array(np.asarray([MULTIPLIER]), "multiplier"),
                     numpy_helper.from_array(PADS, "pads")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("declared")
    original = _original()
    candidate = DynamicPad()(DynamicMul()(original).model).model  # two passes: the record merges
    paths = {"original": folder / "original.onnx", "candidate": folder / "candidate.onnx"}
    save_model(original, paths["original"])
    save_model(candidate, paths["candidate"])
    return paths


def test_the_contract_records_each_pass_declarations_in_the_written_model(files: dict[str, Path]) -> None:
    model = onnx.load(files["candidate"])
    declared = read_declared_inputs(model)
    assert set(declared) == {"multiplier", "pads"}
    assert declared["multiplier"] == DeclaredInput("multiplier", ("mul",), "float32", (1,), "factor",
                                                   (float(MULTIPLIER),), by="make-dynamic-mul")
    assert declared["pads"].layout == "value" and declared["pads"].original == tuple(PADS.tolist())
    (raw,) = [p.value for p in model.metadata_props if p.key == DECLARED_INPUTS_KEY]
    assert json.loads(raw)["schema"] == "onnxtool.declared_inputs/1"
    result = DynamicMul()(_original())
    assert result.to_dict()["declared_inputs"][0]["original"] == [float(MULTIPLIER)]


def test_validate_on_the_file_feeds_the_declared_originals(files: dict[str, Path]) -> None:
    report = validate(files["candidate"], files["original"])
    data = report.to_dict()
    assert report.passed, data
    (point,) = data["factors"]
    assert point["factor"] == "original" and point["status"] == "passed"
    assert point["scale_feeds"] == {"multiplier": [float(MULTIPLIER)], "pads": PADS.tolist()}
    assert any(o["kind"] == "output" and not o.get("vacuous") for o in point["outputs"])
    assert data["candidate_ports"]["fixed_inputs"] == ["pads"]
    assert [s["name"] for s in data["candidate_ports"]["scale_inputs"]] == ["multiplier"]


def test_requested_factors_drive_a_declared_factor_input(files: dict[str, Path]) -> None:
    report = validate(files["candidate"], "onnx-reference", factors=[2, 3])
    points = {p["factor"]: p for p in report.to_dict()["factors"]}
    assert list(points) == [2.0, 3.0] and report.passed
    for factor, point in points.items():
        assert point["scale_feeds"] == {"multiplier": [factor], "pads": PADS.tolist()}
    # Against the model the passes were given, a factor it does not bake is a real difference.
    assert not validate(files["candidate"], files["original"], factors=[2]).passed
    assert validate(files["candidate"], files["original"], factors=[float(MULTIPLIER)]).passed


def test_a_user_value_for_a_declared_fixed_input_wins(files: dict[str, Path]) -> None:
    other = np.zeros(8, dtype=np.int64)
    report = validate(files["candidate"], "onnx-reference", inputs={"pads": other}, factors=[2])
    assert report.passed and report.to_dict()["factors"][0]["scale_feeds"]["pads"] == other.tolist()


def test_without_declarations_or_with_a_wrong_original_the_comparison_fails(files: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    bare = onnx.load(files["candidate"])
    del bare.metadata_props[:]
    data = validate(bare, files["original"]).to_dict()
    assert {d["name"] for d in data["candidate_ports"]["data_inputs"]} == {"x", "multiplier", "pads"}
    assert not data["passed"]
    wrong = onnx.load(files["candidate"])
    declared = read_declared_inputs(wrong)
    record_declared_inputs(wrong, [DeclaredInput(**{**vars(declared["multiplier"]), "original": (0.5,)})])
    assert not validate(wrong, files["original"]).passed
    mistyped = onnx.load(files["candidate"])  # a declaration of another element type is not trusted
    record_declared_inputs(mistyped, [DeclaredInput(**{**vars(declared["pads"]), "dtype": "int32"})])
    assert "pads" in {d["name"] for d in validate(mistyped, "onnx-reference").to_dict()["candidate_ports"][
        "data_inputs"]}


def test_the_cli_validates_the_file_through_the_declarations(files: dict[str, Path], run_cli, tmp_path: Path) -> None:
    run = run_cli("validate", files["candidate"], "--reference", files["original"], "--json")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert [p["factor"] for p in report["factors"]] == ["original"] and report["passed"]
    wrong = onnx.load(files["candidate"])
    declared = read_declared_inputs(wrong)
    record_declared_inputs(wrong, [DeclaredInput(**{**vars(declared["pads"]), "original": (0,) * 8})])
    save_model(wrong, tmp_path / "wrong.onnx")
    run = run_cli("validate", tmp_path / "wrong.onnx", "--reference", files["original"], "--json")
    assert run.code == 1 and not json.loads(run.out)["passed"]


def test_an_unreadable_or_foreign_record_is_not_trusted() -> None:
    model = _original()
    model.metadata_props.add(key=DECLARED_INPUTS_KEY, value="{not json")
    assert read_declared_inputs(model) == {}
    del model.metadata_props[:]
    model.metadata_props.add(key=DECLARED_INPUTS_KEY, value=json.dumps({"schema": "other/9", "inputs": []}))
    assert read_declared_inputs(model) == {}
    with pytest.raises(ValueError, match="layout"):
        DeclaredInput("a", (), "float32", (1,), layout="sideways")
