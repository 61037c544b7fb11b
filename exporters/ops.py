"""The onnxtool C++ ops for PyTorch: ``torch.ops.onnxtool.resize`` and ``torch.ops.onnxtool.my_add``.

Importing this module loads the compiled library (building it first if needed)
and registers the fake kernels that let ``torch.export`` and the dynamo ONNX
exporter trace models calling the ops. ``python -m exporters.ops build`` builds
it ahead of time (``make setup`` does).

Build strategy: a cached JIT build with ``torch.utils.cpp_extension.load`` into
``<repo>/.build/torch_ext`` (or ``$ONNXTOOL_BUILD_DIR``), not an install-time
``setup.py`` build. The library is compiled against the torch that is actually
installed, with no build isolation that could pull a different (CUDA) torch
wheel. A stamp file records a hash of the sources, the flags and the torch
version, so a later import loads the existing ``.so`` directly (no compiler,
no ninja run); any change to ``csrc/`` or to torch triggers a rebuild. A file
lock serialises builds across processes (pytest workers importing at once).

The sources are found relative to this file (``<repo>/csrc``), which works for
the editable install the project uses; a non-editable wheel would need the
library prebuilt and ``ONNXTOOL_BUILD_DIR`` pointing at it.

Autograd: ``my_add`` has its (exact) backward. ``resize`` is an inference
reference and export target, not a training layer: it is registered as
non-differentiable, so its output never requires grad and no gradient flows
back to ``X`` through it (use ``interpolate`` where you train through a resize).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch

__all__ = [
    "OpsBuildError",
    "build",
    "library_path",
    "load_library",
    "my_add",
    "resize",
]

LIBRARY_NAME = "onnxtool_ops"
REPO_ROOT = Path(__file__).resolve().parent.parent
CSRC_DIR = REPO_ROOT / "csrc"
# -O3, plus -fopenmp-simd for the `omp simd` loops only: threading is the
# kernel's own pool (csrc/parallel.h), so the library links no OpenMP runtime
# that could clash with the libgomp torch ships. No -march=native: the cached
# build may be reused on another CPU, and baseline SSE2 already keeps the
# kernels memory-bound.
EXTRA_CFLAGS = ["-O3", "-fopenmp-simd", "-DNDEBUG"]
EXTRA_LDFLAGS: list[str] = []

_BUILD_HINT = "run `make setup` or `python -m exporters.ops build` (needs g++ and ninja)"


class OpsBuildError(ImportError):
    """The C++ library is not built and could not be built or loaded here."""


def build_directory() -> Path:
    """Where the compiled library lives: ``$ONNXTOOL_BUILD_DIR`` or ``<repo>/.build/torch_ext``."""
    env = os.environ.get("ONNXTOOL_BUILD_DIR")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".build" / "torch_ext"


def _sources() -> list[Path]:
    return sorted(CSRC_DIR.glob("*.cpp"))


def _build_key() -> str:
    digest = hashlib.sha256()
    for path in sorted([*_sources(), *CSRC_DIR.glob("*.h")]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(repr((EXTRA_CFLAGS, EXTRA_LDFLAGS, torch.__version__, sys.version_info[:2])).encode())
    return digest.hexdigest()


def library_path() -> Path:
    """Path of the compiled ``.so`` (it exists only after a build)."""
    return build_directory() / f"{LIBRARY_NAME}.so"


def _stamp_path() -> Path:
    return build_directory() / f"{LIBRARY_NAME}.stamp"


def _is_loaded() -> bool:
    return hasattr(torch.ops.onnxtool, "resize") and hasattr(torch.ops.onnxtool, "my_add")


def _failure_reason(exc: BaseException) -> str:
    """The one line of a compiler/ninja failure worth showing (its full log is long)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    telling = [
        line for line in lines
        if re.search(r"error|not found|fatal|no such file|required", line, re.IGNORECASE)
        and not line.startswith("Error building extension")
    ]
    reason = (telling or lines or [type(exc).__name__])[0]
    return reason if len(reason) <= 200 else reason[:197] + "..."


def _build_lock() -> contextlib.AbstractContextManager[None]:
    """Serialise check-build-stamp across processes (pytest -n workers, parallel imports).

    torch's own lock only covers ninja; without this, a process that waited on another's
    build could stamp a library built from older sources.
    """
    from graphsurgeon_tools.io.files import exclusive_lock

    return exclusive_lock(build_directory() / f"{LIBRARY_NAME}.lock")


def _is_current() -> bool:
    stamp = _stamp_path()
    return library_path().is_file() and stamp.is_file() and stamp.read_text() == _build_key()


def _compile_and_load(verbose: bool) -> None:
    # Precondition: the build lock is held and the library is not loaded here.
    if not CSRC_DIR.is_dir() or not _sources():
        raise OpsBuildError(f"C++ sources not found in {CSRC_DIR}; onnxtool must be an editable install (pip install -e .)")
    from torch.utils import cpp_extension

    # The key is taken before compiling: if a source changes mid-build, the
    # stamp will not match it and the next import rebuilds.
    key = _build_key()
    try:
        cpp_extension.load(
            name=LIBRARY_NAME,
            sources=[str(p) for p in _sources()],
            build_directory=str(build_directory()),
            extra_cflags=EXTRA_CFLAGS,
            extra_ldflags=EXTRA_LDFLAGS,
            is_python_module=False,
            verbose=verbose,
        )
    except Exception as exc:  # the compiler's failure surfaces as RuntimeError/OSError/CalledProcessError
        reason = _failure_reason(exc)
        raise OpsBuildError(f"building the onnxtool C++ ops from {CSRC_DIR} failed ({reason}); {_BUILD_HINT}") from exc
    tmp = _stamp_path().with_suffix(f".stamp.{os.getpid()}")
    tmp.write_text(key)
    os.replace(tmp, _stamp_path())


def build(*, verbose: bool = False) -> Path:
    """Compile the library (ninja only recompiles what changed) and load it into this process.

    Must run in a process that has not loaded the library yet (``python -m
    exporters.ops build`` does): a second load of a rebuilt library would
    register the ``onnxtool`` namespace twice. Raises :class:`OpsBuildError`
    (an ``ImportError``) with the compiler's reason when the build fails.
    Does not check that the ops work; the tests do.
    """
    if _is_loaded():
        raise OpsBuildError("the onnxtool ops are already loaded in this process; run `python -m exporters.ops build` in a fresh one")
    with _build_lock():
        _compile_and_load(verbose)
    return library_path()


def load_library() -> Path:
    """Load the compiled ops into ``torch.ops.onnxtool``, building them only when missing or stale.

    Fast path: if the stamp beside the ``.so`` matches the current sources,
    flags and torch version, the library is loaded without invoking the
    compiler or ninja. Idempotent within a process.
    """
    path = library_path()
    if _is_loaded():
        return path
    if not _is_current():
        with _build_lock():
            if not _is_current():  # another process may have built it while we waited
                _compile_and_load(verbose=False)
    if not _is_loaded():
        try:
            torch.ops.load_library(str(path))
        except OSError as exc:
            raise OpsBuildError(f"cannot load {path} ({exc}); {_BUILD_HINT}") from exc
    if not _is_loaded():
        raise OpsBuildError(f"{path} loaded but registered no onnxtool ops; {_BUILD_HINT}")
    return path


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

    Preconditions: ``x`` is a CPU float32/float64/float16/bfloat16 tensor of any
    rank >= 1; ``scales`` is a 1-D floating tensor with one positive finite
    entry per dimension of ``x``. Output size per axis is
    ``floor(x.shape[i] * scales[i])`` (the ONNX reference; ``roi`` does not
    shrink it). Keywords are the ONNX attribute names with their ONNX defaults;
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
        torch._check(y.shape[axis] == x.shape[axis], lambda axis=axis: f"resize: axis {axis} is declared unscaled but changed size")
    return y


def my_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``2 * a + b`` computed by the C++ op ``torch.ops.onnxtool.my_add`` (ATen broadcasting and promotion)."""
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
    def my_add_setup(ctx, inputs, output) -> None:  # noqa: ANN001
        a, b = inputs
        ctx.a_shape, ctx.b_shape = a.shape, b.shape

    def my_add_backward(ctx, grad):  # noqa: ANN001, ANN202
        return (2 * grad).sum_to_size(ctx.a_shape), grad.sum_to_size(ctx.b_shape)

    torch.library.register_autograd("onnxtool::my_add", my_add_backward, setup_context=my_add_setup)


def _main(argv: list[str]) -> int:
    if argv[:1] != ["build"] or len(argv) > 2 or (len(argv) == 2 and argv[1] != "--verbose"):
        print("usage: python -m exporters.ops build [--verbose]", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        with _build_lock():
            state = "up to date" if _is_current() else "built"
            if state == "built":
                _compile_and_load(verbose="--verbose" in argv)
        path = library_path()
        import exporters.ops  # noqa: F401  (loads it the way users do, fakes included)
    except OpsBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"onnxtool ops {state}: {path} ({time.perf_counter() - start:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

load_library()
_register_fakes()
_register_autograd()
