"""graphsurgeon_tools.lazy: the one lazy package face behind graphsurgeon_tools, io, check, runtime and exporters."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def _package(root: Path, name: str) -> None:
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text(
        "from graphsurgeon_tools.lazy import lazy_face\n"
        "__getattr__, __dir__ = lazy_face(__name__, {'VALUE': 'values', 'JSONDecoder': 'json.decoder'}, ('tools',))\n"
    )
    (folder / "values.py").write_text("VALUE = 42\nLOADS = 1\n")
    (folder / "tools.py").write_text("TOOL = 'x'\n")


def test_names_and_submodules_import_on_first_use_and_bind_once(tmp_path: Path, monkeypatch) -> None:
    _package(tmp_path, "lazy_probe_pkg")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazy_probe_pkg as package

    try:
        assert "lazy_probe_pkg.values" not in sys.modules and "lazy_probe_pkg.tools" not in sys.modules
        assert {"VALUE", "JSONDecoder", "tools"} <= set(dir(package))
        assert package.VALUE == 42 and "lazy_probe_pkg.values" in sys.modules
        assert vars(package)["VALUE"] == 42  # bound on the package: __getattr__ is not asked again
        import json.decoder

        assert package.JSONDecoder is json.decoder.JSONDecoder  # a full dotted path names its module
        assert package.tools.TOOL == "x" and "lazy_probe_pkg.tools" in sys.modules
        with pytest.raises(AttributeError, match="module 'lazy_probe_pkg' has no attribute 'LOADS'"):
            package.LOADS  # noqa: B018 - defined in a submodule but not listed: not part of the face
    finally:
        for name in [m for m in sys.modules if m.startswith("lazy_probe_pkg")]:
            del sys.modules[name]
