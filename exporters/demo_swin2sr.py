"""The demo's second model: a model a user would bring, validated against its own unmodified module.

::

    transformers Swin2SRForImageSuperResolution(upsampler="nearest+conv", random weights)
        --export (TorchScript, as transformers' docs do)--> swin2sr_static_x4.onnx   (two nearest x2 sites)
        --make_dynamic_scale--> swin2sr_dynamic.onnx    (scales_0, scales_1: one input per site)
        --validate vs the unmodified module (resizes routed through the C++ op) at x2, x3, x4
        --images: swin2sr_input.png, swin2sr_x2.png, swin2sr_x3.png, swin2sr_x4.png (contrast-stretched)

A total factor ``F`` is split over the two sites as ``(F / 2, 2)``, so the first site
runs x1, x1.5 and x2 and the second stays x2: Swin2SR crops its output to its native x4
size (``reconstruction[:, :, :h*4, :w*4]``), which any total within x4 leaves alone.
Each validation fixes both scale inputs (``inputs=``), and the reference reads the same
per-site factors from the candidate's feeds.

Requires: transformers (the ``realmodels`` extra); without it :func:`run_swin2sr_demo`
returns None and the demo says why. The weights are random (seeded, no download): the
pictures show sizes and the pipeline, not super-resolution quality (each channel is contrast-
stretched to its own range; the validations compare the raw outputs).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np
import onnx
import torch

from graphsurgeon_tools import make_dynamic_scale, make_session, save_model, validate

__all__ = ["build_swin2sr", "run_swin2sr_demo", "site_split"]

INPUT_SIZE = 48  # the centre crop of the demo's low-resolution input fed to Swin2SR


def build_swin2sr() -> Any:
    """A small Swin2SR ``nearest+conv`` x4 built by transformers' own code, random weights (seed 0), eval mode."""
    from transformers import Swin2SRConfig, Swin2SRForImageSuperResolution  # deferred: optional transformers

    torch.manual_seed(0)
    config = Swin2SRConfig(
        image_size=INPUT_SIZE,
        patch_size=1,
        num_channels=3,
        embed_dim=16,
        depths=[1, 1],
        num_heads=[2, 2],
        window_size=8,
        upscale=4,
        upsampler="nearest+conv",
        img_range=1.0,
    )
    config._attn_implementation = "eager"  # scaled_dot_product_attention: no TorchScript symbolic before opset 14
    return Swin2SRForImageSuperResolution(config).eval()


def site_split(total: float) -> tuple[float, float]:
    """Per-site factors for a total upscale ``total`` (at most the native x4): ``(total / 2, 2)``."""
    return (total / 2.0, 2.0)


def run_swin2sr_demo(
    out: Path,
    low: np.ndarray,
    factors: Sequence[float],
    *,
    step: Callable[..., None],
    write_png: Callable[[np.ndarray, Path], Path],
) -> Optional[tuple[dict[str, Any], dict[str, Path]]]:
    """Export, make dynamic, validate and picture Swin2SR; ``(validations, files)``, or None without transformers.

    Args:
        out: the demo folder. low: the demo's low-resolution input, NCHW float32 in [0, 1].
        factors: total upscale factors (each at most 4). step: the demo's progress recorder
            ``step(name, detail)``. write_png: the demo's atomic PNG writer.
    """
    try:
        import transformers  # noqa: F401  # deferred: optional transformers (the realmodels extra)
    except ImportError as exc:
        step("swin2sr", f"skipped: transformers is not installed ({exc}); pip install 'onnxtool[realmodels]'")
        return None

    started = time.perf_counter()
    module = build_swin2sr()
    top = (low.shape[2] - INPUT_SIZE) // 2
    left = (low.shape[3] - INPUT_SIZE) // 2
    x = np.ascontiguousarray(low[:, :, top : top + INPUT_SIZE, left : left + INPUT_SIZE])
    files: dict[str, Path] = {}
    static_path = out / "swin2sr_static_x4.onnx"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's tracer warnings on transformers code
        torch.onnx.export(
            module,
            (torch.from_numpy(x),),
            str(static_path),
            dynamo=False,
            opset_version=17,
            input_names=["input"],
            output_names=["output"],
        )
    files["swin2sr_static_model"] = static_path
    step("swin2sr export", f"{static_path.name} (transformers Swin2SR nearest+conv, random weights, TorchScript)")

    dynamic = make_dynamic_scale(onnx.load(str(static_path)))
    dynamic_path = out / "swin2sr_dynamic.onnx"
    save_model(dynamic.model, dynamic_path)
    files["swin2sr_dynamic_model"] = dynamic_path
    scale_names = [i.name for i in dynamic.model.graph.input if i.name != "input"]
    step("swin2sr make-dynamic-scale", f"{dynamic_path.name} (scale inputs: {', '.join(scale_names)})")

    validations: dict[str, Any] = {}
    session = make_session(dynamic_path)
    write_png(x, out / "swin2sr_input.png")
    files["swin2sr_input"] = out / "swin2sr_input.png"
    for total in factors:
        per_site = site_split(float(total))
        fixed = {name: np.array([1.0, 1.0, f, f], np.float32) for name, f in zip(scale_names, per_site)}
        tag = f"x{float(total):g}"
        validations[f"swin2sr_{tag}_vs_module"] = validate(
            dynamic_path, module, factors=[float(total)], inputs={"input": x, **fixed}
        )
        (sr,) = session.run(None, {"input": x, **fixed})
        # Random weights give a nearly flat image: stretch its range so the structure shows.
        low_c, high_c = sr.min(axis=(0, 2, 3), keepdims=True), sr.max(axis=(0, 2, 3), keepdims=True)
        stretched = (sr - low_c) / np.maximum(high_c - low_c, 1e-12)
        files[f"swin2sr_{tag}"] = write_png(stretched, out / f"swin2sr_{tag}.png")
    step(
        "swin2sr validate",
        f"{dynamic_path.name} vs its unmodified module at "
        f"{', '.join(f'x{float(f):g}' for f in factors)} ({time.perf_counter() - started:.1f} s)",
    )
    return validations, files
