"""A new pass is drivable by validate without any change in validation/: it declares its new inputs.

Two small passes are defined in the tests (declared_passes.py beside this file), on the public pass contract
only (``passes.base.Pass``, ``PassResult.declared_inputs``, ``core.declared_inputs.DeclaredInput``): one turns each Mul's
constant multiplier into a graph input a factor drives (layout ``factor``), one turns each Pad's
constant amounts into a graph input no factor drives (layout ``value``). The contract records the
declarations in the written model, so ``validate`` on the saved FILE (the API here; the CLI in
tests/cli/test_declared_inputs_command.py) feeds them: the
originals for the comparison with the model the passes were given, the requested factors where the
declaration says how. Without the declarations the same file fails validation (the new inputs are
then data inputs, fed random values), and a declaration with a wrong original fails it too: the
declared value is what is fed, and the comparison can fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import golden
import numpy as np
import onnx
import pytest
from validation.declared_passes import (  # noqa: F401 - files: fixture
    MULTIPLIER,
    PADS,
    DynamicMul,
    files,
    original_model,
)

from graphsurgeon_tools import make_dynamic_scale, swap_plugin, validate
from graphsurgeon_tools.core.declared_inputs import (
    DECLARED_INPUTS_KEY,
    DeclaredInput,
    read_declared_inputs,
    record_declared_inputs,
)
from graphsurgeon_tools.validation.ports import model_ports


def test_the_contract_records_each_pass_declarations_in_the_written_model(files: dict[str, Path]) -> None:
    model = onnx.load(files["candidate"])
    declared = read_declared_inputs(model)
    assert set(declared) == {"multiplier", "pads"}
    assert declared["multiplier"] == DeclaredInput(
        "multiplier", ("mul",), "float32", (1,), "factor", (float(MULTIPLIER),), by="make-dynamic-mul"
    )
    assert declared["pads"].layout == "value" and declared["pads"].original == tuple(PADS.tolist())
    (raw,) = [p.value for p in model.metadata_props if p.key == DECLARED_INPUTS_KEY]
    assert json.loads(raw)["schema"] == "onnxtool.declared_inputs/1"
    result = DynamicMul()(original_model())
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


def test_without_declarations_or_with_a_wrong_original_the_comparison_fails(
    files: dict[str, Path], tmp_path: Path
) -> None:
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
    assert "pads" in {
        d["name"] for d in validate(mistyped, "onnx-reference").to_dict()["candidate_ports"]["data_inputs"]
    }


def test_an_unreadable_or_foreign_record_is_not_trusted() -> None:
    model = original_model()
    model.metadata_props.add(key=DECLARED_INPUTS_KEY, value="{not json")
    assert read_declared_inputs(model) == {}
    del model.metadata_props[:]
    model.metadata_props.add(key=DECLARED_INPUTS_KEY, value=json.dumps({"schema": "other/9", "inputs": []}))
    assert read_declared_inputs(model) == {}
    with pytest.raises(ValueError, match="layout"):
        DeclaredInput("a", (), "float32", (1,), layout="sideways")


def _undeclared(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy without the declarations: what validate sees of a model another tool wrote."""
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    for prop in [p for p in bare.metadata_props if p.key == DECLARED_INPUTS_KEY]:
        bare.metadata_props.remove(prop)
    return bare


def _sorted_ports(model: onnx.ModelProto) -> list[tuple]:
    ports = model_ports(model)
    return sorted((s.name, s.layout, s.length, str(s.dtype), s.nodes) for s in ports.scale_inputs)


CASES = [
    ("resize-13", lambda: golden.resize_model(13), {}),
    ("resize-18 axes", lambda: golden.resize_model(18, axes=[2, 3], scales=(2.0, 2.0)), {}),
    ("fpn factor", lambda: golden.fpn_model(13, symbolic=False), {"layout": "factor"}),
    ("fpn sizes", lambda: golden.fpn_model(13, symbolic=False), {"layout": "sizes"}),
    ("fpn pair", lambda: golden.fpn_model(13, symbolic=False), {"factor": True}),
    ("upsample-9", lambda: golden.upsample_model(9), {}),
    ("1 spatial axis", lambda: golden.spatial_resize_model(1), {}),
    ("3 spatial axes factor", lambda: golden.spatial_resize_model(3), {"layout": "factor"}),
    ("sizes-driven", lambda: golden.sizes_model(13), {"from_sizes": True}),
]
SWAPS = [
    ("resize-13 scales", lambda: golden.resize_model(13), {}),
    ("fpn scales", lambda: golden.fpn_model(13, symbolic=False), {}),
    ("fpn sizes", lambda: golden.fpn_model(13, symbolic=False), {"signature": "sizes"}),
]


@pytest.mark.parametrize("build, keywords", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_make_dynamic_scale_declares_what_the_graph_walk_finds(build, keywords) -> None:
    """make-dynamic-scale declares its inputs by the one layout rule: validate reads the same ports from the
    declarations as from the graph walk it still does for models nobody declared."""
    model = make_dynamic_scale(build(), check=False, **keywords).model
    declared = read_declared_inputs(model)
    assert declared and {d.by for d in declared.values()} == {"make-dynamic-scale"}
    assert _sorted_ports(model) == _sorted_ports(_undeclared(model))


@pytest.mark.parametrize("build, keywords", [c[1:] for c in SWAPS], ids=[c[0] for c in SWAPS])
def test_swap_plugin_declares_the_inputs_it_makes_dynamic_as_the_graph_walk_finds_them(build, keywords) -> None:
    model = swap_plugin(build(), check=False, **keywords).model
    declared = read_declared_inputs(model)
    assert declared and all(d.original for d in declared.values())
    assert _sorted_ports(model) == _sorted_ports(_undeclared(model))
    assert validate(model, "onnx-reference").passed
