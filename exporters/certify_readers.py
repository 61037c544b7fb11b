"""The PyTorch implementations ``onnxtool certify`` reads per axis (registered as resize readers).

* ``torch-routed``: ``F.interpolate`` run under :func:`exporters.routing.route_resize`, i.e.
  the C++ op ``torch.ops.onnxtool.resize`` with the attributes and scales the router passes
  for that call -- what a routed reference (``validate --reference python:...``) computes;
* ``torch-interpolate``: PyTorch's own ``F.interpolate`` (its kernels, its float32 steps).

``loader(semantics)`` finds the ``interpolate(mode=, align_corners=, antialias=)`` call whose
exported Resize has those semantics (pytorch_half_pixel counts as half_pixel: it is what the
TorchScript exporter writes for ``align_corners=False``); None when no call has them.

Requires: torch; the C++ op for ``torch-routed`` (built on first use). Ensures: each call
runs the probe once, on CPU, under ``no_grad``. Does NOT change any module.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import numpy as np
import torch
import torch.nn.functional as F

from exporters.ops import load_library
from exporters.routing import onnx_attributes, route_resize

__all__ = ["interpolate_call", "load_reader"]

_CALLS = (
    ("nearest", None, False),
    ("nearest-exact", None, False),
    ("bilinear", False, False),
    ("bilinear", True, False),
    ("bicubic", False, False),
    ("bicubic", True, False),
    ("bilinear", False, True),
    ("bicubic", False, True),
)


def interpolate_call(semantics: Mapping[str, Any]) -> Optional[tuple[str, Optional[bool], bool]]:
    """(mode, align_corners, antialias) of the interpolate call exported with ``semantics``; None if none."""
    ctm = semantics["coordinate_transformation_mode"]
    for mode, align, antialias in _CALLS:
        attrs = onnx_attributes(mode, align, antialias) or {}
        want_ctm = attrs["coordinate_transformation_mode"]
        if attrs["mode"] != semantics["mode"] or bool(attrs["antialias"]) != bool(semantics["antialias"]):
            continue
        if not (ctm == want_ctm or (ctm == "pytorch_half_pixel" and want_ctm == "half_pixel")):
            continue
        if attrs["mode"] == "nearest" and attrs["nearest_mode"] != semantics["nearest_mode"]:
            continue
        if attrs["mode"] == "cubic" and abs(attrs["cubic_coeff_a"] - float(semantics["cubic_coeff_a"])) > 1e-9:
            continue
        if bool(attrs.get("exclude_outside", False)) != bool(semantics["exclude_outside"]):
            continue
        return mode, align, antialias
    return None


def load_reader(semantics: Mapping[str, Any], *, routed: bool) -> Optional[tuple[Callable[..., Any], str]]:
    """``(fn, note)`` for the certify resize-reader registry (see graphsurgeon_tools.extensions)."""
    call = interpolate_call(semantics)
    if call is None:
        return None
    mode, align, antialias = call
    if routed:
        load_library()

    def run(x: np.ndarray, factor: float, axis: str) -> np.ndarray:
        factors = (float(factor), 1.0) if axis == "h" else (1.0, float(factor))
        tensor = torch.from_numpy(x)
        with torch.no_grad():
            if routed:
                with route_resize():
                    y = F.interpolate(tensor, scale_factor=factors, mode=mode, align_corners=align, antialias=antialias)
            else:
                y = F.interpolate(tensor, scale_factor=factors, mode=mode, align_corners=align, antialias=antialias)
        return y.numpy()

    spelled = (
        f"interpolate(mode={mode!r}"
        + (f", align_corners={align}" if align is not None else "")
        + (", antialias=True" if antialias else "")
        + ")"
    )
    how = "routed through torch.ops.onnxtool.resize" if routed else "PyTorch's own kernel"
    return run, f"{spelled}, {how} (torch {torch.__version__})"
