"""Every report that ran a model records what ran: versions, the plugin kernel (with the sha256 of
the real library file), the torch op behind a PyTorch reference, and the sha256 of each model
compared, which must be the hash of the file (or of the bytes the check ran, which save_model writes).

One builder (runtime.provenance.evidence_record) behind validate's JSON, JUnit properties and text,
and the passes' built-in check.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import golden
import onnx
import pytest

from graphsurgeon_tools import make_dynamic_scale, save_model, swap_plugin, validate
from graphsurgeon_tools.runtime import ort_library

REPO = Path(__file__).resolve().parents[2]


def _sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("evidence")
    static = golden.resize_model(mode="linear", shape=(1, 3, 16, 16))
    paths = {"static": folder / "static.onnx", "plugin": folder / "plugin.onnx", "dynamic": folder / "dynamic.onnx",
             "folder": folder}
    onnx.save(static, paths["static"])
    onnx.save(swap_plugin(static).model, paths["plugin"])
    nearest = golden.resize_model(mode="nearest", shape=(1, 3, 16, 16), coordinate_transformation_mode="asymmetric",
                                  nearest_mode="floor")  # PyTorch's nearest
    onnx.save(make_dynamic_scale(nearest).model, paths["dynamic"])
    (folder / "up_model.py").write_text(golden.TORCH_UP_MODULE)
    return paths


def _library() -> Path:
    found = ort_library.status()
    return Path(found.path) if found.available else Path("/nonexistent")


def _check_models(evidence: dict, candidate: Path, reference: Path) -> None:
    by_role = {entry["role"]: entry for entry in evidence["models"]}
    assert by_role["candidate"]["path"] == str(candidate) and by_role["candidate"]["sha256"] == _sha(candidate)
    assert by_role["reference"]["path"] == str(reference) and by_role["reference"]["sha256"] == _sha(reference)


def test_validate_report_names_the_kernel_that_ran_and_the_models_hashes(models: dict[str, Path]) -> None:
    report = validate(models["plugin"], models["static"])
    evidence = report.to_dict()["evidence"]
    assert evidence["versions"]["onnxruntime"] == metadata.version("onnxruntime")
    assert evidence["versions"]["onnx"] == metadata.version("onnx")
    _check_models(evidence, models["plugin"], models["static"])
    assert len(evidence["plugin_kernels"]) == 1
    kernel = evidence["plugin_kernels"][0]
    if _library().is_file():  # make setup built it: the session registers it, so it is what ran
        assert kernel == {"kind": "compiled-library", "path": str(_library()), "sha256": _sha(_library())}
        assert evidence["slow_fallback"] is False
    assert evidence["torch_op"] is None  # no PyTorch reference ran


def test_validate_of_a_model_without_plugin_nodes_names_no_plugin_kernel(models: dict[str, Path]) -> None:
    evidence = validate(models["dynamic"], "onnx-reference", factors=[2]).to_dict()["evidence"]
    assert evidence["plugin_kernels"] == []
    assert [entry["role"] for entry in evidence["models"]] == ["candidate"]  # onnx-reference runs the candidate


def test_json_junit_and_text_carry_the_same_evidence(models: dict[str, Path], run_cli) -> None:
    junit = models["folder"] / "report.xml"
    done = run_cli("validate", models["plugin"], "--reference", models["static"], "--json", "--junit", junit)
    assert done.code == 0, done.err
    evidence = json.loads(done.out)["evidence"]
    _check_models(evidence, models["plugin"], models["static"])
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert properties["evidence.model.candidate.sha256"] == _sha(models["plugin"])
    assert properties["evidence.model.reference.sha256"] == _sha(models["static"])
    assert properties["evidence.versions.onnxruntime"] == evidence["versions"]["onnxruntime"]
    assert properties["evidence.plugin_kernel.0.kind"] == evidence["plugin_kernels"][0]["kind"]
    assert properties["evidence.slow_fallback"] == str(evidence["slow_fallback"]).lower()
    text = run_cli("validate", models["plugin"], "--reference", models["static"]).out
    assert f"onnxruntime {evidence['versions']['onnxruntime']}" in text
    assert f"candidate {models['plugin']} sha256 {_sha(models['plugin'])[:16]}" in text
    if evidence["plugin_kernels"][0]["kind"] == "compiled-library":
        assert f"plugin kernel: compiled ONNX Runtime library {_library()}" in text


def test_slow_fallback_is_said_in_the_text_and_the_json(models: dict[str, Path]) -> None:
    environ = {**os.environ, "PYTHONPATH": str(REPO), "ONNXTOOL_RUNTIME_FALLBACK": "1"}
    environ.pop("ONNXTOOL_DEBUG", None)
    command = [sys.executable, "-c", "from graphsurgeon_tools.cli import main; main()", "validate",
               str(models["plugin"]), "--reference", str(models["static"])]
    text = subprocess.run(command, capture_output=True, text=True, env=environ, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "warning: DynamicTRTResize ran on the onnx.reference fallback" in text.stdout
    assert "ONNXTOOL_RUNTIME_FALLBACK" in text.stdout  # and why
    data = subprocess.run([*command, "--json"], capture_output=True, text=True, env=environ, timeout=120)
    evidence = json.loads(data.stdout)["evidence"]
    assert evidence["slow_fallback"] is True
    assert evidence["plugin_kernels"] == [{"kind": "onnxruntime-extensions", "backend": "onnx.reference", "slow": True,
                                           "reason": "forced by ONNXTOOL_RUNTIME_FALLBACK=1"}]


def test_a_pytorch_reference_names_the_torch_op_that_ran(models: dict[str, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.chdir(models["folder"])
    module = models["folder"] / "up_model.py"
    report = validate(models["dynamic"], f"python:{module}:build", factors=[2, 3])
    assert report.passed, report.summary_line()
    evidence = report.to_dict()["evidence"]
    from exporters.ops import library_path

    assert evidence["torch_op"]["path"] == str(library_path())
    assert evidence["torch_op"]["sha256"] == _sha(library_path())
    by_role = {entry["role"]: entry for entry in evidence["models"]}
    assert by_role["reference"]["path"] == str(module) and by_role["reference"]["sha256"] == _sha(module)


@pytest.mark.parametrize("rewrite", ["make_dynamic_scale", "swap_plugin"])
def test_built_in_check_hashes_are_those_of_the_saved_files(rewrite: str, tmp_path: Path) -> None:
    original = golden.resize_model(mode="linear")
    result = {"make_dynamic_scale": make_dynamic_scale, "swap_plugin": swap_plugin}[rewrite](original)
    evidence = result.check.to_dict()["evidence"]
    written = save_model(result.model, tmp_path / "out.onnx")
    by_role = {entry["role"]: entry for entry in evidence["models"]}
    assert by_role["candidate"]["sha256"] == _sha(written)
    assert by_role["reference"]["sha256"] == hashlib.sha256(original.SerializeToString()).hexdigest()
    assert evidence["versions"]["onnxruntime"] == metadata.version("onnxruntime")
    if rewrite == "swap_plugin":
        assert len(evidence["plugin_kernels"]) == 1
    else:
        assert evidence["plugin_kernels"] == []


def test_built_in_check_text_carries_the_evidence(tmp_path: Path, run_cli) -> None:
    source = tmp_path / "model.onnx"
    onnx.save(golden.resize_model(mode="linear"), source)
    out = tmp_path / "model.plugin.onnx"
    done = run_cli("swap-plugin", source, "-o", out)
    assert done.code == 0, done.err
    assert "evidence: onnxtool " in done.out and "plugin kernel: " in done.out
    assert f"candidate (in memory) sha256 {_sha(out)[:16]}" in done.out


def test_nested_recordings_each_see_what_ran_inside_them() -> None:
    from graphsurgeon_tools.runtime.provenance import note_kernel, recording

    with recording() as outer:
        with recording() as inner:  # equal contents (nothing yet): closing inner must not close outer
            pass
        note_kernel("compiled-library", path="x.so", sha256="0")
    assert inner.kernels == [] and outer.kernels == [{"kind": "compiled-library", "path": "x.so", "sha256": "0"}]
