"""Every command module in cli/commands/ is found and reachable from ``onnxtool --help``, in a stable order.

A new command is a new module there with a ``register(app)`` function; nothing else lists it.
These tests fail if a module is not registered (a command a user cannot reach), if one is
registered twice, or if the order of ``--help`` changes unnoticed.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest
import typer
from typer.testing import CliRunner

from graphsurgeon_tools.cli import app, commands

#: The order ``onnxtool --help`` lists the commands in: the model commands alphabetically, then the tools.
HELP_ORDER = ["make-dynamic-scale", "set-factor", "swap-plugin", "validate",
              "certify", "lint", "inspect", "demo", "doctor", "export"]


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
