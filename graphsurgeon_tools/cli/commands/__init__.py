"""One module per command, found here, not listed: a new command module needs no edit of this file.

Each module of this package defines ``register(app)``, which adds its command (or command
group) to the typer app; importing a module registers nothing. :func:`register_all` imports
every module it finds in this folder and calls its ``register``, in this order (the order of
``onnxtool --help``):

1. every module not named in :data:`TOOLS`, alphabetically: the commands that rewrite or check a
   model (make-dynamic-scale, set-factor, swap-plugin, validate, and a new pass's command);
2. then the modules named in :data:`TOOLS`, in that order.

(typer lists command groups such as ``export`` after the single commands, whatever the order.)

Requires: each module imports only typer, the standard library and ``cli._app`` at module level,
so ``onnxtool --help`` never pays for onnx, onnxruntime, onnxsim or torch. Ensures: every module
here is reachable from ``onnxtool --help`` (tests/cli/test_command_discovery.py); a module
without ``register`` is an error at start-up, not a command silently missing. Does NOT look
outside this folder, and does NOT import a command's library code (that happens when it runs).
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

__all__ = ["TOOLS", "command_modules", "register_all"]

#: The tool commands, listed after the model commands in this order.
TOOLS = ("certify", "lint", "inspect", "demo", "doctor", "export")


def command_modules() -> list[str]:
    """The module names of this package in registration order (see the module docstring)."""
    found = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    unknown = [name for name in TOOLS if name not in found]
    if unknown:  # a renamed tool module: say so instead of silently reordering --help
        raise RuntimeError(f"cli.commands.TOOLS names modules that do not exist: {unknown}")
    return [name for name in found if name not in TOOLS] + list(TOOLS)


def register_all(app: typer.Typer) -> None:
    """Import every command module and call its ``register(app)``."""
    for name in command_modules():
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(app)
