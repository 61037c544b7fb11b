"""The demo (``onnxtool demo`` / ``make demo``): the whole story on the built-in SRCNN, from nothing.

::

    srcnn("static", factor=3) --export (TorchScript)--> srcnn_static_x3.onnx   (scales baked in)
        --make_dynamic_scale--> srcnn_dynamic.onnx        (scales: a graph input)
        --validate vs torch:srcnn at x2, x3, x4, and vs the static file at x3
        --swap_plugin--> srcnn_plugin.onnx                (DynamicTRTResize node)
        --validate vs torch:srcnn at x2, x3, x4 (the plugin node runs in ORT)
        --images: input.png, bicubic_xF.png, srcnn_xF.png, ground_truth_x3.png
    transformers Swin2SR (nearest+conv, random weights; needs transformers) --export--> swin2sr_static_x4.onnx
        --make_dynamic_scale--> swin2sr_dynamic.onnx --validate vs its unmodified module at x2, x3, x4
        --images: swin2sr_input.png, swin2sr_xF.png           (see exporters.demo_swin2sr)
        --report.json

It lives on the PyTorch side (it exports, and its reference is a PyTorch model), so
it may import torch at module level; ``graphsurgeon_tools`` imports it only inside
the ``demo`` command. Library code: nothing is printed; :func:`run_demo` returns a
:class:`DemoResult` that the CLI summarises. Every file is written atomically. A demo that
fails (an exception: torch's op cannot be built, a full disk) removes every file and folder it
created before the error goes on; files of an earlier run that it had already replaced stay.
The result (and report.json) carries the evidence record of the whole run
(:mod:`graphsurgeon_tools.runtime.provenance`), and each validation its own.
It does not download anything: the picture is ``skimage.data.astronaut`` (held out
from the weights' training), or a generated test card when scikit-image is missing.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
import torch
import torch.nn.functional as F

from exporters.demo_swin2sr import run_swin2sr_demo
from exporters.models import scales_tensor, srcnn
from exporters.onnx_export import export
from graphsurgeon_tools import make_dynamic_scale, make_session, save_model, swap_plugin, validate
from graphsurgeon_tools.certify import certify
from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.io import write_bytes_atomic
from graphsurgeon_tools.runtime.provenance import evidence_record, recording

__all__ = ["DEFAULT_OUT_DIR", "DemoResult", "run_demo", "sample_image"]

DEFAULT_OUT_DIR = Path("demo_out")
DEMO_FACTORS: tuple[float, ...] = (2.0, 3.0, 4.0)
BAKED_FACTOR = 3.0
CERTIFY_PROFILE = "16..288:"  # every side length up to the demo image's (then its factors)
# A 288 x 288 crop (divisible by 2, 3 and 4) of the astronaut's face and badge.
_CROP = (slice(0, 288), slice(112, 400))
_PSNR_BORDER = 6  # the convolutions' zero padding disturbs the outermost pixels


@dataclass
class DemoResult:
    """What the demo made: files by role, validation reports by name, image quality, timings."""

    out_dir: Path
    files: dict[str, Path] = field(default_factory=dict)
    validations: dict[str, Any] = field(default_factory=dict)  # name -> ValidationReport
    psnr_db: dict[str, float] = field(default_factory=dict)
    image_source: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    evidence: dict[str, Any] = field(default_factory=dict)  # versions, kernels, the models' sha256

    @property
    def passed(self) -> bool:
        return bool(self.validations) and all(report.passed for report in self.validations.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "out_dir": str(self.out_dir),
            "files": {name: str(path) for name, path in self.files.items()},
            "validations": {name: report.to_dict() for name, report in self.validations.items()},
            "psnr_db": self.psnr_db,
            "image_source": self.image_source,
            "steps": self.steps,
            "seconds": round(self.seconds, 2),
            "evidence": self.evidence,
        }


def sample_image() -> tuple[np.ndarray, str]:
    """A 288 x 288 RGB float32 image in [0, 1] (H, W, 3) and where it came from."""
    try:
        import skimage.data  # deferred: optional scikit-image (a test card without it)

        array = np.asarray(skimage.data.astronaut())[_CROP].astype(np.float32) / 255.0
        return array, "skimage.data.astronaut (crop rows 0:288, cols 112:400)"
    except Exception:  # scikit-image is a dev extra: fall back to a generated test card
        y, x = np.mgrid[0:288, 0:288].astype(np.float32) / 287.0
        rings = 0.5 + 0.5 * np.cos(60 * ((x - 0.5) ** 2 + (y - 0.5) ** 2))
        card = np.stack([x, rings, y], axis=-1)
        card[96:192, 96:192] = (card[96:192, 96:192] > 0.5).astype(np.float32)
        return card.astype(np.float32), "generated test card (scikit-image not installed)"


def _to_tensor(image: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(image)).permute(2, 0, 1).unsqueeze(0).contiguous()


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    crop = (Ellipsis, slice(_PSNR_BORDER, -_PSNR_BORDER), slice(_PSNR_BORDER, -_PSNR_BORDER))
    mse = float(np.mean((np.clip(a, 0, 1)[crop] - b[crop]) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(1.0 / mse)


def _write_png(array_nchw: np.ndarray, path: Path) -> Path:
    from PIL import Image  # deferred: Pillow, only to write the demo's images

    pixels = np.clip(array_nchw[0].transpose(1, 2, 0), 0.0, 1.0)
    image = Image.fromarray(np.round(pixels * 255).astype(np.uint8), mode="RGB")
    encoded = io.BytesIO()
    image.save(encoded, format="PNG")
    return write_bytes_atomic(encoded.getvalue(), path)


def _write_text(text: str, path: Path) -> Path:
    return write_bytes_atomic(text.encode("utf-8"), path)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def run_demo(
    out_dir: Union[str, os.PathLike] = DEFAULT_OUT_DIR,
    *,
    factors: Sequence[float] = DEMO_FACTORS,
    progress: Optional[Callable[[str], None]] = None,
) -> DemoResult:
    """Run the demo into ``out_dir`` (created if missing; the demo's own files are overwritten).

    ``factors`` is the validation sweep and the set of images made. Returns the result
    whether or not the validations passed (``result.passed``); raises
    :class:`UsageError` when ``out_dir`` exists and is not a folder. Needs the PyTorch
    side (torch, the C++ op) and Pillow; does not need TensorRT or a network.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder")
    missing = [folder for folder in (out, *out.parents) if not folder.exists()]
    before = set(out.rglob("*")) if out.is_dir() else set()
    out.mkdir(parents=True, exist_ok=True)
    try:
        with recording() as ran:
            return _run(out, [float(f) for f in factors], progress, ran)
    except BaseException:
        _remove_new(out, before, missing)
        raise


def _remove_new(out: Path, before: set[Path], made: list[Path]) -> None:
    """Undo a failed demo: the files and folders it created in ``out``, then the folders it made."""
    for path in sorted(set(out.rglob("*")) - before, key=lambda p: len(p.parts), reverse=True):
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        except OSError:  # cleaning up must not hide the error that made the demo fail
            pass
    for folder in made:  # deepest first: out, then the parents it had to create
        try:
            folder.rmdir()
        except OSError:
            break


def _run(out: Path, factors: list[float], progress: Optional[Callable[[str], None]], ran: Any) -> DemoResult:
    started = time.perf_counter()
    result = DemoResult(out_dir=out)

    def step(name: str, detail: str, **extra: Any) -> None:
        result.steps.append(
            {"step": name, "detail": detail, "seconds": round(time.perf_counter() - started, 2), **extra}
        )
        if progress:
            progress(f"{name}: {detail}")

    # 1. The model a user starts from, exported the normal way: the factor is a constant.
    static_path = out / "srcnn_static_x3.onnx"
    model = srcnn("static", factor=BAKED_FACTOR)
    export(
        model,
        model.example_inputs(BAKED_FACTOR),
        static_path,
        exporter="torchscript",
        input_names=["input"],
        output_names=["output"],
    )
    result.files["static_model"] = static_path
    step("export", f"{static_path.name} (TorchScript exporter, scales baked at x3)")

    # 2. The rewrite: Resize's constant scales become a graph input.
    dynamic = make_dynamic_scale(static_path)
    dynamic_path = out / "srcnn_dynamic.onnx"
    save_model(dynamic.model, dynamic_path)
    result.files["dynamic_model"] = dynamic_path
    step(
        "make-dynamic-scale",
        f"{dynamic_path.name} (scales input: "
        f"{', '.join(i.name for i in dynamic.model.graph.input if i.name != 'input')})",
    )

    # 3. Proof: the rewritten model against the PyTorch model that resizes with the C++ op,
    #    and against the file it came from at the factor baked into that file (bit-exact).
    result.validations["dynamic_vs_torch"] = validate(dynamic_path, "torch:srcnn", factors=factors)
    result.validations["dynamic_vs_static"] = validate(
        dynamic_path, static_path, factors=[BAKED_FACTOR], atol=0.0, rtol=0.0
    )
    step("validate", f"{dynamic_path.name} vs torch:srcnn at {', '.join(f'x{f:g}' for f in factors)}")

    # 4. The TensorRT hand-off: Resize -> DynamicTRTResize; ORT runs the node with our kernel.
    plugin = swap_plugin(dynamic.model)
    plugin_path = out / "srcnn_plugin.onnx"
    save_model(plugin.model, plugin_path)
    result.files["plugin_model"] = plugin_path
    # ... with a certificate: every length of SRCNN's profile at each factor, per axis, every engine.
    certificate = certify(plugin_path, "torch:srcnn", profile=CERTIFY_PROFILE + ",".join(f"{f:g}" for f in factors))
    result.files["certificate"] = write_bytes_atomic(
        (json.dumps(certificate.to_dict(), indent=1, allow_nan=False) + "\n").encode("utf-8"), out / "certificate.json"
    )
    result.validations["plugin_vs_torch"] = validate(
        plugin_path, "torch:srcnn", factors=factors, certificate=certificate
    )
    step("swap-plugin", f"{plugin_path.name} validated vs torch:srcnn; {certificate.summary_line()}")

    # 5. Pictures: one low-resolution input, then plain bicubic and SRCNN at each factor.
    image, source = sample_image()
    result.image_source = source
    high = _to_tensor(image)
    low = F.interpolate(
        high, scale_factor=1.0 / BAKED_FACTOR, mode="bicubic", antialias=True, align_corners=False
    ).clamp(0.0, 1.0)
    low_np = low.numpy()
    result.files["input_image"] = _write_png(low_np, out / "input.png")
    result.files["ground_truth_x3"] = _write_png(high.numpy(), out / "ground_truth_x3.png")
    session = make_session(dynamic_path)
    scale_name = next(i.name for i in session.get_inputs() if i.name != "input")
    for factor in factors:
        bicubic = F.interpolate(low, scale_factor=factor, mode="bicubic", align_corners=False).numpy()
        (sr,) = session.run(None, {"input": low_np, scale_name: scales_tensor(factor).numpy()})
        tag = f"x{factor:g}"
        result.files[f"bicubic_{tag}"] = _write_png(bicubic, out / f"bicubic_{tag}.png")
        result.files[f"srcnn_{tag}"] = _write_png(sr, out / f"srcnn_{tag}.png")
        if factor == BAKED_FACTOR and sr.shape == high.shape:
            result.psnr_db["bicubic_x3"] = _psnr(bicubic, image.transpose(2, 0, 1)[None])
            result.psnr_db["srcnn_x3"] = _psnr(sr, image.transpose(2, 0, 1)[None])
    step("images", f"input.png {low_np.shape[3]}x{low_np.shape[2]} from {source}")

    # 6. A model a user would bring: transformers' Swin2SR, exported normally, made dynamic and
    #    validated against its own unmodified module (its resizes routed through the C++ op).
    second = run_swin2sr_demo(out, low_np, [f for f in factors if f <= 4], step=step, write_png=_write_png)
    if second is not None:
        result.validations.update(second[0])
        result.files.update(second[1])

    result.seconds = time.perf_counter() - started
    result.evidence = evidence_record(
        ran,
        models=[
            (role.removesuffix("_model"), result.files[role])
            for role in ("static_model", "dynamic_model", "plugin_model")
        ],
        torch_reference=True,
    )
    report_path = out / "report.json"
    result.files["report"] = report_path
    _write_text(json.dumps(_json_safe(result.to_dict()), indent=2, allow_nan=False) + "\n", report_path)
    return result
