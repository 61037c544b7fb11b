"""The onnxtool C++ ops for PyTorch, their Python face: ``resize`` and ``my_add``.

``load() -> Path`` loads the compiled library into ``torch.ops.onnxtool`` (building it first
when needed: :mod:`exporters.build`) and registers the fake kernels that let ``torch.export``
and the dynamo ONNX exporter trace models calling the ops, and ``my_add``'s autograd. The
wrappers :func:`resize` and :func:`my_add` call it on first use; code that calls
``torch.ops.onnxtool.*`` directly (or exports a model that does) calls :func:`load` first.

Importing this module has no side effect: it builds, loads and registers nothing
(``python -m exporters.build`` builds ahead of time; ``python -m exporters.ops build`` is
the same command).

Autograd: ``my_add`` has its (exact) backward. ``resize`` is an inference
reference and export target, not a training layer: it is registered as
non-differentiable, so its output never requires grad and no gradient flows
back to ``X`` through it (use ``interpolate`` where you train through a resize).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import torch

from exporters.build import OpsBuildError, build, library_path
from exporters.build import load_library as _load_compiled

__all__ = [
    "OpsBuildError",
    "build",
    "library_path",
    "load",
    "load_library",
    "loaded",
    "my_add",
    "resize",
]

_loaded: list[Path] = []
_load_lock = threading.Lock()


def load(*, build: bool = True) -> Path | None:
    """Load the C++ ops (building them on first use) and register their fakes and autograd; idempotent.

    Raises :class:`OpsBuildError` (an ImportError and an environment problem, exit 5) with the
    reason and the command that fixes it when the library cannot be built or loaded.
    ``build=False`` loads only a library already built and verified (None otherwise): for
    callers that merely prepare for models that might call the ops.
    """
    if _loaded:
        return _loaded[0]
    with _load_lock:
        if not _loaded:
            path = _load_compiled(build=build)
            if path is None:
                return None
            _register_fakes()
            _register_autograd()
            _loaded.append(path)
    return _loaded[0]


def loaded() -> bool:
    """Whether :func:`load` has loaded the ops in this process (never loads anything)."""
    return bool(_loaded)


# The name callers used before the build moved to exporters.build.
load_library = load


def resize(
    x: torch.Tensor,
    scales: torch.Tensor,
    *,
    mode: str = "nearest",
    coordinate_transformation_mode: str = "half_pixel",
    cubic_coeff_a: float = -0.75,
    exclude_outside: bool = False,
    nearest_mode: str = "round_prefer_floor",
    extrapolation_value: float = 0.0,
    roi: torch.Tensor | None = None,
    antialias: bool = False,
    unscaled_axes: Sequence[int] = (),
) -> torch.Tensor:
    """ONNX Resize (opset 19) of ``x`` by the runtime tensor ``scales``: ``torch.ops.onnxtool.resize``.

    Preconditions: ``x`` is a CPU float32/float64/float16/bfloat16/uint8/int8/int32
    tensor of any rank >= 1 (the dtypes and modes of
    ``graphsurgeon_tools.resize.kernel_dtypes``: no cubic and no antialias on integers);
    ``scales`` is a 1-D floating tensor with one positive finite entry per dimension of
    ``x``. Output size per axis is ``floor(x.shape[i] * scales[i])`` in float64 (``roi``
    does not shrink it). The arithmetic is ONNX Runtime's: coordinates in float32 from
    ``float32(scales[i])`` and the integer output length, ORT's nearest tie rule, and for
    integer and half dtypes ORT's one float32 blend per output, cast as ORT casts
    (integers truncate). Unlike ORT, an output of the input's shape is not a copy where a
    scale is not 1 (each axis keeps its scale's mapping, as ``interpolate``). ``antialias`` keeps the
    ONNX reference's double arithmetic. Keywords are the ONNX attribute names with their ONNX defaults;
    ``roi`` (2 * rank floats, starts then ends) is read only for
    ``tf_crop_and_resize``. Bad scales, roi or attribute strings raise
    ``RuntimeError`` with a message naming the expected and the received value.

    ``unscaled_axes`` is not an op argument: it lists axes whose scale the
    caller guarantees to be 1 (typically ``(0, 1)`` for NCHW). The output's size
    on those axes is asserted equal to the input's, which lets ``torch.export``
    keep them static (otherwise every output dimension is data-dependent, and a
    following ``conv2d`` could not check its channel count).

    Runs on ``torch.get_num_threads()`` threads. Outputs of 1 MiB or more may
    reuse buffers that earlier calls returned and were freed (the op keeps at
    most 8 of them, 256 MiB in all), as ONNX Runtime's arena does.

    Non-differentiable (the output never requires grad). Does not support
    ``axes``, ``sizes`` or ``keep_aspect_ratio_policy``, and the fake kernel used
    by ``torch.export`` does not validate the attribute strings (a bad mode
    fails when the exported program runs).
    """
    load()
    y = torch.ops.onnxtool.resize.default(
        x,
        scales,
        mode=mode,
        coordinate_transformation_mode=coordinate_transformation_mode,
        cubic_coeff_a=cubic_coeff_a,
        exclude_outside=exclude_outside,
        nearest_mode=nearest_mode,
        extrapolation_value=extrapolation_value,
        roi=roi,
        antialias=antialias,
    )
    # Under TorchScript tracing the sizes are traced tensors, which torch._check cannot take;
    # the hint only matters to torch.export, so skip it there.
    for axis in () if torch.jit.is_tracing() else unscaled_axes:
        torch._check(
            y.shape[axis] == x.shape[axis],
            lambda axis=axis: f"resize: axis {axis} is declared unscaled but changed size",
        )
    return y


def my_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``2 * a + b`` computed by the C++ op ``torch.ops.onnxtool.my_add`` (ATen broadcasting and promotion)."""
    load()
    return torch.ops.onnxtool.my_add.default(a, b)


def _register_fakes() -> None:
    def resize_fake(
        X: torch.Tensor,
        scales: torch.Tensor,
        *,
        mode: str = "nearest",
        coordinate_transformation_mode: str = "half_pixel",
        cubic_coeff_a: float = -0.75,
        exclude_outside: bool = False,
        nearest_mode: str = "round_prefer_floor",
        extrapolation_value: float = 0.0,
        roi: torch.Tensor | None = None,
        antialias: bool = False,
    ) -> torch.Tensor:
        torch._check(scales.dim() == 1, lambda: f"scales must be a 1-D tensor, got {scales.dim()}-D")
        torch._check(
            scales.shape[0] == X.dim(),
            lambda: f"scales must have one entry per input dimension ({X.dim()}), got {scales.shape[0]}",
        )
        # The output shape depends on the *values* of scales, so each
        # dimension is a fresh data-dependent size (like nonzero's length).
        ctx = torch.library.get_ctx()
        sizes = [ctx.new_dynamic_size() for _ in range(X.dim())]
        return X.new_empty(sizes)

    def my_add_fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.empty(
            torch.broadcast_shapes(a.shape, b.shape),
            dtype=torch.promote_types(a.dtype, b.dtype),
            device=a.device,
        )

    torch.library.register_fake("onnxtool::resize")(resize_fake)
    torch.library.register_fake("onnxtool::my_add")(my_add_fake)


def _register_autograd() -> None:
    # my_add is linear, so its backward is exact and cheap. resize is declared
    # non-differentiable in C++ (an Autograd fallthrough, resize_cpu.cpp):
    # register_autograd cannot take its keyword-only `roi` tensor.
    def my_add_setup(ctx, inputs, output) -> None:
        a, b = inputs
        ctx.a_shape, ctx.b_shape = a.shape, b.shape

    def my_add_backward(ctx, grad):
        return (2 * grad).sum_to_size(ctx.a_shape), grad.sum_to_size(ctx.b_shape)

    torch.library.register_autograd("onnxtool::my_add", my_add_backward, setup_context=my_add_setup)


if __name__ == "__main__":
    from exporters.build import _main

    sys.exit(_main(sys.argv[1:]))
