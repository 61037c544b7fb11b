"""Lazy package faces (PEP 562): a package's public names and submodules, imported on first use.

In a package's ``__init__``::

    __getattr__, __dir__ = lazy_face(__name__, {"load_model": "load", ...}, submodules=("session",))

``names`` maps each public name to the module that defines it: a submodule of the package (no dot)
or a full dotted path. ``submodules`` are reached as attributes of the package (``check.equivalence``).
A name is imported when first asked for and bound on the package, so ``__getattr__`` runs once per
name; ``dir()`` lists what is bound and what can be asked for.

Why: ``import graphsurgeon_tools`` and the CLI's start stay cheap (no onnx), and a pass run without
its check never imports the check's machinery (``check``, ``runtime``).

Requires: nothing beyond the standard library (every package face imports it).
Does NOT decide what a package exports: each package lists its own names.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Iterable, Mapping

__all__ = ["lazy_face"]


def lazy_face(
    package: str, names: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package named ``package`` (its ``__name__``)."""
    namespace = sys.modules[package].__dict__
    modules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in modules:  # import_module binds the submodule on the package: asked once
            return importlib.import_module(f"{package}.{name}")
        home = names.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home if "." in home else f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names) | modules)

    return __getattr__, __dir__
