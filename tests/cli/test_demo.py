"""`onnxtool demo`: runs end to end once per session, then each artifact is checked on its own."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import onnx
import pytest

from graphsurgeon_tools.cli import main

pytest.importorskip("torch")
FACTORS = (2, 3, 4)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("demo") / "demo_out"  # a folder that does not exist yet
    import contextlib
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["demo", "--out", str(out)])
    return {
        "out": out,
        "code": code,
        "stdout": stdout.getvalue(),
        "stderr": stderr.getvalue(),
        "seconds": time.perf_counter() - started,
    }


@pytest.mark.slow
def test_demo_succeeds_quickly_and_says_where_things_are(demo_run: dict) -> None:
    assert demo_run["code"] == 0, demo_run["stdout"] + demo_run["stderr"]
    assert demo_run["seconds"] < 120
    text = demo_run["stdout"]
    assert "PASSED" in text and "FAILED" not in text
    assert str(demo_run["out"]) in text
    for name in ("srcnn_dynamic.onnx", "srcnn_plugin.onnx", "report.json", "srcnn_x3.png", "bicubic_x4.png"):
        assert name in text
    assert "x3 PSNR vs ground truth" in text


@pytest.mark.slow
def test_demo_report_records_passing_validations(demo_run: dict) -> None:
    report = json.loads((demo_run["out"] / "report.json").read_text())
    assert report["passed"] is True
    validations = report["validations"]
    srcnn = {"dynamic_vs_torch", "dynamic_vs_static", "plugin_vs_torch"}
    swin2sr = {f"swin2sr_x{f}_vs_module" for f in FACTORS}
    assert set(validations) == (srcnn | swin2sr if _has("transformers") else srcnn)
    for name in ("dynamic_vs_torch", "plugin_vs_torch"):
        factors = [f["factor"] for f in validations[name]["factors"] if f["status"] == "passed"]
        assert factors == [float(f) for f in FACTORS], name
        assert validations[name]["reference"]["label"] == "torch:srcnn"
    # The rewrite fed its original factor reproduces the original file exactly.
    exact = validations["dynamic_vs_static"]
    assert exact["passed"] and exact["atol"] == 0 and exact["counts"]["worst_max_abs_error"] == 0
    # The plugin model carries a certificate: every side 16..288 at the demo's factors, per axis.
    certificate = json.loads(Path(report["files"]["certificate"]).read_text())
    assert certificate["certified"] and validations["plugin_vs_torch"]["certificate"]["certified"]
    assert certificate["profile"]["lengths"] == [[16, 288]]
    # SRCNN was trained for x3: it must beat plain bicubic there.
    assert report["psnr_db"]["srcnn_x3"] > report["psnr_db"]["bicubic_x3"]
    for path in report["files"].values():
        assert Path(path).is_file(), path


def _has(package: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(package) is not None


@pytest.mark.slow
def test_demo_second_model_is_validated_against_its_unmodified_module(demo_run: dict) -> None:
    """transformers' Swin2SR, exported normally and made dynamic, against its own module at x2/x3/x4."""
    if not _has("transformers"):
        pytest.skip("the demo's second model needs transformers (the realmodels extra)")
    report = json.loads((demo_run["out"] / "report.json").read_text())
    for f in FACTORS:
        validation = report["validations"][f"swin2sr_x{f}_vs_module"]
        assert validation["passed"], validation
        assert validation["reference"]["label"] == "Swin2SRForImageSuperResolution"
        assert [s["free"] for s in validation["reference"]["sites"]] == [True, True]
        assert (demo_run["out"] / f"swin2sr_x{f}.png").is_file()
    from PIL import Image

    assert Image.open(demo_run["out"] / "swin2sr_x3.png").size == (48 * 3, 48 * 3)  # a 48 x 48 crop, x3


@pytest.mark.slow
def test_demo_models_pass_the_checker_and_run(demo_run: dict) -> None:
    from graphsurgeon_tools.runtime import make_session

    out = demo_run["out"]
    ops = {}
    for name in ("srcnn_static_x3.onnx", "srcnn_dynamic.onnx", "srcnn_plugin.onnx"):
        model = onnx.load(out / name)
        onnx.checker.check_model(model, full_check=True)
        ops[name] = {n.op_type for n in model.graph.node}
        session = make_session(out / name)
        feeds = {"input": np.random.default_rng(0).random((1, 3, 8, 8), dtype=np.float32)}
        extra = [i.name for i in session.get_inputs() if i.name != "input"]
        if extra:
            feeds[extra[0]] = np.array([1, 1, 2, 2], np.float32)
        (y,) = session.run(None, feeds)
        assert y.shape == ((1, 3, 24, 24) if name.startswith("srcnn_static") else (1, 3, 16, 16))
    assert "Resize" in ops["srcnn_dynamic.onnx"]
    assert "DynamicTRTResize" in ops["srcnn_plugin.onnx"] and "Resize" not in ops["srcnn_plugin.onnx"]


@pytest.mark.slow
def test_demo_images_have_the_right_sizes(demo_run: dict) -> None:
    from PIL import Image

    out = demo_run["out"]
    with Image.open(out / "input.png") as image:
        assert image.size == (96, 96) and image.mode == "RGB"
    for factor in FACTORS:
        for kind in ("bicubic", "srcnn"):
            with Image.open(out / f"{kind}_x{factor}.png") as image:
                assert image.size == (96 * factor, 96 * factor)
    # SRCNN's output is not bicubic's: the network did something.
    with Image.open(out / "srcnn_x3.png") as a, Image.open(out / "bicubic_x3.png") as b:
        diff = np.abs(np.asarray(a, np.int16) - np.asarray(b, np.int16))
    assert diff.mean() > 0.5


def test_demo_refuses_a_file_as_out_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    target = tmp_path / "a_file"
    target.write_text("keep me")
    assert main(["demo", "--out", str(target)]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert target.read_text() == "keep me"


def test_demo_refuses_nonsense_factors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["demo", "--out", str(tmp_path / "x"), "--factors", "0"]) == 3
    assert "factors" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_demo_report_carries_the_evidence_of_what_ran(demo_run: dict) -> None:
    import hashlib

    report = json.loads((demo_run["out"] / "report.json").read_text())
    evidence = report["evidence"]
    assert evidence["versions"]["torch"] and evidence["versions"]["onnxruntime"]
    assert evidence["torch_op"]["sha256"] == hashlib.sha256(Path(evidence["torch_op"]["path"]).read_bytes()).hexdigest()
    for model in evidence["models"]:
        assert model["sha256"] == hashlib.sha256(Path(model["path"]).read_bytes()).hexdigest(), model["role"]
    assert [m["role"] for m in evidence["models"]] == ["static", "dynamic", "plugin"]
    assert evidence["plugin_kernels"], "the plugin model ran: its kernel must be named"
    plugin = report["validations"]["plugin_vs_torch"]["evidence"]
    assert plugin["plugin_kernels"] and plugin["torch_op"]["path"] == evidence["torch_op"]["path"]
    assert "evidence: onnxtool " in demo_run["stdout"]
