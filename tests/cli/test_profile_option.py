"""`--profile SIZES:FACTORS` on the model-writing commands: the TensorRT profile of the written model."""

from __future__ import annotations

import json

import golden


def test_make_dynamic_scale_prints_the_profile_of_what_it_wrote(run_cli, save_model_file, tmp_path) -> None:
    path = save_model_file(golden.resize_model(13, shape=(1, 3, "h", "w")))
    out = tmp_path / "out.onnx"
    result = run_cli("make-dynamic-scale", path, "-o", out, "--no-check", "--profile", "32,64,128:1,2,4", "--json")
    assert result.code == 0, result.err
    profile = json.loads(result.out)["profile"]
    assert profile["trtexec"].startswith("--minShapes=") and "--trt-min-shapes" in profile["polygraphy"]
    assert set(profile["onnxruntime"]) == {"trt_profile_min_shapes", "trt_profile_opt_shapes", "trt_profile_max_shapes"}
    human = run_cli("swap-plugin", path, "-o", tmp_path / "p.onnx", "--profile", "32,64,128:1,2,4")
    assert human.code == 0, human.err
    assert "trtexec    --minShapes=" in human.out and "polygraphy --trt-min-shapes" in human.out


def test_a_malformed_profile_is_refused_before_any_work(run_cli, save_model_file, tmp_path) -> None:
    path = save_model_file(golden.resize_model(13))
    out = tmp_path / "out.onnx"
    result = run_cli("make-dynamic-scale", path, "-o", out, "--profile", "32,64")
    assert result.code == 2 and result.err.startswith("onnxtool: error: --profile '32,64'"), result.err
    assert not out.exists()
