"""onnxtool swap-plugin on the command line: default output and --json, usage errors (exit 2),
the input never overwritten unless --in-place, --size-input needs --signature size-tensor, and the
built-in check as the CLI reports it (--no-check, tolerance note, exit 1 writes nothing, check options),
--reverse (checked too), plugin specs (--list-specs, by name, by path, an invalid one exits 3) and a
refused site's code in the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import golden
import numpy as np
import onnx
import pytest

from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.passes.swap_plugin import check as swap_check
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.plugins import builtin_specs
from graphsurgeon_tools.resize.plugin_dtypes import DTYPE_CODE


def _op_types(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node]


def test_cli_writes_default_output_and_json(tmp_path, run_cli, save_model_file):
    path = save_model_file(golden.resize_model(13, mode="linear"), "net.onnx")
    before = path.read_bytes()
    run = run_cli("swap-plugin", path, "--signature", "size-tensor", "--json")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    out = tmp_path / "net.plugin.onnx"
    assert report["output"] == str(out) and report["signature"] == "size-tensor"
    assert report["swapped"][0]["op_type_after"] == "DynamicTRTResize"
    assert report["new_inputs"][0]["value"] == [1.0, 1.0, 2.0, 2.0]
    assert path.read_bytes() == before
    onnx.checker.check_model(onnx.load(out), full_check=True)

    run = run_cli("swap-plugin", out, "--reverse")
    assert run.code == 0, run.err
    assert "restored" in run.out
    restored = onnx.load(tmp_path / "net.resize.onnx")  # the reverse suffix replaces .plugin
    assert "DynamicTRTResize" not in _op_types(restored)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--signature", "values"], 2, "unknown signature 'values'"),
        (["--nodes", "nothing"], 2, "--nodes 'nothing' matches no"),
        (["--in-place", "-o", "x.onnx"], 2, "exclude each other"),
        (["--domain", ""], 2, "standard ONNX domain"),
    ],
)
def test_cli_usage_errors(run_cli, save_model_file, args, code, message):
    path = save_model_file(golden.resize_model(13))
    run = run_cli("swap-plugin", path, *args)
    assert run.code == code
    assert message in run.err and run.err.count("\n") == 1


def test_cli_output_same_as_input_and_missing_file(tmp_path, run_cli, save_model_file):
    path = save_model_file(golden.resize_model(13))
    run = run_cli("swap-plugin", path, "-o", path)
    assert run.code == 2 and "--in-place" in run.err
    run = run_cli("swap-plugin", tmp_path / "missing.onnx")
    assert run.code == 3 and "missing.onnx" in run.err and run.err.count("\n") == 1
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00not onnx at all")
    run = run_cli("swap-plugin", garbage)
    assert run.code == 3 and "garbage.onnx" in run.err


def test_cli_in_place(run_cli, save_model_file):
    path = save_model_file(golden.resize_model(13, mode="linear"))
    run = run_cli("swap-plugin", path, "--in-place", "--keep-constant")
    assert run.code == 0, run.err
    assert "DynamicTRTResize" in _op_types(onnx.load(path))


def test_size_input_needs_the_size_tensor_signature(run_cli, save_model_file):
    with pytest.raises(UsageError, match='size_input= needs signature="size-tensor"'):
        swap_plugin(golden.resize_model(13), size_input="s")
    path = save_model_file(golden.resize_model(13, mode="linear"))
    run = run_cli("swap-plugin", path, "--signature", "size-tensor", "--size-input", "out_size", "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["new_inputs"][0]["name"] == "out_size"


def test_cli_reports_the_check_and_no_check_turns_it_off(run_cli, save_model_file) -> None:
    path = save_model_file(golden.resize_model(13), "net.onnx")
    run = run_cli("swap-plugin", path)
    assert run.code == 0, run.err
    assert "check passed at ORT_ENABLE_EXTENDED: 1 output(s) and 1 site output(s) identical" in run.out
    run = run_cli("swap-plugin", path, "--no-check", "--json", "-o", path.with_name("b.onnx"))
    assert run.code == 0, run.err
    assert json.loads(run.out)["check"] is None


def test_cli_states_the_kernel_tolerance_without_flag_spelling(run_cli, save_model_file) -> None:
    path = save_model_file(golden.resize_model(13, mode="linear"), "lin.onnx")
    run = run_cli("swap-plugin", path)
    assert run.code == 0, run.err
    assert "note: check tolerance: dtype-aware default" in run.out and "--atol" not in run.out
    assert "within tolerance" in run.out


def test_cli_failed_check_exits_1_and_writes_nothing(run_cli, save_model_file, monkeypatch) -> None:
    monkeypatch.setattr(swap_check, "_forward_feeds", lambda *a, **k: {"scales": np.ones(4, dtype=np.float32)})
    path = save_model_file(golden.resize_model(13), "net.onnx")
    run = run_cli("swap-plugin", path)
    assert run.code == 1
    assert "differs from your input model" in run.err and "site 'resize'" in run.err
    assert not path.with_name("net.plugin.onnx").exists()


def test_cli_check_options(run_cli, save_model_file, tmp_path) -> None:
    path = save_model_file(golden.resize_model(13), "net.onnx")
    run = run_cli("swap-plugin", path, "--check-dims", "bad")
    assert run.code == 2 and "--check-dims wants NAME=SIZE" in run.err
    run = run_cli("swap-plugin", path, "--custom-op-lib", tmp_path / "missing.so")
    assert run.code == 2 and "missing.so" in run.err
    assert not path.with_name("net.plugin.onnx").exists()


def test_cli_reverse_checks_too(run_cli, save_model_file) -> None:
    plugin = save_model_file(swap_plugin(golden.resize_model(13), signature="sizes").model, "p.onnx")
    run = run_cli("swap-plugin", plugin, "--reverse", "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["check"]["passed"] is True


def test_list_specs_names_each_spec_its_plugin_and_installed_file(run_cli):
    human = run_cli("swap-plugin", "--list-specs")
    assert human.code == 0, human.err
    assert "gridsample" in human.out and "GridSample -> grid_sampler (mmdeploy)" in human.out
    report = json.loads(run_cli("swap-plugin", "--list-specs", "--json").out)
    by_name = {row["name"]: row for row in report["specs"]}
    assert by_name["nms"]["matches"] == ["NonMaxSuppression"] and by_name["nms"]["plugin"] == "CustomNMS"
    assert Path(by_name["nms"]["path"]) == builtin_specs()["nms"]
    missing = run_cli("swap-plugin")
    assert missing.code == 2 and "MODEL" in missing.err


def test_the_cli_takes_a_builtin_spec_by_name(run_cli, save_model_file, tmp_path):
    model = save_model_file(golden.grid_sample_model(), "grid.onnx")
    run = run_cli("swap-plugin", model, "--spec", "gridsample", "--json", "--no-check")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert report["swapped"][0]["op_type_after"] == "grid_sampler"
    onnx.checker.check_model(onnx.load(tmp_path / "grid.plugin.onnx"), full_check=True)


def test_cli_with_example_spec(tmp_path, run_cli, save_model_file):
    model = save_model_file(golden.grid_sample_model(), "grid.onnx")
    run = run_cli("swap-plugin", model, "--spec", builtin_specs()["gridsample"], "--json")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert report["swapped"][0]["op_type_after"] == "grid_sampler"
    out = tmp_path / "grid.plugin.onnx"
    assert report["output"] == str(out)
    onnx.checker.check_model(onnx.load(out), full_check=True)


def test_cli_invalid_spec_exits_3_with_one_line(tmp_path, run_cli, save_model_file):
    model = save_model_file(golden.grid_sample_model())
    bad = tmp_path / "bad.toml"
    bad.write_text("[plugin]\nop_type = 'X'\n")
    run = run_cli("swap-plugin", model, "--spec", bad)
    assert run.code == 3
    assert run.err.count("\n") == 1 and "bad.toml" in run.err and "missing the [match] table" in run.err
    assert not model.with_name("model.plugin.onnx").exists()


def test_the_cli_refuses_an_integer_cubic_resize_with_the_code(run_cli, save_model_file) -> None:
    path = save_model_file(golden.typed_resize_model("uint8", "cubic"), "u8.onnx")
    run = run_cli("swap-plugin", path, "--no-check", "--json")
    assert run.code in (0, 1, 3), run.err  # refusing is not a bug
    report = json.loads(run.out)
    assert report["skipped"][0]["code"] == DTYPE_CODE and not report["swapped"]
