"""Every command module in cli/commands/ is found and reachable from ``onnxtool --help``, in a stable order;
every pass under passes/ has a command and a row in docs/adding-a-pass.md.

A new command is a new module there with a ``register(app)`` function; nothing else lists it.
These tests fail if a module is not registered (a command a user cannot reach), if one is
registered twice, if the order of ``--help`` changes unnoticed, if a pass has no command or no
row in the page that says how a pass is added, or if that page names a file that is gone.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from graphsurgeon_tools import passes
from graphsurgeon_tools.cli import app, commands

#: The order ``onnxtool --help`` lists the commands in: the model commands alphabetically, then the tools.
HELP_ORDER = [
    "make-dynamic-scale",
    "set-factor",
    "swap-plugin",
    "validate",
    "certify",
    "lint",
    "inspect",
    "demo",
    "doctor",
    "export",
]


def _help_commands() -> list[str]:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    section = result.output.split("Commands:", 1)[1]
    return re.findall(r"^  (\S+)", section, re.MULTILINE)


def _registered_by(module_name: str) -> list[str]:
    """The command names one module's ``register`` adds to a fresh app."""
    fresh = typer.Typer()
    importlib.import_module(f"{commands.__name__}.{module_name}").register(fresh)
    return [info.name for info in fresh.registered_commands] + [info.name for info in fresh.registered_groups]


def test_every_command_module_is_reachable_from_help() -> None:
    modules = [info.name for info in pkgutil.iter_modules(commands.__path__) if not info.name.startswith("_")]
    shown = _help_commands()
    for name in modules:
        added = _registered_by(name)
        assert added, f"cli/commands/{name}.py's register() adds no command"
        assert set(added) <= set(shown), f"cli/commands/{name}.py registers {added}; --help shows {shown}"
    assert len(shown) == len(set(shown)), shown


def test_help_lists_the_commands_in_a_stable_order() -> None:
    assert _help_commands() == HELP_ORDER


def test_a_new_module_joins_the_model_commands_alphabetically(monkeypatch) -> None:
    names = ("zoom", "validate", "_private", "add_pad", *reversed(commands.TOOLS))
    monkeypatch.setattr(pkgutil, "iter_modules", lambda path: [pkgutil.ModuleInfo(None, n, False) for n in names])
    order = commands.command_modules()
    assert order == ["add_pad", "validate", "zoom", *commands.TOOLS]


def test_a_tool_module_that_is_gone_is_an_error_not_a_reordered_help(monkeypatch) -> None:
    names = [name for name in commands.command_modules() if name != "lint"]
    monkeypatch.setattr(pkgutil, "iter_modules", lambda path: [pkgutil.ModuleInfo(None, n, False) for n in names])
    with pytest.raises(RuntimeError, match="lint"):
        commands.command_modules()


# ------------------------------------------------------------- every pass: a command, a row in the docs

ROOT = Path(__file__).resolve().parents[2]
ADDING_A_PASS = ROOT / "docs" / "adding-a-pass.md"


def _pass_packages() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(passes.__path__) if info.ispkg)


def test_every_pass_has_a_command_and_a_row_in_adding_a_pass() -> None:
    shown = set(_help_commands())
    table = ADDING_A_PASS.read_text().split("## The passes", 1)[1].split("\n## ", 1)[0]
    assert {"make_dynamic_scale", "set_factor", "swap_plugin"} <= set(_pass_packages())
    for package in _pass_packages():
        command = package.replace("_", "-")
        assert command in shown, f"passes/{package}/ has no command {command!r} in onnxtool --help"
        assert f"| `passes/{package}/` | `onnxtool {command}` | `{package}` |" in table, (
            f"docs/adding-a-pass.md's 'The passes' has no row for passes/{package}/"
        )


def test_the_files_adding_a_pass_names_exist() -> None:
    """The worked example stays true: every path the page names (but the <name> patterns) is a file."""
    text = ADDING_A_PASS.read_text()
    paths = {p for p in re.findall(r"`([\w./]+/[\w.]+\.(?:py|md))`", text) if "<" not in p}
    assert "passes/set_factor/rule.py" in paths and "cli/commands/set_factor.py" in paths
    missing = [p for p in sorted(paths) if not (ROOT / p).is_file() and not (ROOT / "graphsurgeon_tools" / p).is_file()]
    assert not missing, missing
