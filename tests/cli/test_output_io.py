"""A report that cannot be written is exit 6 with one line on stderr: stdout closed (``>&-``), full
(``/dev/full``) or a broken pipe, for every command, with and without --json.

In-process for every command (sys.stdout None, or a real /dev/full file), and once as a real
process for each kind, where the interpreter's own last flush must not add a second message or
turn the code into 120.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import golden
import onnx
import pytest

from graphsurgeon_tools.cli import main

REPO = Path(__file__).resolve().parents[2]
FULL = Path("/dev/full")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("output_io") / "model.onnx"
    onnx.save(golden.resize_model(mode="linear"), path)
    return path


def _commands(model: Path) -> dict[str, list[str]]:
    folder = model.parent
    return {
        "inspect": ["inspect", str(model)],
        "make-dynamic-scale": ["make-dynamic-scale", str(model), "-o", str(folder / "d.onnx")],
        "swap-plugin": ["swap-plugin", str(model), "-o", str(folder / "p.onnx")],
        "validate": ["validate", str(model), "--reference", "onnx-reference"],
        "lint": ["lint", str(model)],
        "doctor": ["doctor"],
        "help": ["--help"],
    }


def _run(args: list[str], stdout: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    saved = sys.stdout
    sys.stdout = stdout
    try:
        code = main(args)
    finally:
        sys.stdout = saved
    return code, capsys.readouterr().err


CASES = [
    (name, as_json)
    for name in ("inspect", "make-dynamic-scale", "swap-plugin", "validate", "lint", "doctor")
    for as_json in (False, True)
] + [("help", False)]  # --help has no --json form


@pytest.mark.parametrize(("name", "as_json"), CASES, ids=[f"{n}-{'json' if j else 'text'}" for n, j in CASES])
@pytest.mark.parametrize("kind", ["closed", "full"])
def test_unwritable_stdout_is_exit_6_with_one_line(
    model: Path, capsys: pytest.CaptureFixture[str], name: str, as_json: bool, kind: str
) -> None:
    args = _commands(model)[name] + (["--json"] if as_json else [])
    if kind == "closed":
        code, err = _run(args, None, capsys)  # what Python gives a process started with fd 1 closed
    else:
        with open(FULL, "w") as full:
            code, err = _run(args, full, capsys)
    lines = err.strip().splitlines()
    assert code == 6, err
    assert len(lines) == 1 and lines[0].startswith("onnxtool: error: cannot write the report to stdout"), err
    assert ("closed" if kind == "closed" else "no space left") in lines[0]


def test_broken_pipe_is_exit_6(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    code, err = _run(["inspect", str(model), "--json"], Broken(), capsys)
    assert code == 6 and "the reader closed the pipe" in err and len(err.strip().splitlines()) == 1


def _process(args: list[str], **how: Any) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(REPO)}
    environ.pop("ONNXTOOL_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-c", "from graphsurgeon_tools.cli import main; main()", *args],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env=environ,
        **how,
    )


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_real_process_with_stdout_closed_or_full(model: Path, as_json: bool) -> None:
    args = ["inspect", str(model)] + (["--json"] if as_json else [])
    closed = _process(args, stdout=None, preexec_fn=lambda: os.close(1))
    with open(FULL, "w") as full:
        filled = _process(args, stdout=full)
    for done, why in ((closed, "stdout is closed"), (filled, "no space left on device")):
        assert done.returncode == 6, done.stderr
        assert done.stderr.strip().splitlines() == [f"onnxtool: error: cannot write the report to stdout: {why}"]
