"""`onnxtool validate` on a file written by passes defined in the tests (tests/validation/declared_passes.py):
it feeds the declared new inputs their recorded originals (exit 0), and a wrong recorded original fails
the comparison (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
from validation.declared_passes import files  # noqa: F401 - the fixture

from graphsurgeon_tools.core.declared_inputs import DeclaredInput, read_declared_inputs, record_declared_inputs
from graphsurgeon_tools.io import save_model


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
