"""Every report that ran a model records what ran: versions, the plugin kernel (with the sha256 of
the real library file), the torch op behind a PyTorch reference, and the sha256 of each model
compared, which must be the hash of the file (or of the bytes the check ran, which save_model writes).

One builder (runtime.provenance.evidence_record) behind validate's JSON, JUnit properties and text,
and the passes' built-in check. The models and helpers: evidence_models.py; what the commands print
(JSON, JUnit, text, the slow-fallback warning): tests/cli/test_evidence_command.py.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

import golden
import pytest
from validation.evidence_models import check_models, compiled_library, models, sha  # noqa: F401 - models: fixture

from graphsurgeon_tools import make_dynamic_scale, save_model, swap_plugin, validate


def test_validate_report_names_the_kernel_that_ran_and_the_models_hashes(models: dict[str, Path]) -> None:
    report = validate(models["plugin"], models["static"])
    evidence = report.to_dict()["evidence"]
    assert evidence["versions"]["onnxruntime"] == metadata.version("onnxruntime")
    assert evidence["versions"]["onnx"] == metadata.version("onnx")
    check_models(evidence, models["plugin"], models["static"])
    assert len(evidence["plugin_kernels"]) == 1
    kernel = evidence["plugin_kernels"][0]
    if compiled_library().is_file():  # make setup built it: the session registers it, so it is what ran
        assert kernel == {
            "kind": "compiled-library",
            "path": str(compiled_library()),
            "sha256": sha(compiled_library()),
        }
        assert evidence["slow_fallback"] is False
    assert evidence["torch_op"] is None  # no PyTorch reference ran


def test_validate_of_a_model_without_plugin_nodes_names_no_plugin_kernel(models: dict[str, Path]) -> None:
    evidence = validate(models["dynamic"], "onnx-reference", factors=[2]).to_dict()["evidence"]
    assert evidence["plugin_kernels"] == []
    assert [entry["role"] for entry in evidence["models"]] == ["candidate"]  # onnx-reference runs the candidate


def test_a_pytorch_reference_names_the_torch_op_that_ran(
    models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    monkeypatch.chdir(models["folder"])
    module = models["folder"] / "up_model.py"
    report = validate(models["dynamic"], f"python:{module}:build", factors=[2, 3])
    assert report.passed, report.summary_line()
    evidence = report.to_dict()["evidence"]
    from exporters.ops import library_path

    assert evidence["torch_op"]["path"] == str(library_path())
    assert evidence["torch_op"]["sha256"] == sha(library_path())
    by_role = {entry["role"]: entry for entry in evidence["models"]}
    assert by_role["reference"]["path"] == str(module) and by_role["reference"]["sha256"] == sha(module)


@pytest.mark.parametrize("rewrite", ["make_dynamic_scale", "swap_plugin"])
def test_built_in_check_hashes_are_those_of_the_saved_files(rewrite: str, tmp_path: Path) -> None:
    original = golden.resize_model(mode="linear")
    result = {"make_dynamic_scale": make_dynamic_scale, "swap_plugin": swap_plugin}[rewrite](original)
    evidence = result.check.to_dict()["evidence"]
    written = save_model(result.model, tmp_path / "out.onnx")
    by_role = {entry["role"]: entry for entry in evidence["models"]}
    assert by_role["candidate"]["sha256"] == sha(written)
    assert by_role["reference"]["sha256"] == hashlib.sha256(original.SerializeToString()).hexdigest()
    assert evidence["versions"]["onnxruntime"] == metadata.version("onnxruntime")
    if rewrite == "swap_plugin":
        assert len(evidence["plugin_kernels"]) == 1
    else:
        assert evidence["plugin_kernels"] == []


def test_nested_recordings_each_see_what_ran_inside_them() -> None:
    from graphsurgeon_tools.runtime.provenance import note_kernel, recording

    with recording() as outer:
        with recording() as inner:  # equal contents (nothing yet): closing inner must not close outer
            pass
        note_kernel("compiled-library", path="x.so", sha256="0")
    assert inner.kernels == [] and outer.kernels == [{"kind": "compiled-library", "path": "x.so", "sha256": "0"}]
