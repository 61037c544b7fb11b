"""Shared fixtures, kept small and generic. Golden model builders live in tests/golden.py.

* ``save_model_file(model, name="model.onnx") -> Path``: write a model under tmp_path.
* ``run_cli(*args) -> CliRun(code, out, err)``: ``onnxtool`` in-process (``cli.main``).
* ``srcnn_exports`` (session): the tutorial's StaticSRCNN exported ONCE per session by the
  TorchScript exporter at opsets 11, 13, 17 and by the dynamo exporter (about 10 s in all);
  a dict label -> path. Skips when torch is not installed.
* ``srcnn_family`` (session): the tutorial's SRCNN exported static at x3, made dynamic and swapped to
  the plugin, as files (keys static, dynamic, plugin); certify's API tests and its command's tests
  share it. Skips when torch is not installed.
* ``ppocr_det_path`` (session): PaddleOCR's PP-OCRv4 text detector from the installed
  rapidocr_onnxruntime wheel (located without importing it: it needs cv2); skips if absent.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import onnx
import pytest

from graphsurgeon_tools import make_dynamic_scale, save_model, swap_plugin

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so tests can `import golden`


@dataclass
class CliRun:
    code: int
    out: str
    err: str


@pytest.fixture
def save_model_file(tmp_path: Path) -> Callable[..., Path]:
    def save(model: onnx.ModelProto, name: str = "model.onnx") -> Path:
        path = tmp_path / name
        onnx.save(model, path)
        return path

    return save


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliRun]:
    from graphsurgeon_tools.cli import main

    def run(*args: object) -> CliRun:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliRun(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def srcnn_exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    torch = pytest.importorskip("torch")
    from exporters.models import StaticSRCNN

    folder = tmp_path_factory.mktemp("srcnn")
    torch.manual_seed(0)
    model = StaticSRCNN().eval()
    example = (torch.randn(1, 3, 16, 16),)
    paths: dict[str, Path] = {}
    for opset in (11, 13, 17):
        path = folder / f"srcnn_ts{opset}.onnx"
        torch.onnx.export(
            model,
            example,
            str(path),
            dynamo=False,
            opset_version=opset,
            input_names=["input"],
            output_names=["output"],
            dynamic_axes={
                "input": {0: "batch", 2: "height", 3: "width"},
                "output": {0: "batch", 2: "out_height", 3: "out_width"},
            },
        )
        paths[f"torchscript-{opset}"] = path
    path = folder / "srcnn_dynamo.onnx"
    torch.onnx.export(model, example, str(path), dynamo=True, input_names=["input"], output_names=["output"])
    paths["dynamo"] = path
    return paths


@pytest.fixture(scope="session")
def srcnn_family(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch")
    from exporters.onnx_export import export_srcnn  # deferred: loads torch, which only this fixture's users need

    folder = tmp_path_factory.mktemp("certify-srcnn")
    static = folder / "srcnn_static_x3.onnx"
    export_srcnn(static, variant="static", factor=3.0, compare=False)
    dynamic = make_dynamic_scale(static)
    save_model(dynamic.model, folder / "srcnn_dynamic.onnx")
    save_model(swap_plugin(dynamic.model).model, folder / "srcnn_plugin.onnx")
    return {"static": static, "dynamic": folder / "srcnn_dynamic.onnx", "plugin": folder / "srcnn_plugin.onnx"}


@pytest.fixture(scope="session")
def ppocr_det_path() -> Path:
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / "models" / "ch_PP-OCRv4_det_infer.onnx"
        if path.is_file():
            return path
    pytest.skip("PP-OCRv4 detector not installed (make setup installs rapidocr-onnxruntime==1.4.4 --no-deps)")


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001 - pytest's hook signature
    """Counts the hardening issue asks to see on every run: hostile runs handled, fuzz examples.

    tests/fuzz/test_fuzz.py records ``fuzz_examples`` (and ``fuzz_<outcome>`` tallies) as user
    properties; they travel from xdist workers to this (controller) process with each report.
    """
    reports = [
        r
        for key in ("passed", "failed")
        for r in terminalreporter.stats.get(key, [])
        if getattr(r, "when", "call") == "call"
    ]
    kinds = {"::test_in_process[": "in-process", "::test_subprocess[": "subprocess", "::test_api_raises": "API"}
    hostile = [r for r in reports if "test_hostile_" in r.nodeid and any(k in r.nodeid for k in kinds)]
    if hostile:
        split = ", ".join(f"{sum(k in r.nodeid for r in hostile)} {label}" for k, label in kinds.items())
        terminalreporter.write_line(
            f"hostile inputs: {sum(r.passed for r in hostile)} of {len(hostile)} runs handled ({split})"
        )
    fuzz = [
        (r.nodeid.split("::")[-1], dict(r.user_properties))
        for r in reports
        if "fuzz_examples" in dict(r.user_properties)
    ]
    if fuzz:
        total = sum(props["fuzz_examples"] for _, props in fuzz)
        terminalreporter.write_line(f"fuzz: {total} examples")
        for name, props in sorted(fuzz):
            extra = ", ".join(
                f"{k[5:]}={v}" for k, v in sorted(props.items()) if k.startswith("fuzz_") and k != "fuzz_examples"
            )
            terminalreporter.write_line(f"  {props['fuzz_examples']:5d}  {name}" + (f" ({extra})" if extra else ""))
