"""`onnxtool lint MODEL --target ...`: exit codes, the human report, --json, fixes spelled as commands."""

from __future__ import annotations

import json

from lint import lint_models as m  # tests/lint/lint_models.py (tests/ is on sys.path, see conftest.py)


def test_a_failing_rule_exits_1_and_names_rule_source_node_and_fix(run_cli, save_model_file):
    original = save_model_file(m.constant_scales("1.0, 1.0, 2.0, 2.0"))
    assert run_cli("make-dynamic-scale", original, "--no-check").code == 0
    path = original.with_name("model.dynamic.onnx")
    result = run_cli("lint", str(path), "--target", "tensorrt")
    assert result.code == 1, result.err
    assert "error: trt-shape-input-integer [Y]" in result.out
    assert "source: onnx/onnx-tensorrt importerUtils.cpp" in result.out
    writes = original.with_name("model.sizes.onnx")
    assert f"fix: onnxtool make-dynamic-scale {path} --layout sizes    (writes {writes})" in result.out


def test_a_float_input_of_the_users_own_is_reported_without_a_command(run_cli, save_model_file):
    path = save_model_file(m.resize(inputs="float[4] s"))
    result = run_cli("lint", str(path), "--json")
    assert result.code == 1
    assert [(f["rule"], f["command"]) for f in json.loads(result.out)["findings"]] == [
        ("trt-shape-input-integer", None),
        ("trt-scale-arithmetic", None),
    ]


def test_json_report_and_a_passing_model_exits_0(run_cli, save_model_file):
    path = save_model_file(m.constant_scales("1.0, 1.0, 2.0, 2.0", attrs='mode="linear"'))
    result = run_cli("lint", str(path), "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["target"] == "tensorrt" and report["failed"] is False and report["findings"] == []
    assert "trt-shape-input-integer" in report["rules"]


def test_the_onnxruntime_target_and_an_unknown_target(run_cli, save_model_file):
    bad = m.resize(
        'mode="linear", coordinate_transformation_mode="pytorch_half_pixel"',
        x="float[1,1,4,4]",
        init="int64[4] sz = {1, 1, 1, 1}",
        body_inputs="X, , , sz",
    )
    path = save_model_file(bad)
    result = run_cli("lint", str(path), "--target", "onnxruntime", "--json")
    assert result.code == 1
    assert [f["rule"] for f in json.loads(result.out)["findings"]] == ["torch-pytorch-half-pixel-length-one"]
    result = run_cli("lint", str(path), "--target", "tflite")
    assert result.code == 2 and "--target" in result.err


def test_an_unreadable_model_exits_3(run_cli, tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"not onnx")
    assert run_cli("lint", str(path)).code == 3


def test_export_takes_profile_too_and_says_a_float_scales_input_is_no_shape_input(run_cli, tmp_path):
    import pytest

    pytest.importorskip("torch")
    out = tmp_path / "ni.onnx"
    result = run_cli(
        "export", "srcnn", "--variant", "new-interpolate", "-o", out, "--profile", "16,64,128:2,3,4", "--json"
    )
    assert result.code == 0, result.err
    profile = json.loads(result.out)["profile"]
    assert profile["trtexec"] == (
        "--minShapes=input:1x3x16x16 --optShapes=input:1x3x64x64 --maxShapes=input:1x3x128x128"
    )
    assert "--layout factor" in profile["notes"][0]
