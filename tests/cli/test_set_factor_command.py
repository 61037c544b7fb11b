"""`onnxtool set-factor`: exit codes, messages, the files it writes (and does not), JSON.

The models: a small linear x2 Resize made dynamic by make-dynamic-scale (scales and sizes
layouts) and written to disk; the command runs in-process through ``cli.main``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest

from graphsurgeon_tools import make_dynamic_scale


def _static() -> onnx.ModelProto:
    return onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,?,?] X) => (float[1,3,?,?] Y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> {
  Y = Resize <mode="linear"> (X, , s)
}""")


@pytest.fixture
def models(tmp_path: Path) -> dict[str, Path]:
    paths = {"static": tmp_path / "m.onnx"}
    onnx.save(_static(), paths["static"])
    for layout in ("scales", "sizes"):
        paths[layout] = tmp_path / f"m.{'dynamic' if layout == 'scales' else layout}.onnx"
        onnx.save(make_dynamic_scale(_static(), layout=layout, check=False).model, paths[layout])
    return paths


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x})[0]


def test_bakes_a_named_site_and_writes_the_static_model(run_cli, models: dict[str, Path]) -> None:
    result = run_cli("set-factor", models["scales"], "--site", "scales=3")
    assert result.code == 0, result.err
    written = models["scales"].with_name("m.static.onnx")
    assert "baked <unnamed> (Resize): factor [3, 3] -> scales [1, 1, 3, 3]" in result.out
    assert "removed input scales" in result.out and "check passed" in result.out
    assert "evidence: onnxtool" in result.out and "models: candidate" in result.out  # what ran, as in every check
    assert f"wrote {written}" in result.out
    x = np.random.default_rng(0).random((1, 3, 5, 7), dtype=np.float32)
    assert _run(written, x).shape == (1, 3, 15, 21)
    assert [i.name for i in onnx.load(written).graph.input] == ["X"]


def test_original_round_trip_and_json(run_cli, models: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "back.onnx"
    result = run_cli("set-factor", models["scales"], "--original", "-o", out, "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["pass"] == "set-factor" and report["output"] == str(out)
    assert report["removed_inputs"] == ["scales"] and report["rewritten"][0]["source"] == "original"
    assert report["rewritten"][0]["scales"] == [1.0, 1.0, 2.0, 2.0] and report["check"]["passed"] is True
    x = np.random.default_rng(1).random((1, 3, 5, 7), dtype=np.float32)
    np.testing.assert_array_equal(_run(out, x), _run(models["static"], x))


def test_nothing_to_bake_is_success(run_cli, models: dict[str, Path], tmp_path: Path) -> None:
    result = run_cli("set-factor", models["static"], "--all", "2", "-o", tmp_path / "same.onnx")
    assert result.code == 0 and "nothing to bake" in result.out


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "set_factor needs --site, --all or --original (which sites, at which factor)"),
        (("--site", "nowhere=2"), "site 'nowhere' matches no Resize/Upsample/DynamicTRTResize node or dynamic input"),
        (("--site", "scales=two"), "the factor must be numbers separated by commas"),
        (("--all", "0"), "the factor must be one or more positive finite numbers"),
    ],
)
def test_usage_errors_exit_2(run_cli, models: dict[str, Path], args: tuple, message: str) -> None:
    result = run_cli("set-factor", models["scales"], *args)
    assert result.code == 2 and message in result.err and result.err.count("\n") == 1
    assert not models["scales"].with_name("m.static.onnx").exists()


def test_refused_request_exit_3_names_the_code_and_flags(run_cli, models: dict[str, Path]) -> None:
    result = run_cli("set-factor", models["sizes"], "--original")
    assert result.code == 3 and "[no-recorded-value]" in result.err
    assert "give the factor with --site or --all" in result.err  # API keywords spelled as flags
    result = run_cli("set-factor", models["sizes"], "--all", "1.5")
    assert result.code == 3 and "[factor-not-whole]" in result.err
    assert not models["sizes"].with_name("m.static.onnx").exists()


def test_a_wrong_bake_fails_the_check_exit_1_and_writes_nothing(
    run_cli, models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The built-in check is what stands between a rewrite bug and the user's disk: a bake that
    writes other scales than it planned must end in exit 1 with nothing written."""
    import graphsurgeon_tools.passes.set_factor as package

    real = package.bake

    def off_by_one(model, plans):  # noqa: ANN001, ANN202 - the pass's own signature
        removed = real(model, plans)
        model.graph.initializer[-1].CopyFrom(
            onnx.numpy_helper.from_array(np.array([1, 1, 3, 3], np.float32), model.graph.initializer[-1].name)
        )
        return removed

    monkeypatch.setattr(package, "bake", off_by_one)
    result = run_cli("set-factor", models["scales"], "--site", "scales=2")
    assert result.code == 1 and "differs" in result.err and result.err.count("\n") == 1
    assert not models["scales"].with_name("m.static.onnx").exists()


def test_in_place_rewrites_the_model_itself(run_cli, models: dict[str, Path]) -> None:
    result = run_cli("set-factor", models["scales"], "--all", "2", "--in-place")
    assert result.code == 0 and f"wrote {models['scales']}" in result.out
    assert [i.name for i in onnx.load(models["scales"]).graph.input] == ["X"]
