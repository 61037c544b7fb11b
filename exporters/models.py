"""The SRCNN family from the PyTorch -> ONNX super-resolution tutorial, one class per export style.

All variants take N x 3 x H x W images (any batch, height and width), upsample
them bicubically, then apply the same three convolutions (``conv1`` 9x9 3->64,
``conv2`` 1x1 64->32, ``conv3`` 5x5 32->3). They share one state_dict layout, so
the shipped checkpoint loads into every variant and their outputs are comparable.

=================  ==========================  ======================================
variant            forward inputs              how the upsampling is written
=================  ==========================  ======================================
static             (x)                         ``nn.Upsample(scale_factor=3)``: the
                                               factor is baked into the export
new-interpolate    (x, scales)                 the tutorial's ``NewInterpolate``
                                               ``autograd.Function``: its ``symbolic``
                                               emits Resize with a scales *input*
cxx-op             (x, scales)                 ``torch.ops.onnxtool.resize`` (the C++
                                               op), mapped by :mod:`exporters.symbolic`
plugin (scales)    (x, scales)                 ``torch.ops.onnxtool_plugin.
                                               dynamic_trt_resize``: exported as a
                                               ``DynamicTRTResize`` custom-domain node
plugin             (x, size_tensor)            the MMDeploy tutorial's signature: the
(size-tensor)                                  output H, W are ``size_tensor``'s last
                                               two dims; ``align_corners`` attribute
=================  ==========================  ======================================

``scales`` is a float32 tensor with one entry per input dimension,
``[1, 1, f, f]`` for a factor f, as ONNX Resize takes it.

:func:`srcnn` builds any of them and loads ``exporters/weights/srcnn_x3.pt``.
Importing this module does not load the C++ library; the variants that need
it load it on their first forward pass.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal, Optional

import torch
import torch.nn.functional as F
from torch import nn

import exporters.ops

Variant = Literal["static", "new-interpolate", "cxx-op", "plugin"]
Signature = Literal["scales", "size-tensor"]
VARIANTS: tuple[str, ...] = ("static", "new-interpolate", "cxx-op", "plugin")
SIGNATURES: tuple[str, ...] = ("scales", "size-tensor")
WEIGHTS = Path(__file__).resolve().parent / "weights" / "srcnn_x3.pt"

# The resize every variant performs: PyTorch's bicubic (a = -0.75, half-pixel centres,
# borders clamped), spelled as ONNX Resize attributes. pytorch_half_pixel is what the
# TorchScript exporter writes for interpolate; it equals half_pixel unless an output dim is 1.
RESIZE_ATTRIBUTES = {
    "mode": "cubic",
    "coordinate_transformation_mode": "pytorch_half_pixel",
    "cubic_coeff_a": -0.75,
    "exclude_outside": False,
    "nearest_mode": "floor",
}


def scales_tensor(factor: float, rank: int = 4) -> torch.Tensor:
    """``[1, ..., 1, factor, factor]``: the full-rank scales of a 2-D spatial resize."""
    return torch.tensor([1.0] * (rank - 2) + [float(factor)] * 2, dtype=torch.float32)


def _cxx_resize(x: torch.Tensor, scales: torch.Tensor, **attributes) -> torch.Tensor:
    return exporters.ops.resize(x, scales, **attributes)  # loads (the first time, builds) the C++ library


class _SRCNNBody(nn.Module):
    """The three convolutions every variant shares (the names are the checkpoint's keys)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=9, padding=4)
        self.conv2 = nn.Conv2d(64, 32, kernel_size=1, padding=0)
        self.conv3 = nn.Conv2d(32, 3, kernel_size=5, padding=2)
        self.relu = nn.ReLU()

    def body(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.conv1(x))
        out = self.relu(self.conv2(out))
        return self.conv3(out)


class StaticSRCNN(_SRCNNBody):
    """The model a user starts from: ``nn.Upsample(scale_factor=3, mode="bicubic")``.

    Exported normally, its scale factor is baked into the ONNX graph as a constant.
    """

    variant = "static"
    input_names = ("input",)

    def __init__(self, upscale_factor: float = 3.0) -> None:
        super().__init__()
        self.upscale_factor = float(upscale_factor)
        self.upsample = nn.Upsample(scale_factor=upscale_factor, mode="bicubic", align_corners=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(self.upsample(x))

    def example_inputs(
        self, factor: Optional[float] = None, *, batch: int = 1, height: int = 8, width: int = 8, seed: int = 0
    ) -> tuple[torch.Tensor, ...]:
        """``(x,)``; ``factor`` must be ``None`` or the baked factor (it cannot change here)."""
        if factor is not None and float(factor) != self.upscale_factor:
            raise ValueError(f"the static variant is built for factor {self.upscale_factor:g}, not {factor:g}")
        generator = torch.Generator().manual_seed(seed)
        return (torch.rand(batch, 3, height, width, generator=generator),)


class NewInterpolate(torch.autograd.Function):
    """The tutorial's trick: an autograd.Function whose ``symbolic`` writes Resize(X, roi, scales).

    In eager mode it calls ``F.interpolate`` with the *values* of ``scales`` (a
    Python float per axis, which is why this only exports through the symbolic:
    the TorchScript exporter never traces ``forward``). The dynamo exporter
    ignores ``symbolic`` and traces ``forward``, where ``scales.tolist()`` is a
    data-dependent read; see :mod:`exporters.onnx_export` for what happens then.

    Needs opset 11 or later (cubic Resize). Does not check that the batch and
    channel scales are 1.
    """

    @staticmethod
    def forward(ctx, x: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:  # noqa: D102
        factors = [float(value) for value in scales.tolist()[-2:]]
        return F.interpolate(x, scale_factor=factors, mode="bicubic", align_corners=False)

    @staticmethod
    def symbolic(g, x, scales):  # noqa: D102
        if g.opset < 11:
            from torch.onnx.errors import SymbolicValueError  # deferred: torch.onnx (~70 ms), export only

            raise SymbolicValueError(f"NewInterpolate needs opset 11 or later for cubic Resize, got opset {g.opset}", x)
        roi = g.op("Constant", value_t=torch.tensor([], dtype=torch.float32))
        return g.op(
            "Resize",
            x,
            roi,
            scales,
            mode_s=RESIZE_ATTRIBUTES["mode"],
            coordinate_transformation_mode_s=RESIZE_ATTRIBUTES["coordinate_transformation_mode"],
            cubic_coeff_a_f=RESIZE_ATTRIBUTES["cubic_coeff_a"],
            nearest_mode_s=RESIZE_ATTRIBUTES["nearest_mode"],
        )


class _DynamicSRCNN(_SRCNNBody):
    """A variant whose factor is an input: ``forward(x, scales)``."""

    input_names = ("input", "scales")

    def example_inputs(
        self, factor: Optional[float] = 3.0, *, batch: int = 1, height: int = 8, width: int = 8, seed: int = 0
    ) -> tuple[torch.Tensor, ...]:
        """``(x, scales)`` for one factor (3 when ``None``)."""
        generator = torch.Generator().manual_seed(seed)
        x = torch.rand(batch, 3, height, width, generator=generator)
        return x, scales_tensor(3.0 if factor is None else factor)


class NewInterpolateSRCNN(_DynamicSRCNN):
    """The tutorial's ``StrangeSuperResolutionNet``: upsampling via :class:`NewInterpolate`."""

    variant = "new-interpolate"

    def forward(self, x: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
        return self.body(NewInterpolate.apply(x, scales))


class CxxOpSRCNN(_DynamicSRCNN):
    """Upsampling by the C++ op ``torch.ops.onnxtool.resize``, which takes the scales as a tensor.

    Export support lives in :mod:`exporters.symbolic` (Resize with a scales input
    in both exporters). Needs the C++ library (built on first use, or by ``python -m exporters.build``).
    """

    variant = "cxx-op"

    def forward(self, x: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
        # unscaled_axes: batch and channels keep their size, so torch.export keeps them
        # symbolic-but-known instead of data-dependent (the conv after it checks channels).
        return self.body(_cxx_resize(x, scales, unscaled_axes=(0, 1), **_cxx_attributes()))


def _cxx_attributes(align_corners: bool = False) -> dict:
    attributes = dict(RESIZE_ATTRIBUTES)
    attributes["exclude_outside"] = bool(attributes["exclude_outside"])
    # The C++ op follows ONNX exactly; half_pixel and pytorch_half_pixel differ only for
    # an output dim of 1, where PyTorch's choice is the one the other variants make.
    attributes["coordinate_transformation_mode"] = "align_corners" if align_corners else "pytorch_half_pixel"
    return attributes


# --- The plugin ops -------------------------------------------------------------------------
# Python-defined custom ops, so that both exporters see one opaque node to map onto
# DynamicTRTResize (exporters.symbolic) instead of a traced-through interpolate. Their eager
# kernels run the C++ resize; their fake kernels let torch.export trace them.

PLUGIN_NAMESPACE = "onnxtool_plugin"


@torch.library.custom_op(f"{PLUGIN_NAMESPACE}::dynamic_trt_resize", mutates_args=())
def dynamic_trt_resize(x: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """DynamicTRTResize, signature (X, scales): bicubic resize by runtime scales (the C++ op)."""
    return _cxx_resize(x, scales, **_cxx_attributes())


@dynamic_trt_resize.register_fake
def _(x: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    # The output size depends on the values of `scales`: unbacked sizes, like the C++ op's fake.
    ctx = torch.library.get_ctx()
    height, width = ctx.new_dynamic_size(), ctx.new_dynamic_size()
    return x.new_empty((*x.shape[:-2], height, width))


def _scale_for_size(in_size: int, out_size: int) -> float:
    """The float32 scale s with floor(in_size * s) == out_size, which the C++ op computes.

    out/in itself, unless float32 rounding put it below the true ratio so that the
    product floors to out_size - 1 (13/9 does); then one ulp up.
    """
    scale = torch.tensor(out_size / in_size, dtype=torch.float32)
    if math.floor(in_size * float(scale)) < out_size:
        scale = torch.nextafter(scale, torch.tensor(math.inf))
    return float(scale)


@torch.library.custom_op(f"{PLUGIN_NAMESPACE}::dynamic_trt_resize_size", mutates_args=())
def dynamic_trt_resize_size(x: torch.Tensor, size_tensor: torch.Tensor, align_corners: bool) -> torch.Tensor:
    """DynamicTRTResize, the MMDeploy signature (X, size_tensor): output H, W = size_tensor's last dims.

    Only the *shape* of ``size_tensor`` is read, never its values. The C++ op
    takes scales, so each becomes out/in (see :func:`_scale_for_size`).
    """
    out_height, out_width = size_tensor.shape[-2], size_tensor.shape[-1]
    scales = torch.tensor(
        [1.0] * (x.dim() - 2) + [_scale_for_size(x.shape[-2], out_height), _scale_for_size(x.shape[-1], out_width)],
        dtype=torch.float32,
    )
    out = _cxx_resize(x, scales, **_cxx_attributes(align_corners))
    if tuple(out.shape[-2:]) != (out_height, out_width):  # pragma: no cover - a C++ op rounding bug
        raise RuntimeError(f"resize produced {tuple(out.shape[-2:])}, expected {(out_height, out_width)}")
    return out


@dynamic_trt_resize_size.register_fake
def _(x: torch.Tensor, size_tensor: torch.Tensor, align_corners: bool) -> torch.Tensor:
    return x.new_empty((*x.shape[:-2], size_tensor.shape[-2], size_tensor.shape[-1]))


class PluginSRCNN(_SRCNNBody):
    """Upsampling by a ``DynamicTRTResize`` TensorRT plugin node (custom domain) once exported.

    ``signature="scales"``: ``forward(x, scales)``. ``signature="size-tensor"``:
    ``forward(x, size_tensor)``, the MMDeploy tutorial's plugin, where only the
    shape of ``size_tensor`` matters (its last two dims are the output H, W) and
    ``align_corners`` is a node attribute. In eager mode both run the C++ op.
    Stock ONNX Runtime cannot run the exported node; ``graphsurgeon_tools.runtime``
    registers a kernel for it.
    """

    variant = "plugin"

    def __init__(self, signature: Signature = "scales", align_corners: bool = False) -> None:
        super().__init__()
        if signature not in SIGNATURES:
            raise ValueError(f"signature must be one of {', '.join(SIGNATURES)}, got {signature!r}")
        self.signature = signature
        self.align_corners = bool(align_corners)
        self.input_names = ("input", "scales" if signature == "scales" else "size_tensor")
        # For exporters.export's dynamic axes: the output H, W *are* size_tensor's.
        self.output_axis_names = {2: "size_tensor_height", 3: "size_tensor_width"} if signature != "scales" else None
        if signature == "scales" and align_corners:
            raise ValueError("align_corners is an attribute of the size-tensor signature only")

    def forward(self, x: torch.Tensor, scales_or_size: torch.Tensor) -> torch.Tensor:
        if self.signature == "scales":
            return self.body(dynamic_trt_resize(x, scales_or_size))
        return self.body(dynamic_trt_resize_size(x, scales_or_size, self.align_corners))

    def example_inputs(
        self, factor: Optional[float] = 3.0, *, batch: int = 1, height: int = 8, width: int = 8, seed: int = 0
    ) -> tuple[torch.Tensor, ...]:
        """``(x, scales)`` or ``(x, size_tensor)`` with size_tensor of shape 1x1x(H*f)x(W*f)."""
        factor = 3.0 if factor is None else float(factor)
        generator = torch.Generator().manual_seed(seed)
        x = torch.rand(batch, 3, height, width, generator=generator)
        if self.signature == "scales":
            return x, scales_tensor(factor)
        return x, torch.zeros(1, 1, int(height * factor), int(width * factor))


_CLASSES = {"new-interpolate": NewInterpolateSRCNN, "cxx-op": CxxOpSRCNN}


def srcnn(
    variant: Variant = "static",
    factor: float = 3.0,
    pretrained: bool = True,
    *,
    signature: Signature = "scales",
    align_corners: bool = False,
    weights: Optional[Path] = None,
) -> nn.Module:
    """Build one SRCNN variant in eval mode, with the shipped x3 weights unless ``pretrained=False``.

    ``factor`` is baked into the static variant; the other variants take the
    factor at run time and ignore it here (use ``model.example_inputs(factor)``).
    ``signature``/``align_corners`` apply to the plugin variant only. The weights
    were trained for x3 (see ``exporters/train_srcnn.py``); they load into every
    variant and at any factor, but are best at 3. Untrained models are seeded, so
    ``pretrained=False`` is reproducible.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if variant != "plugin" and (signature != "scales" or align_corners):
        raise ValueError("signature and align_corners apply to the plugin variant only")
    if not float(factor) > 0:
        raise ValueError(f"factor must be positive, got {factor!r}")
    with torch.random.fork_rng():
        torch.manual_seed(0)
        if variant == "static":
            model: nn.Module = StaticSRCNN(upscale_factor=factor)
        elif variant == "plugin":
            model = PluginSRCNN(signature=signature, align_corners=align_corners)
        else:
            model = _CLASSES[variant]()
    if pretrained or weights is not None:
        path = Path(weights) if weights is not None else WEIGHTS
        if not path.is_file():
            raise FileNotFoundError(
                f"SRCNN weights not found at {path}; run `python -m exporters.train_srcnn` to make them"
            )
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.eval()
