"""`onnxtool doctor`: versions, the kernels that would run (with the hashes of the real files), where
things are built, one fix per missing piece; and it never builds anything."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from graphsurgeon_tools.runtime import ort_library
from graphsurgeon_tools.runtime.environment import doctor

REPO = Path(__file__).resolve().parents[2]
NO_TORCH = Path(__file__).resolve().parent / "no_torch"


def _sha(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _onnxtool(*args: str, no_torch: bool = False, **env: str) -> subprocess.CompletedProcess:
    paths = [str(NO_TORCH)] if no_torch else []
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(REPO)]), **env}
    return subprocess.run(
        [sys.executable, "-c", "from graphsurgeon_tools.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
    )


def test_doctor_json_names_versions_and_the_real_files_with_their_hashes(run_cli) -> None:
    done = run_cli("doctor", "--json")
    assert done.code == 0, done.err
    report = json.loads(done.out)
    versions = report["versions"]
    for name in ("onnx", "onnxruntime", "numpy", "onnxsim"):
        assert versions[name] == metadata.version(name)
    import graphsurgeon_tools

    assert versions["onnxtool"] == graphsurgeon_tools.__version__
    assert versions["torch"] == metadata.version("torch")
    runs = report["plugin_kernel"]["runs"]
    found = ort_library.status()
    library = found.path
    if found.available:  # built by make setup: the compiled library runs the plugin node
        assert runs["kind"] == "compiled-library"
        assert runs["path"] == str(library) and runs["sha256"] == _sha(str(library))
    op = report["torch_op"]
    assert op["state"] in ("compiled", "built on first use")
    if op["state"] == "compiled":
        assert op["sha256"] == _sha(op["path"])
    assert report["locations"]["torch_op_build_dir"]
    assert report["ok"] is (not report["missing"])


def test_doctor_text_says_what_runs(run_cli) -> None:
    done = run_cli("doctor")
    assert done.code == 0, done.err
    assert done.out.startswith("onnxtool ")
    for words in ("versions ", "onnxruntime ", "torch op ", "DynamicTRTResize in ONNX Runtime:", "built in "):
        assert words in done.out


def test_doctor_builds_nothing_and_says_built_on_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "cache"
    empty.mkdir()
    monkeypatch.setenv("ONNXTOOL_BUILD_DIR", str(empty))
    report = doctor().to_dict()
    assert report["torch_op"]["state"] == "built on first use"
    assert report["torch_op"]["build_dir"].startswith(str(empty.resolve()))  # ONNXTOOL_BUILD_DIR wins
    assert report["torch_op"]["fix"]
    assert list(empty.iterdir()) == []  # reported, not built


def test_doctor_without_torch_names_the_install_command() -> None:
    done = _onnxtool("doctor", "--json", no_torch=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert report["versions"]["torch"] is None
    assert report["torch_op"]["state"] == "unavailable"
    fixes = [item["fix"] for item in report["missing"]]
    assert "pip install 'onnxtool[torch]'" in fixes
    # Without torch the bridge has no C++ op behind it: the fallback it would take is the slow one.
    assert report["plugin_kernel"]["bridge"]["backend"] == "onnx.reference"


def test_doctor_forced_fallback_is_reported_as_the_slow_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONNXTOOL_RUNTIME_FALLBACK", "1")
    runs = doctor().to_dict()["plugin_kernel"]["runs"]
    assert runs["kind"] == "onnxruntime-extensions" and runs["backend"] == "onnx.reference" and runs["slow"]
    assert "ONNXTOOL_RUNTIME_FALLBACK" in runs["reason"]
