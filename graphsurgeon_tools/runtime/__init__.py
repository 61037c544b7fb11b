"""Run models with plugin nodes in ONNX Runtime: :func:`make_session` and the kernel behind them.

``session`` makes the sessions: plugin nodes run in the compiled ORT library
(``ort_library``: find, build, cache, register) where it is built, else through the
onnxruntime-extensions bridge; ``kernels`` is the bridge's DynamicTRTResize kernel (a
registered fast backend, else the onnx.reference fallback). The other submodules:
``provenance`` (what ran, for the evidence record), ``environment`` (``doctor``),
``build_cache`` and ``ort_headers`` (the library's build).

A lazy package face (PEP 562), like the top-level package's: the names below and the
submodules import on first use, so ``from graphsurgeon_tools import runtime`` costs nothing
until a session is made (a pass run without its check never makes one). Importing this
package, or any submodule of it, does not import onnxruntime, torch or ``exporters``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphsurgeon_tools.lazy import lazy_face

if TYPE_CHECKING:  # the names as type checkers see them; at run time __getattr__ imports them
    from graphsurgeon_tools.runtime import (
        build_cache,
        environment,
        kernels,
        ort_headers,
        ort_library,
        provenance,
        session,
    )
    from graphsurgeon_tools.runtime.kernels import KERNEL_OP_TYPES, kernel_backend, resize_kernel
    from graphsurgeon_tools.runtime.session import make_session, plugin_nodes

#: name -> the submodule that defines it
_EXPORTS = {
    "KERNEL_OP_TYPES": "kernels",
    "kernel_backend": "kernels",
    "resize_kernel": "kernels",
    "make_session": "session",
    "plugin_nodes": "session",
}
_SUBMODULES = ("build_cache", "environment", "kernels", "ort_headers", "ort_library", "provenance", "session")

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_face(__name__, _EXPORTS, _SUBMODULES)
