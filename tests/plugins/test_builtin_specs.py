"""The built-in plugin specs: shipped as package data, listed (API and --list-specs), usable by name."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import onnx
import onnx.parser
import pytest

import graphsurgeon_tools
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.plugins import InvalidSpecError, builtin_spec, builtin_specs, resolve_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PACKAGE = Path(graphsurgeon_tools.__file__).resolve().parent
ROOT = PACKAGE.parent
GRID = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 16]>
g (float[1,3,8,8] x, float[1,4,5,2] grid) => (float[1,3,4,5] y) {
  y = GridSample <mode="bilinear"> (x, grid)
}""")


def test_every_builtin_spec_is_a_file_inside_the_package_that_parses():
    specs = builtin_specs()
    assert set(specs) == {"DynamicTRTResize", "gridsample", "nms"}
    for name, path in specs.items():
        assert path.is_file() and PACKAGE in path.parents, path
        assert builtin_spec(name).source == str(path)


def test_the_package_data_glob_of_pyproject_carries_every_builtin_spec():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    globs = data["graphsurgeon_tools"]
    for path in builtin_specs().values():
        relative = path.relative_to(PACKAGE)
        assert any(relative.match(pattern) and len(relative.parts) == len(Path(pattern).parts) for pattern in globs), \
            f"{relative} is not package data ({globs})"


@pytest.mark.parametrize("name", ["gridsample", "GridSample", "grid_sample", "grid-sample"])
def test_a_builtin_spec_is_usable_by_name(name):
    result = swap_plugin(GRID, spec=name, check=False)
    assert [s.op_type_after for s in result.swapped] == ["grid_sampler"]
    assert result.spec_source == str(builtin_specs()["gridsample"])


def test_a_file_at_that_path_wins_over_the_builtin_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("nms").write_text('[plugin]\nop_type = "Mine"\n[match]\nop_type = "GridSample"\n')
    assert resolve_spec("nms").op_type == "Mine"
    with pytest.raises(InvalidSpecError, match="not found"):  # a path with a folder is never a name
        resolve_spec(Path("sub") / "gridsample")
    with pytest.raises(InvalidSpecError, match="not found"):
        resolve_spec("no-such-spec")


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
    model = save_model_file(GRID, "grid.onnx")
    run = run_cli("swap-plugin", model, "--spec", "gridsample", "--json", "--no-check")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert report["swapped"][0]["op_type_after"] == "grid_sampler"
    onnx.checker.check_model(onnx.load(tmp_path / "grid.plugin.onnx"), full_check=True)
