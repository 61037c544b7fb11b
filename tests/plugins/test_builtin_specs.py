"""The built-in plugin specs: shipped as package data, listed (API and --list-specs), usable by name."""

from __future__ import annotations

import sys
from pathlib import Path

import golden
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
        assert any(relative.match(pattern) and len(relative.parts) == len(Path(pattern).parts) for pattern in globs), (
            f"{relative} is not package data ({globs})"
        )


@pytest.mark.parametrize("name", ["gridsample", "GridSample", "grid_sample", "grid-sample"])
def test_a_builtin_spec_is_usable_by_name(name):
    result = swap_plugin(golden.grid_sample_model(), spec=name, check=False)
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
