"""The one door between graph surgery and the optional PyTorch side: a registry filled by plugins.

``graphsurgeon_tools`` never imports ``exporters`` or torch. Code that can use them asks this
registry instead, and packages that provide them register here from an entry point::

    [project.entry-points."onnxtool.extensions"]
    exporters = "exporters.registrations:register"

What can be registered:

* references for ``validate`` (``register_reference("torch:srcnn", factory)``; ``factory()``
  returns an ``nn.Module`` or callable following the PyTorch calling convention of
  :mod:`graphsurgeon_tools.validation.references`);
* fast kernels behind plugin nodes (``register_kernel("cpp", loader)``; ``loader()`` returns
  ``fn(x, scales, sizes, attrs) -> np.ndarray`` or raises ImportError/OSError/RuntimeError when
  unavailable, see :mod:`graphsurgeon_tools.runtime.kernels`);
* the runner of PyTorch modules (``register_module_runner(runner)``; ``runner.run(module,
  arrays, scales) -> list[np.ndarray]`` calls the module under ``no_grad`` on numpy inputs,
  ``runner.parameters(module) -> dict[str, np.ndarray]`` reads its weights);
* per-axis resize readers for ``certify`` (``register_resize_reader("torch-routed", loader)``;
  ``loader(semantics) -> (fn, note) | None`` for a dict of Resize semantics, ``fn(x, factor,
  axis) -> np.ndarray`` resizing a ``1 x 1 x K x L`` / ``1 x 1 x L x K`` float32 probe along
  axis "w" / "h"; None when the implementation has no call with those semantics);
* command implementations the CLI offers only with the PyTorch side
  (``register_command("export-srcnn", fn)``, ``register_command("demo", fn)``).

* what the PyTorch side can say about itself without building anything
  (``register_status("torch-op", fn)``; ``fn()`` returns the torch op's build status, read by
  ``onnxtool doctor`` and by the evidence record of a report).

An environment problem is one thing wherever it surfaces: :func:`environment_problem` turns an
exception whose chain holds an :class:`EnvironmentProblemError` (the C++ op that cannot be built)
or a ``ModuleNotFoundError`` for an optional dependency (torch, onnxscript, ninja, pillow) into
ONE :class:`EnvironmentProblemError` (exit 5) naming the install command.

Requires: nothing; entry points are loaded once, on the first lookup (:func:`load_extensions`).
Ensures: lookups of a name nobody registered raise :class:`EnvironmentProblemError` with ONE line
saying what to install; a registered command whose dependencies are missing raises the same.
An extension that fails to import is remembered (its error is in that line), never raised at
start-up.
Does NOT import any extension at ``import graphsurgeon_tools`` time.
"""

from __future__ import annotations

import functools
import threading
from importlib.metadata import entry_points
from typing import Any, Callable, Optional

from graphsurgeon_tools.errors import EnvironmentProblemError, OnnxToolError, UsageError

__all__ = [
    "ENTRY_POINT_GROUP",
    "TORCH_HINT",
    "command",
    "environment_problem",
    "kernel_loaders",
    "load_extensions",
    "module_runner",
    "reference_factory",
    "reference_names",
    "register_command",
    "register_kernel",
    "register_module_runner",
    "register_reference",
    "register_resize_reader",
    "resize_readers",
    "register_status",
    "status",
]

ENTRY_POINT_GROUP = "onnxtool.extensions"
TORCH_HINT = "pip install 'onnxtool[torch]'"
# Optional dependencies (top-level module names) and the one command that provides each.
OPTIONAL_MODULES = {
    "torch": TORCH_HINT,
    "onnxscript": TORCH_HINT,
    "ninja": TORCH_HINT,
    "PIL": TORCH_HINT,
    "exporters": TORCH_HINT,
}

_references: dict[str, Callable[[], Any]] = {}
_kernels: dict[str, Callable[[], Any]] = {}
_commands: dict[str, Callable[..., Any]] = {}
_status: dict[str, Callable[[], Any]] = {}
_module_runners: list[Any] = []
_resize_readers: dict[str, Callable[..., Any]] = {}
_failures: list[str] = []  # "entry point: ErrorType: message" of extensions that did not load
_loaded = False
_lock = threading.RLock()


def register_reference(name: str, factory: Callable[[], Any]) -> None:
    """Make ``name`` (e.g. ``"torch:srcnn"``) a reference ``validate`` accepts; ``factory()`` builds it."""
    _references[name] = factory


def register_kernel(name: str, loader: Callable[[], Any]) -> None:
    """Offer a fast plugin-node kernel backend called ``name``; the first registered one is used."""
    _kernels[name] = loader


def register_command(name: str, implementation: Callable[..., Any]) -> None:
    """Offer a command implementation (``"export-srcnn"``, ``"demo"``) to the CLI."""
    _commands[name] = implementation


def register_status(name: str, reporter: Callable[[], Any]) -> None:
    """Offer a status reporter (``"torch-op"``): ``reporter()`` says what is built, never builds."""
    _status[name] = reporter


def register_module_runner(runner: Any) -> None:
    """Offer the runner of PyTorch modules (``run`` and ``parameters``, see above); the last one wins."""
    _module_runners.append(runner)


def register_resize_reader(name: str, loader: Callable[..., Any]) -> None:
    """Offer a per-axis resize implementation to ``certify`` (see the module docstring)."""
    _resize_readers[name] = loader


def resize_readers() -> dict[str, Callable[..., Any]]:
    """The registered per-axis resize readers, in registration order (may be empty)."""
    load_extensions()
    return dict(_resize_readers)


def load_extensions() -> None:
    """Load every entry point of group ``onnxtool.extensions`` once; each is called with no arguments."""
    global _loaded
    with _lock:
        if _loaded:
            return
        _loaded = True

        for point in entry_points(group=ENTRY_POINT_GROUP):
            try:
                point.load()()
            except ImportError as exc:  # the extension's own dependencies are missing
                _failures.append(f"{point.value}: {type(exc).__name__}: {exc}")


def _missing(what: str) -> EnvironmentProblemError:
    why = f" ({'; '.join(_failures)})" if _failures else ""
    return EnvironmentProblemError(f"{what} needs the PyTorch side: {TORCH_HINT}{why}")


def environment_problem(exc: BaseException) -> Optional[EnvironmentProblemError]:
    """The environment problem behind ``exc`` (its cause/context chain included), or None.

    An :class:`EnvironmentProblemError` in the chain is returned as it is; a ``ModuleNotFoundError``
    for one of :data:`OPTIONAL_MODULES` becomes one naming its install command. Anything else
    (the user's own bug, a missing module of the user's) is not an environment problem."""
    seen: set[int] = set()
    link: Optional[BaseException] = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, EnvironmentProblemError):
            return link
        if isinstance(link, ModuleNotFoundError):
            top = (link.name or "").split(".")[0]
            if top in OPTIONAL_MODULES:
                return EnvironmentProblemError(f"{top} is not installed: {OPTIONAL_MODULES[top]}")
        link = link.__cause__ or (None if link.__suppress_context__ else link.__context__)
    return None


def reference_names() -> list[str]:
    """Names of the registered references, sorted."""
    load_extensions()
    return sorted(_references)


def reference_factory(name: str) -> Callable[[], Any]:
    """The factory registered for reference ``name``; OnnxToolError (one line) when none is."""
    load_extensions()
    factory = _references.get(name)
    if factory is not None:
        return factory
    if not _references:
        raise _missing(name)
    raise UsageError(f"unknown reference {name!r}: registered references are {', '.join(sorted(_references))}")


def kernel_loaders() -> dict[str, Callable[[], Any]]:
    """The registered fast kernel backends, in registration order (may be empty)."""
    load_extensions()
    return dict(_kernels)


def module_runner() -> Any:
    """The registered runner of PyTorch modules; OnnxToolError (one line) when none is."""
    load_extensions()
    if not _module_runners:
        raise _missing("a PyTorch reference")
    return _module_runners[-1]


def command(name: str) -> Callable[..., Any]:
    """The implementation registered for command ``name``; EnvironmentProblemError (one line) when
    none is, or when the implementation finds its dependencies missing (torch, the C++ op)."""
    load_extensions()
    implementation = _commands.get(name)
    if implementation is None:
        raise _missing(f"onnxtool {name.split('-')[0]}")

    @functools.wraps(implementation)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return implementation(*args, **kwargs)
        except OnnxToolError:
            raise
        except Exception as exc:
            problem = environment_problem(exc)
            if problem is None:
                raise
            raise problem from exc

    return run


def status(name: str) -> Optional[Any]:
    """What the reporter registered as ``name`` says (None when nobody registered one)."""
    load_extensions()
    reporter = _status.get(name)
    return None if reporter is None else reporter()
