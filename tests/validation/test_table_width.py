"""The validate table never cuts a figure: full width when stdout is not a terminal (whatever COLUMNS
says), one ``column value`` line per figure on a terminal too narrow for the table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import golden
import onnx
import pytest

from graphsurgeon_tools import swap_plugin
from graphsurgeon_tools.validation import render_report, validate
from graphsurgeon_tools.validation.render import _fmt

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("table")
    # A long output name and a cubic resize: figures like 2.09e-07 that a squeezed table would elide.
    static = golden.resize_model(mode="cubic", shape=(1, 3, 16, 16))
    static.graph.output[0].name = "a_rather_long_output_name_for_a_narrow_table"
    static.graph.node[-1].output[0] = static.graph.output[0].name
    paths = {"static": folder / "static.onnx", "plugin": folder / "plugin.onnx"}
    onnx.save(static, paths["static"])
    onnx.save(swap_plugin(static).model, paths["plugin"])
    return paths


def _figures(report: dict) -> list[str]:
    found = []
    for point in report["factors"]:
        for out in point["outputs"]:
            found += [
                _fmt(out["max_abs_error"]),
                _fmt(out["mean_abs_error"]),
                _fmt(out["max_rel_error"]),
                _fmt(out["passing_atol"]),
                _fmt(out["psnr_db"], ".1f"),
                out["output"],
            ]
    return found


def test_not_a_terminal_prints_the_full_table_whatever_columns_says(files: dict[str, Path]) -> None:
    environ = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "40"}
    command = [
        sys.executable,
        "-c",
        "from graphsurgeon_tools.cli import main; main()",
        "validate",
        str(files["plugin"]),
        "--reference",
        str(files["static"]),
    ]
    text = subprocess.run(command, capture_output=True, text=True, env=environ, timeout=120).stdout
    report = json.loads(
        subprocess.run([*command, "--json"], capture_output=True, text=True, env=environ, timeout=120).stdout
    )
    assert "…" not in text
    header = next(line for line in text.splitlines() if line.startswith("factor ") and "┃" in line)
    assert re.findall(r"[a-zA-Z][a-zA-Z ]*[a-zA-Z]", header.replace("┃", "|")) == [
        "factor",
        "output",
        "shape",
        "max abs",
        "mean abs",
        "max rel",
        "out of tol",
        "passing atol",
        "PSNR dB",
        "result",
    ]
    for figure in _figures(report):
        assert figure in text, figure


@pytest.mark.parametrize("width", [40, 60])
def test_a_narrow_terminal_gets_every_figure_whole(files: dict[str, Path], width: int) -> None:
    report = validate(files["plugin"], files["static"]).to_dict()
    text = render_report(report, width=width)
    assert "…" not in text
    for figure in _figures(report):
        assert figure in text, figure
    assert "max abs" in text and "passing atol" in text


def test_a_wide_terminal_keeps_the_table(files: dict[str, Path]) -> None:
    report = validate(files["plugin"], files["static"]).to_dict()
    text = render_report(report, width=200)
    assert "┃" in text and "…" not in text
    for figure in _figures(report):
        assert figure in text, figure
