"""What the evidence tests share (tests/validation/test_evidence.py, the API; tests/cli/test_evidence_command.py,
the command's JSON, JUnit and text):

* ``models`` (module fixture): a static Resize model, its plugin swap and a make-dynamic-scale rewrite of its
  nearest twin, as files in one folder (keys static, plugin, dynamic, folder), with ``up_model.py`` (a
  python: reference) beside them;
* ``sha(path)``, ``compiled_library()`` (the ONNX Runtime library's path, or a path that does not exist) and
  ``check_models(evidence, candidate, reference)`` (both models recorded with their path and sha256).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import golden
import onnx
import pytest

from graphsurgeon_tools import make_dynamic_scale, swap_plugin
from graphsurgeon_tools.runtime import ort_library


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("evidence")
    static = golden.resize_model(mode="linear", shape=(1, 3, 16, 16))
    paths = {
        "static": folder / "static.onnx",
        "plugin": folder / "plugin.onnx",
        "dynamic": folder / "dynamic.onnx",
        "folder": folder,
    }
    onnx.save(static, paths["static"])
    onnx.save(swap_plugin(static).model, paths["plugin"])
    nearest = golden.resize_model(
        mode="nearest", shape=(1, 3, 16, 16), coordinate_transformation_mode="asymmetric", nearest_mode="floor"
    )  # PyTorch's nearest
    onnx.save(make_dynamic_scale(nearest).model, paths["dynamic"])
    (folder / "up_model.py").write_text(golden.TORCH_UP_MODULE)
    return paths


def compiled_library() -> Path:
    found = ort_library.status()
    return Path(found.path) if found.available else Path("/nonexistent")


def check_models(evidence: dict, candidate: Path, reference: Path) -> None:
    by_role = {entry["role"]: entry for entry in evidence["models"]}
    assert by_role["candidate"]["path"] == str(candidate) and by_role["candidate"]["sha256"] == sha(candidate)
    assert by_role["reference"]["path"] == str(reference) and by_role["reference"]["sha256"] == sha(reference)
