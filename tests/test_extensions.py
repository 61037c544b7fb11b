"""graphsurgeon_tools.extensions: the registry the PyTorch side fills through its entry point."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from graphsurgeon_tools import extensions
from graphsurgeon_tools.errors import OnnxToolError

PACKAGE = Path(__file__).resolve().parents[1] / "graphsurgeon_tools"


@pytest.fixture()
def empty_registry(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(extensions, "_references", {})
    monkeypatch.setattr(extensions, "_kernels", {})
    monkeypatch.setattr(extensions, "_commands", {})
    monkeypatch.setattr(extensions, "_module_runners", [])
    monkeypatch.setattr(extensions, "_failures", [])
    monkeypatch.setattr(extensions, "_loaded", True)  # as if no entry point were installed


def test_without_extensions_a_named_reference_is_one_line_saying_what_to_install(empty_registry) -> None:
    with pytest.raises(OnnxToolError) as info:
        extensions.reference_factory("torch:srcnn")
    message = str(info.value)
    assert "\n" not in message
    assert message == "torch:srcnn needs the PyTorch side: pip install 'onnxtool[torch]'"
    with pytest.raises(OnnxToolError, match="onnxtool demo needs the PyTorch side"):
        extensions.command("demo")
    assert extensions.kernel_loaders() == {}
    with pytest.raises(OnnxToolError, match="a PyTorch reference needs the PyTorch side"):
        extensions.module_runner()


def test_registered_names_are_found_and_unknown_ones_listed(empty_registry) -> None:
    extensions.register_reference("torch:tiny", lambda: "module")
    assert extensions.reference_factory("torch:tiny")() == "module"
    with pytest.raises(OnnxToolError, match="registered references are torch:tiny"):
        extensions.reference_factory("torch:other")


def test_the_installed_entry_point_registers_the_pytorch_side() -> None:
    from importlib.metadata import entry_points

    if not list(entry_points(group=extensions.ENTRY_POINT_GROUP)):
        pytest.skip("onnxtool is installed without its entry points (run pip install -e .)")
    assert "torch:srcnn" in extensions.reference_names()
    assert "cpp" in extensions.kernel_loaders()
    assert callable(extensions.command("export-srcnn")) and callable(extensions.command("demo"))


def test_graphsurgeon_tools_never_imports_exporters_or_torch() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [
                f"{path.relative_to(PACKAGE)}:{node.lineno} {n}"
                for n in names
                if n.split(".")[0] in ("exporters", "torch")
            ]
    offenders = [o for o in offenders if not o.startswith("cli/")]  # the CLI's two commands: H4's to switch
    assert offenders == []
