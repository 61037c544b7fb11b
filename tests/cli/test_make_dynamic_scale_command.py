"""`onnxtool make-dynamic-scale` on the command line: --only-free in the JSON report, and exit 3 with
nothing written when the chosen layout refuses every site (the float layout takes the same model).

What the pass does (freedom, layouts on 1-3 spatial axes) is tested through the API in
tests/passes/make_dynamic_scale/; the common CLI behaviour (output names, exit codes) in test_cli_core.py.
"""

from __future__ import annotations

import golden
import onnx
from typer.testing import CliRunner

from graphsurgeon_tools.cli import app, main


def test_cli_only_free(tmp_path) -> None:
    source = tmp_path / "two.onnx"
    onnx.save(golden.free_and_pinned_model(), source)
    out = tmp_path / "two.dynamic.onnx"
    run = CliRunner().invoke(app, ["make-dynamic-scale", str(source), "-o", str(out), "--only-free", "--json"])
    assert run.exit_code == 0, run.output
    assert '"free": true' in run.output and "not free (--only-free)" in run.output


def test_the_cli_exits_3_with_the_reasons_when_the_layout_refuses_every_site(tmp_path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(golden.spatial_resize_model(3, factor=1.5), str(path))
    assert main(["make-dynamic-scale", str(path), "--layout", "factor"]) == 3
    assert not (tmp_path / "m.dynamic.onnx").exists()
    assert main(["make-dynamic-scale", str(path), "--layout", "scales"]) == 0  # the float layout takes 1.5
