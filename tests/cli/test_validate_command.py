"""`onnxtool validate` on the command line: exit 0/1/2/3, JSON and JUnit, inputs never written, the
package's `validate` still the function after the CLI ran; the acceptance cases on the real SRCNN.

The fast cases compare small Resize -> Conv models built in code (golden.resize_conv); the slow
section exports the real SRCNN once per session and checks it, and three broken copies, against
the PyTorch C++-op reference (torch:srcnn). What validate computes is tested through the API in
tests/validation/.
"""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import pytest
from golden import resize_conv
from hostile import models
from onnx import helper, numpy_helper
from user_net import user_model  # noqa: F401 - the fixture

from graphsurgeon_tools.cli import main
from graphsurgeon_tools.validation import validate


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_public_validate_stays_the_function_after_the_cli_ran(
    files: dict[str, Path], capsys: pytest.CaptureFixture
) -> None:
    main(["validate", str(files["dynamic"]), "-r", str(files["static"])])  # imports the CLI and the engine
    capsys.readouterr()
    import graphsurgeon_tools

    assert callable(graphsurgeon_tools.validate)
    assert graphsurgeon_tools.validate.__name__ == "validate"
    assert graphsurgeon_tools.ValidationReport.__name__ == "ValidationReport"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "dynamic": resize_conv(scales="input"),
        "static": resize_conv(scales="constant", factor=3.0),
        "wrong_mode": resize_conv(scales="input", mode="nearest"),
    }
    out = {}
    for name, model in paths.items():
        out[name] = tmp_path / f"{name}.onnx"
        onnx.save(model, out[name])
    out["x"] = tmp_path / "x.npy"
    np.save(out["x"], np.random.default_rng(0).random((1, 3, 10, 12), dtype=np.float32))
    out["x_bad"] = tmp_path / "x_bad.npy"
    np.save(out["x_bad"], np.zeros((1, 4, 10, 12), np.float32))
    out["junk"] = tmp_path / "junk.onnx"
    out["junk"].write_bytes(b"this is not protobuf \xff\xfe")
    return out


def test_cli_pass_exit_0_and_inputs_untouched(files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    before = sha(files["dynamic"])
    code = main(["validate", str(files["dynamic"]), "--reference", str(files["static"]), "--input", f"x={files['x']}"])
    out = capsys.readouterr().out
    assert code == 0
    assert "PASSED" in out and "1x3x30x36" in out
    assert sha(files["dynamic"]) == before


def test_cli_mismatch_exit_1_json_and_junit(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    junit = tmp_path / "report.xml"
    code = main(
        [
            "validate",
            str(files["wrong_mode"]),
            "-r",
            str(files["dynamic"]),
            "--factors",
            "2,3",
            "--json",
            "--junit",
            str(junit),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err == ""  # --json: quiet
    report = json.loads(captured.out)
    assert report["passed"] is False
    assert [f["status"] for f in report["factors"]] == ["failed", "failed"]
    assert report["diagnosis"]["explained_by"]["change"] == {"mode": "cubic"}
    assert ET.parse(junit).getroot().find("testsuite").get("failures") == "4"  # 2 factors x (output, site)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "x={x_bad}"], "does not fit the model's"),
        (["--input", "x={missing}"], "file not found"),
        (["--reference", "{junk}"], "not an ONNX model"),
        (["--factors", "two"], "not a number"),
    ],
)
def test_cli_bad_input_exit_3(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture, args: list[str], message: str
) -> None:
    names = {"x_bad": files["x_bad"], "missing": tmp_path / "missing.npy", "junk": files["junk"]}
    args = [a.format(**names) for a in args]
    if "--reference" not in args:
        args += ["--reference", str(files["static"])]
    code = main(["validate", str(files["dynamic"]), *args])
    err = capsys.readouterr().err
    assert code == 3
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reference", "no-such-reference"], "unknown reference"),
        (["--reference", "python:no_module"], "must look like python:MODULE:CALLABLE"),
        (["--reference", "onnx-reference", "--input", "nope={x}"], "the candidate has no such input"),
    ],
)
def test_cli_usage_mistakes_exit_2(
    files: dict[str, Path], capsys: pytest.CaptureFixture, args: list[str], message: str
) -> None:
    args = [a.format(x=files["x"]) for a in args]
    code = main(["validate", str(files["dynamic"]), *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_unreadable_candidate_exit_3(files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", str(files["junk"]), "-r", "onnx-reference"]) == 3
    assert "junk.onnx" in capsys.readouterr().err


def test_cli_python_reference_errors_and_junit_folder(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "boom.py").write_text("def make():\n    raise ValueError('boom')\n")
    candidate = str(files["dynamic"])
    assert main(["validate", candidate, "-r", "python:boom.py:make"]) == 3
    assert "make() raised ValueError: boom" in capsys.readouterr().err
    assert main(["validate", candidate, "-r", "python:no_such_module_here:make"]) == 3
    assert "No module named" in capsys.readouterr().err
    # A JUnit path that cannot be written is refused before any work (usage error).
    assert main(["validate", candidate, "-r", str(files["static"]), "--junit", str(tmp_path / "no" / "r.xml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_prints_the_reason_and_exits_1_when_nothing_was_compared(tmp_path, capsys) -> None:
    path = models.write(models.all_nan_model(), tmp_path / "nan.onnx")
    assert main(["validate", str(path), "--reference", str(path)]) == 1
    out = capsys.readouterr().out
    assert "nothing compared: output 'y' is NaN" in out


def test_the_cli_validates_a_half_export_against_a_python_module(tmp_path, run_cli) -> None:
    pytest.importorskip("torch")
    from validation import half_net  # deferred: imports torch, which the rest of this module does not need

    path = tmp_path / "half.onnx"
    onnx.save(half_net.half_export(), path)
    source = tmp_path / "halfnet.py"
    source.write_text(half_net.SOURCE)
    run = run_cli("validate", path, "--reference", f"python:{source}:build")
    assert run.code == 0, run.out + run.err
    assert "PASSED" in run.out


# ------------------------------------------------------------------------------ a user's own PyTorch module
# (tests/user_net.py: the user_model fixture; it skips without torch)


def test_the_cli_takes_a_python_reference(user_model: dict, run_cli) -> None:
    folder = user_model["folder"]
    result = run_cli("validate", folder / "dynamic.onnx", "--reference", user_model["spec"], "--factors", "2,3")
    assert result.code == 0, result.out + result.err


def test_the_cli_sweeps_chosen_sites_and_takes_the_scales_convention(user_model: dict, tmp_path: Path, run_cli) -> None:
    folder = user_model["folder"]
    swept = run_cli(
        "validate", folder / "dynamic.onnx", "--reference", user_model["spec"], "--site", "#1=1.5,3", "--json"
    )
    assert swept.code == 0, swept.out + swept.err
    import json

    labels = [point["factor"] for point in json.loads(swept.out)["factors"]]
    assert len(labels) == 2 and all("=x1.5" in str(labels[0]) or "=x3" in str(label) for label in labels), labels
    both = run_cli(
        "validate", folder / "dynamic.onnx", "--reference", user_model["spec"], "--site", "#1=2", "--factors", "2"
    )
    assert both.code == 2 and "--site" in both.err and "--factors" in both.err, both.err

    from exporters import export, srcnn

    model = srcnn("cxx-op")
    path = tmp_path / "srcnn.onnx"
    export(
        model,
        model.example_inputs(3),
        path,
        exporter="torchscript",
        input_names=["input", "scales"],
        output_names=["output"],
    )
    (tmp_path / "srcnn_ref.py").write_text("from exporters import srcnn\n\ndef build():\n    return srcnn('cxx-op')\n")
    old = run_cli(
        "validate",
        path,
        "--reference",
        f"python:{tmp_path / 'srcnn_ref.py'}:build",
        "--scales-argument",
        "--factors",
        "2",
    )
    assert old.code == 0, old.out + old.err


# ------------------------------------------------------------------------------ acceptance: the real SRCNN
# One export per session: the built-in SRCNN (static x3, shipped weights) made dynamic, and
# three broken copies of it. Each must fail against the PyTorch C++-op model (exit 1).


@pytest.fixture(scope="session")
def srcnn_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch")
    from exporters import export, srcnn
    from graphsurgeon_tools import make_dynamic_scale, save_model

    folder = tmp_path_factory.mktemp("srcnn")
    model = srcnn("static", factor=3)
    static = folder / "static.onnx"
    export(model, model.example_inputs(3), static, input_names=["input"], output_names=["output"])
    dynamic = make_dynamic_scale(static).model
    files = {"static": static, "dynamic": folder / "dynamic.onnx"}
    save_model(dynamic, files["dynamic"])

    def broken(name: str, change) -> None:
        copy = onnx.ModelProto()
        copy.CopyFrom(dynamic)
        change(copy)
        onnx.checker.check_model(copy, full_check=True)
        files[name] = folder / f"{name}.onnx"
        save_model(copy, files[name])

    def set_resize(attribute: str, value: str):
        def change(model: onnx.ModelProto) -> None:
            node = next(n for n in model.graph.node if n.op_type == "Resize")
            kept = [a for a in node.attribute if a.name != attribute]
            del node.attribute[:]
            node.attribute.extend([*kept, helper.make_attribute(attribute, value)])

        return change

    def nudge(model: onnx.ModelProto) -> None:
        tensor = next(t for t in model.graph.initializer if t.name == "conv1.weight")
        weight = numpy_helper.to_array(tensor).copy()
        weight[0, 0, 4, 4] += 0.01
        tensor.CopyFrom(numpy_helper.from_array(weight, tensor.name))

    broken("wrong_mode", set_resize("mode", "linear"))
    broken("wrong_ctm", set_resize("coordinate_transformation_mode", "align_corners"))
    broken("nudged_weight", nudge)
    return files


@pytest.mark.slow
def test_srcnn_right_model_passes_against_torch(srcnn_files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    code = main(["validate", str(srcnn_files["dynamic"]), "--reference", "torch:srcnn", "--factors", "2,3,4", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report["summary"]
    assert [f["status"] for f in report["factors"]] == ["passed"] * 3
    assert [f["outputs"][0]["candidate_shape"] for f in report["factors"]] == [
        [1, 3, 64, 64],
        [1, 3, 96, 96],
        [1, 3, 128, 128],
    ]
    assert report["counts"]["worst_max_abs_error"] < 1e-4
    # And bit-exact against the file it came from, at the factor baked into that file.
    exact = validate(srcnn_files["dynamic"], srcnn_files["static"], atol=0, rtol=0)
    assert exact.passed and exact.factors[0].factor == 3.0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "expected_in_diagnosis"),
    [
        ("wrong_mode", "mode='cubic'"),
        ("wrong_ctm", "coordinate_transformation_mode="),
        ("nudged_weight", "conv1.weight"),
    ],
)
def test_srcnn_broken_models_fail_with_exit_1(
    srcnn_files: dict[str, Path], capsys: pytest.CaptureFixture, name: str, expected_in_diagnosis: str
) -> None:
    code = main(["validate", str(srcnn_files[name]), "--reference", "torch:srcnn", "--factors", "2,3", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report["passed"] is False
    assert all(f["status"] == "failed" for f in report["factors"])
    assert expected_in_diagnosis in report["diagnosis"]["summary"]
