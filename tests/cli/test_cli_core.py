"""`onnxtool inspect` and `onnxtool make-dynamic-scale`: output files, reports, every error path
(exit code AND message), and the fast-start rule (no torch/onnxruntime/onnxsim at import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import golden
import numpy as np
import onnx
import onnxruntime as ort
import pytest

from graphsurgeon_tools.passes.make_dynamic_scale import DynamicScaleResult


def _digest(path: Path) -> bytes:
    return path.read_bytes()


# ----------------------------------------------------------------------------- inspect


def test_inspect_human_and_json(run_cli, save_model_file) -> None:
    path = save_model_file(golden.fpn_model(factors=(2.0, 4.0)))
    result = run_cli("inspect", path)
    assert result.code == 0, result.err
    assert "opset 13, 2 Resize/Upsample site(s)" in result.out
    assert "resize_0: Resize-13 mode=nearest coord=asymmetric" in result.out
    assert "scales [1, 1, 4, 4] from constant (scales_const_1)" in result.out
    assert "factor: pinned by Add add_0" in result.out  # the FPN's Add joins the lateral branch
    result = run_cli("inspect", path, "--json")
    report = json.loads(result.out)
    assert [s["node_name"] for s in report["sites"]] == ["resize_0", "resize_1"]
    assert report["sites"][1]["scales_source"] == "constant" and report["opset"] == 13


def test_inspect_node_filter_and_sizes(run_cli, save_model_file) -> None:
    path = save_model_file(golden.sizes_model(13))
    result = run_cli("inspect", path, "--nodes", "resize")
    assert "sizes [1, 3, 24, 20] from initializer (sizes_const)" in result.out
    assert "scales" not in result.out.split("sizes [")[0].split("\n", 1)[1]


@pytest.mark.parametrize("command", ["inspect", "make-dynamic-scale"])
def test_missing_and_broken_models_exit_3_with_one_line(run_cli, tmp_path: Path, command: str) -> None:
    missing = tmp_path / "nope.onnx"
    result = run_cli(command, missing)
    assert result.code == 3 and result.err == f"onnxtool: error: model file not found: {missing}\n"
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00garbage\xff" * 10)
    result = run_cli(command, junk)
    assert result.code == 3 and "not an ONNX model" in result.err and str(junk) in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


# ----------------------------------------------------------------------------- make-dynamic-scale


def test_default_output_beside_the_input_and_input_untouched(run_cli, save_model_file) -> None:
    path = save_model_file(golden.resize_model(13, scales=(1.0, 1.0, 2.0, 3.0)))
    before = _digest(path)
    result = run_cli("make-dynamic-scale", path)
    assert result.code == 0, result.err
    out = path.with_name("model.dynamic.onnx")
    assert out.is_file() and _digest(path) == before
    assert "rewrote resize (Resize-13, nearest): scales [1, 1, 2, 3] from initializer -> input scales" in result.out
    assert "check passed" in result.out and f"wrote {out}" in result.out
    model = onnx.load(out)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": np.ones((1, 3, 8, 8), np.float32), "scales": np.array([1, 1, 3, 3], np.float32)})
    assert y.shape == (1, 3, 24, 24)


def test_json_report(run_cli, save_model_file, tmp_path: Path) -> None:
    path = save_model_file(golden.fpn_model(factors=(2.0, 4.0)))
    out = tmp_path / "out.onnx"
    result = run_cli("make-dynamic-scale", path, "-o", out, "--json", "--factor")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["input"] == str(path) and report["output"] == str(out)
    assert [s["node"] for s in report["rewritten"]] == ["resize_0", "resize_1"]
    assert report["rewritten"][1]["original_scales"] == [1.0, 1.0, 4.0, 4.0]
    assert report["new_inputs"] == [
        {"name": "scales_0", "dtype": "float32", "shape": [2], "default": None, "value": [2.0, 2.0]},
        {"name": "scales_1", "dtype": "float32", "shape": [2], "default": None, "value": [4.0, 4.0]},
    ]
    assert report["skipped"] == [] and report["check"]["passed"] is True
    assert report["timings"]["check"] > 0


def test_in_place(run_cli, save_model_file) -> None:
    path = save_model_file(golden.resize_model(13))
    result = run_cli("make-dynamic-scale", path, "--in-place", "--no-check", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["check"] is None
    assert [i.name for i in onnx.load(path).graph.input] == ["x", "scales"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.onnx"]


def test_options_reach_the_api(run_cli, save_model_file, tmp_path: Path) -> None:
    path = save_model_file(golden.fpn_model(factors=(2.0, 2.0, 4.0)))
    out = tmp_path / "o.onnx"
    result = run_cli(
        "make-dynamic-scale",
        path,
        "-o",
        out,
        "--nodes",
        "resize_0,resize_1",
        "--shared",
        "--input-name",
        "zoom",
        "--keep-default",
        "--json",
    )
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert [s["node"] for s in report["rewritten"]] == ["resize_0", "resize_1"]
    assert report["new_inputs"][0]["name"] == "zoom" and report["new_inputs"][0]["default"] == [1, 1, 2, 2]
    model = onnx.load(out)
    assert "zoom" in {i.name for i in model.graph.initializer}


def test_from_sizes_and_skipped_report(run_cli, save_model_file, tmp_path: Path) -> None:
    path = save_model_file(golden.sizes_model(13, sizes=(1, 3, 16, 30), shape=(1, 3, 8, 10)))
    result = run_cli("make-dynamic-scale", path, "-o", tmp_path / "a.onnx")
    assert result.code == 0
    assert "skipped resize (Resize): driven by sizes" in result.out and "nothing to rewrite" in result.out
    result = run_cli("make-dynamic-scale", path, "-o", tmp_path / "b.onnx", "--from-sizes")
    assert result.code == 0 and "from sizes -> input scales" in result.out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--in-place", "-o", "{tmp}/x.onnx"], "--in-place and --output exclude each other"),
        (["-o", "{model}"], "is the input model; pass --in-place to overwrite it"),
        (["-o", "{tmp}/no/such/dir/x.onnx"], "output folder does not exist"),
        (["-o", "{tmp}"], "output path is a directory"),
        (["--nodes", "nothing*"], "--nodes 'nothing*' matches no Resize/Upsample node"),
        (["--input-name", "x"], "--input-name 'x' is already a tensor name"),
        (["--bogus"], "No such option: --bogus"),
        (["--check-dims", "H=abc"], "--check-dims wants NAME=SIZE"),
    ],
)
def test_usage_errors_exit_2(run_cli, save_model_file, tmp_path: Path, args: list, message: str) -> None:
    path = save_model_file(golden.resize_model(13))
    before = _digest(path)
    args = [a.format(tmp=tmp_path, model=path) for a in args]
    result = run_cli("make-dynamic-scale", path, *args)
    assert result.code == 2, result
    assert message in result.err and result.err.startswith("onnxtool: error:") and result.err.count("\n") == 1
    assert _digest(path) == before


def test_shared_with_different_scales_exits_2(run_cli, save_model_file) -> None:
    path = save_model_file(golden.fpn_model(factors=(2.0, 4.0)))
    result = run_cli("make-dynamic-scale", path, "--shared")
    assert result.code == 2 and "--shared needs equal scales" in result.err and str(path) in result.err


@pytest.mark.parametrize(
    "scales, message",
    [
        ((1.0, 1.0, float("nan"), 2.0), "not a positive finite number"),
        ((1.0, 1.0, 0.0, 2.0), "not a positive finite number"),
        ((1.0, 2.0, 2.0), "3 entries for a rank-4 input"),
    ],
)
def test_nonsense_scales_exit_3(run_cli, save_model_file, scales, message: str) -> None:
    path = save_model_file(golden.resize_model(13, scales=scales, infer=False))
    result = run_cli("make-dynamic-scale", path)
    assert result.code == 3 and message in result.err and str(path) in result.err
    assert not path.with_name("model.dynamic.onnx").exists()


def test_a_model_failing_the_checker_exits_3(run_cli, save_model_file) -> None:
    model = golden.resize_model(13)
    model.graph.node[-1].input[0] = "does_not_exist"
    path = save_model_file(model)
    result = run_cli("make-dynamic-scale", path)
    assert result.code == 3 and "fails the ONNX checker" in result.err and str(path) in result.err


def test_unsafe_external_data_exits_3(run_cli, tmp_path: Path) -> None:
    model = golden.resize_model(13)
    model.graph.initializer[0].data_location = onnx.TensorProto.EXTERNAL
    model.graph.initializer[0].ClearField("raw_data")
    model.graph.initializer[0].external_data.add(key="location", value="../../etc/passwd")
    path = tmp_path / "evil.onnx"
    path.write_bytes(model.SerializeToString())
    result = run_cli("make-dynamic-scale", path)
    assert result.code == 3 and "leaves the model's folder" in result.err


def test_nothing_to_rewrite_exits_0_or_1_with_strict(run_cli, save_model_file, tmp_path: Path) -> None:
    path = save_model_file(golden.resize_model(13, source="graph_input"))
    result = run_cli("make-dynamic-scale", path, "-o", tmp_path / "same.onnx")
    assert result.code == 0 and "nothing to rewrite" in result.out
    assert "already come from graph input" in result.out
    result = run_cli("make-dynamic-scale", path, "-o", tmp_path / "same.onnx", "--strict")
    assert result.code == 1 and "nothing to rewrite (--strict)" in result.err


def test_a_failed_check_exits_1_and_writes_nothing(run_cli, save_model_file, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        DynamicScaleResult, "feeds", lambda self: {i.name: np.array([1, 1, 2, 3], np.float32) for i in self.new_inputs}
    )
    path = save_model_file(golden.resize_model(13, mode="linear"))
    result = run_cli("make-dynamic-scale", path)
    assert result.code == 1 and "differs from your input model in ONNX Runtime" in result.err
    assert not path.with_name("model.dynamic.onnx").exists()


def test_debug_variable_shows_the_traceback(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONNXTOOL_DEBUG", "1")
    result = run_cli("inspect", tmp_path / "nope.onnx")
    assert result.code == 3 and "Traceback" in result.err


def test_help_and_commands_import_no_heavy_modules() -> None:
    code = (
        "import sys\n"
        "from graphsurgeon_tools.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('torch', 'onnxruntime', 'onnxsim') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "make-dynamic-scale" in done.stdout and "inspect" in done.stdout
    assert "HEAVY []" in done.stdout, done.stdout


def test_console_script_end_to_end(save_model_file, tmp_path: Path) -> None:
    path = save_model_file(golden.upsample_model(7, opset=8))
    exe = Path(sys.executable).with_name("onnxtool")
    command = [str(exe)] if exe.exists() else [sys.executable, "-c", "from graphsurgeon_tools.cli import main; main()"]
    done = subprocess.run(
        [*command, "make-dynamic-scale", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ONNXTOOL_DEBUG": ""},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["opset_before"] == 8 and report["opset_after"] == 9 and report["check"]["passed"] is True


def test_a_console_run_under_a_profiler_ends_normally_and_its_profile_is_written(
    save_model_file, tmp_path: Path
) -> None:
    # A console process ends without the interpreter's teardown (os._exit after the atexit functions),
    # except under a profiler or tracer: `python -m cProfile` writes its stats after the script returns.
    path = save_model_file(golden.upsample_model(7, opset=8))
    script = tmp_path / "onnxtool_script.py"
    script.write_text("import sys\nfrom graphsurgeon_tools.cli import main\nsys.exit(main())\n")
    stats = tmp_path / "run.prof"
    args = [str(script), "make-dynamic-scale", str(path), "-o", str(tmp_path / "out.onnx"), "--no-check", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(stats), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["opset_after"] == 9
    assert stats.is_file() and stats.stat().st_size > 0


@pytest.mark.parametrize("hook", ["kept", "missing"])
def test_a_console_run_ends_with_its_code_after_the_atexit_functions(save_model_file, tmp_path: Path, hook) -> None:
    # The short exit (os._exit after the atexit functions and a flush) and, on an interpreter without
    # CPython's atexit._run_exitfuncs, the normal one: the same code, the report and the atexit output.
    path = save_model_file(golden.upsample_model(7, opset=8))
    script = tmp_path / "onnxtool_script.py"
    lines = ["import atexit, sys", "atexit.register(lambda: print('atexit ran', file=sys.stderr))"]
    if hook == "missing":
        lines.append("del atexit._run_exitfuncs")
    lines += ["from graphsurgeon_tools.cli import main", "main()"]
    script.write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [sys.executable, str(script), "make-dynamic-scale", str(path), "-o", str(tmp_path / "out.onnx"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["opset_after"] == 9 and (tmp_path / "out.onnx").is_file()
    assert done.stderr.strip().splitlines()[-1] == "atexit ran"
    refused = subprocess.run([sys.executable, str(script), "inspect", str(tmp_path / "nowhere.onnx")], timeout=120)
    assert refused.returncode == 3


def test_check_dims_reach_the_check(run_cli, save_model_file) -> None:
    path = save_model_file(golden.resize_model(13, shape=(None, 3, None, None)))
    result = run_cli("make-dynamic-scale", path, "--check-dims", "N=2,H=5", "--check-dims", "W=7", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["check"]["input_shapes"] == {"x": [2, 3, 5, 7]}


def test_inspect_refuses_invalid_models_and_nonsense_scales(run_cli, save_model_file) -> None:
    model = golden.resize_model(13)
    model.graph.node[-1].input[0] = "nowhere"
    path = save_model_file(model, "dangling.onnx")
    result = run_cli("inspect", path, "--json")
    assert result.code == 3 and "fails the ONNX checker" in result.err and not result.out
    path = save_model_file(golden.resize_model(13, scales=(1.0, 1.0, 0.0, 2.0), infer=False), "zero.onnx")
    result = run_cli("inspect", path)
    assert result.code == 3 and "node 'resize': scales [1.0, 1.0, 0.0, 2.0] contain 0.0" in result.err


def test_output_over_the_inputs_external_data_is_refused(run_cli, tmp_path: Path) -> None:
    model = golden.resize_model(13)
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.ones(1024, np.float32), "big"))
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="weights.bin", size_threshold=1024)
    before = (tmp_path / "weights.bin").read_bytes()
    result = run_cli("make-dynamic-scale", tmp_path / "m.onnx", "-o", tmp_path / "weights.bin")
    assert result.code == 2 and "external data file of" in result.err
    assert (tmp_path / "weights.bin").read_bytes() == before


def test_short_weights_are_refused(run_cli, save_model_file) -> None:
    model = golden.resize_model(13)
    weight = onnx.numpy_helper.from_array(np.ones((16, 16), np.float32), "w")
    weight.raw_data = weight.raw_data[:10]
    model.graph.initializer.append(weight)
    path = save_model_file(model)
    # the pass contract's structural checks, the same for every pass: one exit code, one message
    for command in ("make-dynamic-scale", "swap-plugin"):
        result = run_cli(command, path)
        assert result.code == 3, result.err
        assert "tensor 'w' holds 10 bytes but its shape [16, 16] needs 1024" in result.err and str(path) in result.err


# ----------------------------------------------------------------------------- nested sites


def test_inspect_says_where_a_nested_site_lives(run_cli, save_model_file) -> None:
    from hostile import nested

    path = save_model_file(nested.if_model(then_scales=(1, 1, 2, 2), else_scales=(1, 1, 3, 3)))
    result = run_cli("inspect", path)
    assert result.code == 0, result.err
    assert "    in If 'branch' then_branch" in result.out and "    in If 'branch' else_branch" in result.out


def test_inline_functions_flag_rewrites_sites_inside_functions(run_cli, save_model_file, tmp_path: Path) -> None:
    from hostile import nested

    path = save_model_file(nested.function_model())
    plain = run_cli("make-dynamic-scale", path, "-o", tmp_path / "a.onnx", "--no-check", "--json")
    assert plain.code == 0, plain.err
    assert json.loads(plain.out)["rewritten"] == []
    assert "--inline-functions" in plain.out  # the skip reason names the flag, not the keyword
    inlined = run_cli(
        "make-dynamic-scale", path, "-o", tmp_path / "b.onnx", "--no-check", "--inline-functions", "--json"
    )
    assert inlined.code == 0, inlined.err
    assert len(json.loads(inlined.out)["rewritten"]) == 1
