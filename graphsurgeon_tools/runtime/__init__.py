"""Run models with plugin nodes in ONNX Runtime: :func:`make_session` and the kernel behind them.

``session`` makes the sessions: plugin nodes run in the compiled ORT library
(``ort_library``: find, build, cache, register) where it is built, else through the
onnxruntime-extensions bridge; ``kernels`` is the bridge's DynamicTRTResize kernel (a
registered fast backend, else the onnx.reference fallback). Importing this package does
not import onnxruntime, torch or ``exporters``.
"""

from graphsurgeon_tools.runtime.kernels import KERNEL_OP_TYPES, kernel_backend, resize_kernel
from graphsurgeon_tools.runtime.session import make_session, plugin_nodes

__all__ = ["KERNEL_OP_TYPES", "kernel_backend", "make_session", "plugin_nodes", "resize_kernel"]
