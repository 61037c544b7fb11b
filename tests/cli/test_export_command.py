"""`onnxtool export srcnn`: the report, the default output, one-line refusals, --help without torch.

The exports themselves (every variant and exporter, run against PyTorch) are tested in
tests/exporters/test_exporters.py; here the command around them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from graphsurgeon_tools.errors import ExitCode

pytest.importorskip("torch")  # the command exports through torch; without it every case exits 5 (tested elsewhere)


@pytest.mark.slow
def test_cli_export_srcnn_json(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "cxx.onnx"
    run = run_cli("export", "srcnn", "--variant", "cxx-op", "-o", out, "--json")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert report["path"] == str(out) and out.is_file()
    assert report["ort"]["checked"] and report["ort"]["cases"] == 4  # traced example + factors 2, 3, 4
    assert report["op_types"]["Resize"] == 1
    assert [i["name"] for i in report["inputs"]] == ["input", "scales"]
    onnx.checker.check_model(onnx.load(out), full_check=True)


def test_cli_default_output_is_srcnn_static_in_the_current_folder(run_cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    run = run_cli("export", "srcnn")
    assert run.code == 0, run.err
    assert (tmp_path / "srcnn_static.onnx").is_file()
    assert "ONNX Runtime matches PyTorch" in run.out


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["--variant", "new-interpolate", "--exporter", "dynamo"], ExitCode.USAGE, "symbolic"),
        (["--variant", "cxx-op", "--signature", "size-tensor"], ExitCode.USAGE, "plugin variant only"),
        (["--variant", "plugin", "--align-corners"], ExitCode.USAGE, "size-tensor"),
        (["--factor", "0"], ExitCode.USAGE, "--factor"),
        (["--variant", "bogus"], ExitCode.USAGE, "bogus"),
        (["--exporter", "dynamo", "--opset", "11"], ExitCode.USAGE, "opset 18"),
        (["--opset", "9"], ExitCode.INVALID_INPUT, "upsample_bicubic2d"),
    ],
)
def test_cli_bad_requests_get_one_line_and_an_exit_code(run_cli, tmp_path: Path, args, code, message) -> None:
    run = run_cli("export", "srcnn", "-o", tmp_path / "x.onnx", *args)
    assert run.code == code
    assert message in run.err and len(run.err.strip().splitlines()) == 1
    assert "Traceback" not in run.err
    assert not (tmp_path / "x.onnx").exists()


def test_cli_export_help_does_not_import_torch() -> None:
    code = (
        "import sys\nfrom graphsurgeon_tools.cli import main\n"
        "try:\n    main(['export', 'srcnn', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO_TORCH')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "--variant" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "NO_TORCH"


def test_unusable_output_path_is_refused_before_exporting(run_cli, tmp_path: Path) -> None:
    run = run_cli("export", "srcnn", "-o", tmp_path / "missing" / "x.onnx")
    assert run.code == ExitCode.USAGE and "output folder does not exist" in run.err
    run = run_cli("export", "srcnn", "-o", tmp_path)
    assert run.code == ExitCode.USAGE and "is a folder" in run.err
