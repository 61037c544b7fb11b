"""What the PyTorch side adds to graphsurgeon_tools: the ``onnxtool.extensions`` entry point.

``register()`` fills :mod:`graphsurgeon_tools.extensions` with:

* the reference ``torch:srcnn`` (the built-in SRCNN resizing with the C++ op, shipped weights);
* the runner of PyTorch modules (``python:MODULE:CALLABLE`` and ``nn.Module`` references: its
  ``reference(module, label, candidate)`` builds the routed reference, exporters.module_reference);
* the fast plugin-node kernel ``"cpp"`` (the C++ resize op, ONNX Resize semantics);
* the per-axis resize readers ``certify`` compares (``"torch-routed"``, ``"torch-interpolate"``,
  exporters.certify_readers);
* the implementations of ``onnxtool export srcnn`` (``"export-srcnn"``) and ``onnxtool demo``
  (``"demo"``);
* the torch op's status (``"torch-op"``: where its library is, its sha256, whether torch is
  here), read by ``onnxtool doctor`` and the evidence record; it never builds.

Requires: nothing at import; torch and the C++ library are imported only when a registered
factory is called. Ensures: a factory whose dependency is missing raises ImportError (or
OnnxToolError with the reason), which graphsurgeon_tools turns into one line for the user.
Does NOT build the C++ library at registration.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from exporters.build import status
from graphsurgeon_tools import extensions
from graphsurgeon_tools.errors import EnvironmentProblemError


def register() -> None:
    """Entry point ``exporters.registrations:register`` (group ``onnxtool.extensions``)."""
    extensions.register_reference("torch:srcnn", torch_srcnn)
    extensions.register_module_runner(TorchModuleRunner())
    extensions.register_kernel("cpp", load_cpp_kernel)
    extensions.register_resize_reader("torch-routed", lambda semantics: _resize_reader(semantics, routed=True))
    extensions.register_resize_reader("torch-interpolate", lambda semantics: _resize_reader(semantics, routed=False))
    extensions.register_command("export-srcnn", export_srcnn)
    extensions.register_command("demo", demo)
    extensions.register_status("torch-op", torch_op_status)


def torch_op_status() -> Any:
    """The torch op's library as it stands (``exporters.build.status()``: available, path, sha256,
    build_dir, source, reason, buildable), read without building or loading anything."""
    return status()


def torch_srcnn() -> Any:
    """The built-in SRCNN (``variant="cxx-op"``, shipped weights), its C++ op loaded now."""
    from exporters.models import srcnn  # deferred: torch; ImportError without it (the registry says what to install)

    try:
        from exporters.ops import load_library  # deferred: torch

        load_library()  # now, so a missing or broken build is one clear error, not a failed sweep
    except ImportError as exc:
        raise EnvironmentProblemError(
            f"reference 'torch:srcnn' resizes with onnxtool's C++ op, which is unavailable: {exc}"
        ) from exc
    return srcnn(variant="cxx-op", pretrained=True)


class TorchModuleRunner:
    """Runs a PyTorch module on numpy arrays (the calling convention of graphsurgeon_tools.validation.references)."""

    def run(self, module: Any, arrays: Sequence[np.ndarray], scales: Optional[np.ndarray]) -> list[np.ndarray]:
        import torch  # deferred: torch; registrations import without it

        from exporters.module_reference import flatten_outputs, module_dtype  # deferred: torch

        args = [torch.from_numpy(array) for array in arrays]
        wanted = module_dtype(module)  # the precision the module computes in: float data cast at the boundary
        if wanted is not None:
            args = [a.to(wanted) if a.is_floating_point() else a for a in args]
        if scales is not None:
            args.append(torch.from_numpy(np.asarray(scales, dtype=np.float32)))
        with torch.no_grad():
            result = module(*args)
        given = next((np.asarray(a).dtype for a in arrays if np.issubdtype(np.asarray(a).dtype, np.floating)), None)
        values = [value.detach().cpu().numpy() for value in flatten_outputs(result)]
        return [
            v.astype(given, copy=False) if given is not None and np.issubdtype(v.dtype, np.floating) else v
            for v in values
        ]

    def reference(self, module: Any, label: str, candidate: Any) -> Any:
        """``module`` as validate's routed reference (:class:`exporters.module_reference.RoutedModuleReference`)."""
        from exporters.module_reference import RoutedModuleReference  # deferred: torch

        return RoutedModuleReference(module, label, candidate)

    def parameters(self, module: Any) -> dict[str, np.ndarray]:
        state = getattr(module, "state_dict", None)
        if state is None:
            return {}
        return {name: value.detach().cpu().numpy() for name, value in state().items()}


def load_cpp_kernel() -> Callable[[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]], np.ndarray]:
    """The C++ resize op as a plugin-node kernel; ImportError when torch or the build is missing."""
    import torch  # deferred: torch; registrations import without it

    from exporters.ops import load, resize  # deferred: torch

    load()  # now (building it if needed): a missing or broken library is an ImportError here, not mid-run

    def run(x: np.ndarray, scales: np.ndarray, sizes: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        # torch.from_numpy warns on read-only memory (ORT may hand us such buffers); copying is cheap next to the resize
        if not x.flags.writeable:
            x = x.copy()
        scales = np.array(scales, dtype=np.float64)  # a private, writable copy (a handful of numbers)
        return resize(torch.from_numpy(x), torch.from_numpy(scales), **params).numpy()

    return run


def _resize_reader(semantics: Any, *, routed: bool) -> Any:
    from exporters.certify_readers import load_reader  # deferred: torch, only when certify asks

    return load_reader(semantics, routed=routed)


def export_srcnn(path: Any = None, **options: Any) -> Any:
    """``exporters.onnx_export.export_srcnn`` (see there for the options)."""
    from exporters.onnx_export import export_srcnn as run  # deferred: torch

    return run(path, **options)


def demo(
    out_dir: Any, *, factors: Optional[Sequence[float]] = None, progress: Optional[Callable[[str], None]] = None
) -> Any:
    """``exporters.demo.run_demo``; ``factors=None`` is the demo's own sweep (2, 3, 4)."""
    from exporters.demo import DEMO_FACTORS, run_demo  # deferred: torch

    return run_demo(out_dir, factors=DEMO_FACTORS if factors is None else tuple(factors), progress=progress)
