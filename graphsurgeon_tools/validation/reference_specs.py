"""Turn what a user names as the reference into a :class:`~.references.Reference`.

``make_reference(spec, candidate, *, scales_argument=False) -> Reference``. Strings:
``python:MODULE:CALLABLE`` (the user's unmodified module, its resizes routed through the
PyTorch side's module runner), ``python-scales:MODULE:CALLABLE`` (a module written as
``module(x, scales)``), ``onnx-reference``, a registered name (``torch:srcnn``), or a path to an
ONNX model. Objects: a ModelProto, a :class:`~.references.Reference`, or an ``nn.Module``/callable.
MODULE may be a ``.py`` path, whose folder is importable while it loads; a plain module name is
imported with the working folder on ``sys.path``.

Requires: the loaded candidate (``onnx-reference`` runs it; a routed module is paired with it).
Ensures: an unusable spec is one line: :class:`UsageError` (exit 2) for a malformed spec or an
unknown word, :class:`InvalidInputError` (exit 3) for a missing file or a module that fails to
import, :class:`EnvironmentProblemError` (exit 5) when the PyTorch side is missing.
Does NOT import torch or exporters: PyTorch modules run through :mod:`graphsurgeon_tools.extensions`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Union

import onnx

from graphsurgeon_tools.errors import EnvironmentProblemError, InvalidInputError, OnnxToolError, UsageError
from graphsurgeon_tools.extensions import TORCH_HINT, environment_problem, module_runner, reference_factory
from graphsurgeon_tools.validation.references import EvaluatorReference, OnnxModelReference, Reference, TorchReference
from graphsurgeon_tools.validation.runner import load_onnx

__all__ = ["ReferenceLike", "make_reference"]


def _load_python_callable(spec: str) -> Any:
    prefix, _, body = spec.partition(":")
    module_name, sep, attr = body.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"reference {spec!r} must look like {prefix}:MODULE:CALLABLE")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise UsageError(f"reference {spec!r}: file {path} does not exist")
            mod_spec = importlib.util.spec_from_file_location(path.stem, path)
            if mod_spec is None or mod_spec.loader is None:
                raise UsageError(f"reference {spec!r}: cannot import {path}")
            module = importlib.util.module_from_spec(mod_spec)
            # A model file imports the modules beside it, as when run as a script.
            with _importable(str(path.resolve().parent)):
                mod_spec.loader.exec_module(module)
        else:
            # The user's module usually sits in the folder they run onnxtool from, which the
            # console script does not put on sys.path; add it for this import only.
            with _importable(str(Path.cwd())):
                module = importlib.import_module(module_name)
    except OnnxToolError:
        raise
    except Exception as exc:  # the user's module ran on import: whatever it raises is theirs, by type
        _raise_environment_problem(exc)
        raise InvalidInputError(
            f"reference {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise UsageError(f"reference {spec!r}: {module_name} has no callable {attr!r}")
    try:
        return factory()
    except Exception as exc:  # the user's factory: whatever it raises is theirs, by type
        _raise_environment_problem(exc)
        raise InvalidInputError(f"reference {spec!r}: {attr}() raised {type(exc).__name__}: {exc}") from exc


def _raise_environment_problem(exc: BaseException) -> None:
    """torch missing or the C++ op unbuildable while the user's file loads: exit 5, not their error."""
    problem = environment_problem(exc)
    if problem is not None:
        raise problem from exc


ReferenceLike = Union[str, Path, onnx.ModelProto, Reference, Callable[..., Any]]

_SPECS = (
    "an ONNX model, python:MODULE:CALLABLE, python-scales:MODULE:CALLABLE, onnx-reference "
    "or a registered name such as torch:srcnn"
)


@contextlib.contextmanager
def _importable(folder: str) -> Iterator[None]:
    """``folder`` on ``sys.path`` for the duration (unless it, or ``""``, already is)."""
    added = "" not in sys.path and folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


def _routed_reference(module: Any, label: str, candidate: onnx.ModelProto) -> Reference:
    """``module`` run unmodified, its resizes routed at the candidate's per-site factors (the PyTorch side's)."""
    runner = module_runner()  # one line naming what to install without the PyTorch side
    build = getattr(runner, "reference", None)
    if build is None:
        raise EnvironmentProblemError(
            f"reference {label}: the installed PyTorch side cannot route resizes; "
            "reinstall onnxtool, or use python-scales: for a module that takes scales"
        )
    return build(module, label, candidate)


def _named_reference(name: str) -> Reference:
    factory = reference_factory(name)  # OnnxToolError naming what to install when nobody registered it
    try:
        module = factory()
    except Exception as exc:  # the registered side is installed without its dependencies (torch, the op)
        problem = environment_problem(exc)
        if problem is None and not isinstance(exc, ImportError):
            raise
        raise (problem or EnvironmentProblemError(f"{name} needs the PyTorch side: {TORCH_HINT} ({exc})")) from exc
    return TorchReference(module, name)


def make_reference(reference: ReferenceLike, candidate: onnx.ModelProto, *, scales_argument: bool = False) -> Reference:
    """Turn a reference spec into a :class:`Reference`.

    Strings: ``python:MODULE:CALLABLE`` (routed), ``python-scales:MODULE:CALLABLE`` (MODULE may
    be a ``.py`` path), ``onnx-reference``, a registered name (``torch:srcnn``), or a path to an
    ONNX model. Objects: a ModelProto, a :class:`Reference`, or an ``nn.Module``/callable
    (routed; called with ``scales`` when ``scales_argument=True``). See the module docstring.
    Raises :class:`OnnxToolError` (exit 3) for a spec it cannot use.
    """
    if isinstance(reference, Reference):
        return reference
    if isinstance(reference, onnx.ModelProto):
        return OnnxModelReference(reference, "<ModelProto>")
    if isinstance(reference, str) and not reference.strip():
        raise UsageError(f"empty reference: give {_SPECS}")
    if isinstance(reference, str) and reference == "onnx-reference":
        return EvaluatorReference(candidate)
    if isinstance(reference, str) and reference.startswith("python-scales:"):
        return TorchReference(_load_python_callable(reference), reference)
    if isinstance(reference, str) and reference.startswith("python:"):
        if scales_argument:  # chosen explicitly: the module is written as module(x, scales)
            return TorchReference(_load_python_callable(reference), reference)
        return _routed_reference(_load_python_callable(reference), reference, candidate)
    if isinstance(reference, str) and reference.startswith("torch:"):
        return _named_reference(reference)
    if isinstance(reference, (str, Path)):
        path = Path(reference)
        if not path.exists():
            # a path that is not there is a missing input file (exit 3, like a missing model);
            # a bare word that names nothing is a usage mistake (exit 2)
            error = (
                InvalidInputError
                if (isinstance(reference, Path) or os.sep in reference or reference.endswith(".onnx"))
                else UsageError
            )
            raise error(f"unknown reference {str(reference)!r}: not a file, and not {_SPECS}")
        return OnnxModelReference(load_onnx(path, "reference"), str(path))
    if callable(reference):
        label = getattr(type(reference), "__name__", "callable")
        if scales_argument:
            return TorchReference(reference, label)
        return _routed_reference(reference, label, candidate)
    raise UsageError(f"cannot use a {type(reference).__name__} as a reference")
