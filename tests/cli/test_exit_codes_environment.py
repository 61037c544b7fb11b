"""Environment problems are exit 5 with one line naming the fix, for every command and reference kind.

Two environments, each a real subprocess of ``onnxtool``:

* no torch: ``tests/cli/no_torch/sitecustomize.py`` makes ``import torch`` fail as a missing
  distribution does; every torch-needing command must exit 5 with ``pip install 'onnxtool[torch]'``.
* torch, but the C++ op cannot be built: an empty ``ONNXTOOL_BUILD_DIR`` and a compiler that
  always fails (``CXX=/bin/false``); a PyTorch reference must be exit 5 (never "FAILED ... out
  of --atol", exit 1), ``export --variant cxx-op`` must blame the op library (not torch's
  exporter), and a failed ``demo`` must leave nothing behind.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import golden
import onnx
import pytest

from graphsurgeon_tools import make_dynamic_scale

REPO = Path(__file__).resolve().parents[2]
NO_TORCH = Path(__file__).resolve().parent / "no_torch"
TORCH_FIX = "pip install 'onnxtool[torch]'"


def _onnxtool(*args: object, cwd: Path, no_torch: bool = False, **env: str) -> subprocess.CompletedProcess:
    paths = [str(NO_TORCH)] if no_torch else []
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(REPO)]), **env}
    environ.pop("ONNXTOOL_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-c", "from graphsurgeon_tools.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("environment")
    dynamic = folder / "up.dynamic.onnx"
    onnx.save(make_dynamic_scale(golden.resize_model(scales=(1.0, 1.0, 2.0, 2.0))).model, dynamic)
    module = folder / "my_model.py"
    module.write_text(golden.TORCH_UP_MODULE)
    return {"folder": folder, "dynamic": dynamic, "module": module}


def _one_line_exit_5(done: subprocess.CompletedProcess, *needles: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 5, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    # One error line, the last; a remark before it ("building the C++ op once ...") is allowed.
    errors = [line for line in lines if line.startswith("onnxtool: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], done.stderr
    assert all(line.startswith("onnxtool: ") for line in lines), done.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert "Traceback" not in done.stderr
    return errors[0]


NO_TORCH_COMMANDS = {
    "export": ["export", "srcnn", "-o", "{folder}/x.onnx"],
    "export-cxx-op-dynamo": ["export", "srcnn", "--variant", "cxx-op", "--exporter", "dynamo", "-o", "{folder}/y.onnx"],
    "demo": ["demo", "--out", "{folder}/demo_no_torch"],
    "torch:srcnn": ["validate", "{dynamic}", "--reference", "torch:srcnn", "--factors", "2"],
    "python:FILE": ["validate", "{dynamic}", "--reference", "python:{module}:build", "--factors", "2"],
    "python-scales:FILE": ["validate", "{dynamic}", "--reference", "python-scales:{module}:build", "--factors", "2"],
    "python:MODULE --json": ["validate", "{dynamic}", "--reference", "python:my_model:build", "--json"],
}


@pytest.mark.parametrize("name", list(NO_TORCH_COMMANDS))
def test_without_torch_every_torch_command_is_exit_5_naming_the_install(files: dict[str, Path], name: str) -> None:
    args = [arg.format(**files) for arg in NO_TORCH_COMMANDS[name]]
    done = _onnxtool(*args, cwd=files["folder"], no_torch=True)
    _one_line_exit_5(done, TORCH_FIX)
    assert not (files["folder"] / "demo_no_torch").exists()


@pytest.fixture
def no_op(tmp_path: Path) -> dict[str, str]:
    """An environment where torch is there and the C++ op cannot be built."""
    cache = tmp_path / "empty_cache"
    cache.mkdir()
    return {"ONNXTOOL_BUILD_DIR": str(cache), "CXX": "/bin/false"}


# The op-build cases need torch installed (the no-torch cases simulate its absence wherever it is).
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


@needs_torch
@pytest.mark.slow
@pytest.mark.parametrize("reference", ["python:{module}:build", "torch:srcnn"])
def test_unbuildable_op_under_a_pytorch_reference_is_exit_5_not_a_difference(
    files: dict[str, Path], no_op: dict[str, str], reference: str
) -> None:
    done = _onnxtool(
        "validate",
        files["dynamic"],
        "--reference",
        reference.format(**files),
        "--factors",
        "2,3",
        cwd=files["folder"],
        **no_op,
    )
    line = _one_line_exit_5(done, "C++ op")
    assert "FAILED" not in done.stdout + line and "--atol" not in line


@needs_torch
@pytest.mark.slow
@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
def test_export_cxx_op_blames_the_op_library_not_the_exporter(
    files: dict[str, Path], no_op: dict[str, str], exporter: str
) -> None:
    target = files["folder"] / f"cxx_{exporter}.onnx"
    done = _onnxtool(
        "export", "srcnn", "--variant", "cxx-op", "--exporter", exporter, "-o", target, cwd=files["folder"], **no_op
    )
    line = _one_line_exit_5(done, "C++ op")
    assert "could not export" not in line
    assert not target.exists()


@needs_torch
@pytest.mark.slow
def test_failed_demo_removes_what_it_wrote(tmp_path: Path, no_op: dict[str, str]) -> None:
    out = tmp_path / "new" / "demo_out"
    done = _onnxtool("demo", "--out", out, cwd=tmp_path, **no_op)
    _one_line_exit_5(done, "C++ op")
    assert not (tmp_path / "new").exists()  # the folders it made went too
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "mine.txt").write_text("a file of the user's")
    done = _onnxtool("demo", "--out", kept, cwd=tmp_path, **no_op)
    _one_line_exit_5(done, "C++ op")
    assert sorted(p.name for p in kept.iterdir()) == ["mine.txt"]
