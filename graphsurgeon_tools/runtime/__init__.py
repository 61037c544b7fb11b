"""Run models with plugin nodes in ONNX Runtime: :func:`make_session` and the kernel behind them.

``session`` holds the onnxruntime-extensions bridge; ``kernels`` the DynamicTRTResize kernel
(a registered fast backend, else the onnx.reference fallback). Importing this package does
not import onnxruntime, torch or ``exporters``.
"""

from graphsurgeon_tools.runtime.kernels import KERNEL_OP_TYPES, kernel_backend, resize_kernel
from graphsurgeon_tools.runtime.session import make_session, plugin_nodes

__all__ = ["KERNEL_OP_TYPES", "kernel_backend", "make_session", "plugin_nodes", "resize_kernel"]
