"""onnxtool's ONNX side: find Resize/Upsample sites, rewrite them, prove the rewrite right.

The public API, all importable from here::

    from graphsurgeon_tools import (
        load_model, save_model, find_resize_sites,
        make_dynamic_scale, swap_plugin, set_factor, validate, make_session, certify,
        doctor,
    )

Every function takes a ``onnx.ModelProto`` or a path and returns a result object;
none of them writes files except :func:`save_model`. Names resolve lazily, so
``import graphsurgeon_tools`` stays cheap and never imports torch or onnxruntime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphsurgeon_tools.errors import (
    CheckFailedError,
    EnvironmentProblemError,
    ExitCode,
    InvalidInputError,
    InvalidModelError,
    InvalidScalesError,
    OnnxToolError,
    OutputIOError,
    PostconditionError,
    PreconditionError,
    RefusedRequestError,
    ResourceLimitError,
    UnsafeExternalDataError,
    UnsupportedModelError,
    UsageError,
)
from graphsurgeon_tools.lazy import lazy_face

__version__ = "0.1.0"

# name -> module that defines it; resolved on first attribute access (PEP 562).
_LAZY = {
    "load_model": "graphsurgeon_tools.io",
    "save_model": "graphsurgeon_tools.io",
    "find_resize_sites": "graphsurgeon_tools.resize",
    "ResizeSite": "graphsurgeon_tools.resize",
    "make_dynamic_scale": "graphsurgeon_tools.passes.make_dynamic_scale",
    "DynamicScaleResult": "graphsurgeon_tools.passes.make_dynamic_scale",
    "swap_plugin": "graphsurgeon_tools.passes.swap_plugin",
    "SwapPluginResult": "graphsurgeon_tools.passes.swap_plugin",
    "set_factor": "graphsurgeon_tools.passes.set_factor",
    "SetFactorResult": "graphsurgeon_tools.passes.set_factor",
    "PluginSpec": "graphsurgeon_tools.plugins",
    "InvalidSpecError": "graphsurgeon_tools.plugins",
    "make_session": "graphsurgeon_tools.runtime",
    "doctor": "graphsurgeon_tools.runtime.environment",
    "DoctorReport": "graphsurgeon_tools.runtime.environment",
    "validate": "graphsurgeon_tools.validation",
    "certify": "graphsurgeon_tools.certify",
    "verify_certificate": "graphsurgeon_tools.certify",
    "Certificate": "graphsurgeon_tools.certify",
    "ValidationReport": "graphsurgeon_tools.validation",
    "Refusal": "graphsurgeon_tools.refusal",
    "Fix": "graphsurgeon_tools.refusal",
}

__all__ = [
    "CheckFailedError",
    "EnvironmentProblemError",
    "ExitCode",
    "InvalidInputError",
    "InvalidModelError",
    "InvalidScalesError",
    "OnnxToolError",
    "OutputIOError",
    "PostconditionError",
    "PreconditionError",
    "RefusedRequestError",
    "ResourceLimitError",
    "UnsafeExternalDataError",
    "UnsupportedModelError",
    "UsageError",
    *_LAZY,
]


__getattr__, __dir__ = lazy_face(__name__, _LAZY)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from graphsurgeon_tools.certify import Certificate, certify, verify_certificate
    from graphsurgeon_tools.io import load_model, save_model
    from graphsurgeon_tools.passes.make_dynamic_scale import DynamicScaleResult, make_dynamic_scale
    from graphsurgeon_tools.passes.set_factor import SetFactorResult, set_factor
    from graphsurgeon_tools.passes.swap_plugin import SwapPluginResult, swap_plugin
    from graphsurgeon_tools.plugins import InvalidSpecError, PluginSpec
    from graphsurgeon_tools.resize import ResizeSite, find_resize_sites
    from graphsurgeon_tools.runtime import make_session
    from graphsurgeon_tools.validation import ValidationReport, validate
