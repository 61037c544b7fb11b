"""Run an unmodified ``nn.Module`` with its resizes executed by onnxtool's C++ op, at any factor.

``route_resize`` is a context manager (a :class:`torch.overrides.TorchFunctionMode`)
that intercepts every ``torch.nn.functional.interpolate`` call made while it is
active -- and so ``nn.Upsample``, ``nn.UpsamplingNearest2d``/``Bilinear2d`` and
``F.upsample*``, which all call it -- and runs it as ``torch.ops.onnxtool.resize``
with the ONNX Resize attributes the exporters write for that call::

    interpolate(mode="nearest")                    -> nearest, asymmetric, nearest_mode=floor
    interpolate(mode="nearest-exact")              -> nearest, half_pixel, nearest_mode=round_prefer_ceil
    interpolate(mode="(bi|tri)linear", align_corners=False|True)
                                                   -> linear, half_pixel | align_corners
    interpolate(mode="bicubic", align_corners=...) -> cubic (a=-0.75), half_pixel | align_corners
    interpolate(..., antialias=True)               -> the same with antialias=1, exclude_outside=1
                                                      (bicubic: a=-0.5), as torch and the dynamo exporter

    from exporters.routing import route_resize
    with torch.no_grad(), route_resize(3.0) as router:      # every scale-driven call at x3
        y = model(x)
    router.calls                                              # what ran, in order (ResizeCall)
    with route_resize(sites={0: 2.0, "decoder.up": 4.0}):    # per-site factors, the rest as written
        ...

Sites. A call is *scale-driven* when the code gives ``scale_factor=``; those are
the sites, numbered 0, 1, ... in execution order (for a model with no data-dependent
control flow, the topological order of the exported Resize nodes). A site can be
chosen by that number or by its module scope (dotted ``named_modules`` path of
the module that made the call, ``""`` for the root; every call made directly in
that module). ``recompute_scale_factor=True`` calls are sites too: the output size
is ``floor(in * factor)`` and the op runs at ``out / in``, as torch does.

Size-driven calls (``size=``) follow the data and are left to PyTorch's own kernel:
an op run at ``size / in`` cannot reproduce torch's ``in / out`` coordinates bit for
bit, and an exported graph computes those sizes from shapes at run time anyway.
They are recorded (``site=None``). ``mode="area"`` (an adaptive average pool,
not a Resize), tensors the op does not take (not CPU, not floating) and rank-2
inputs are also left to PyTorch -- at the site's chosen factor -- and recorded
with ``routed=False`` and the reason.

Requires: ``exporters.ops`` importable (the C++ library builds on first use).
Ensures: at the factors written in the code, a routed run equals the plain
PyTorch run (bit for bit for nearest; to float rounding for linear/cubic, whose
coordinates torch computes in float32 and the op in float64); at any other
factor it equals the model exported at that factor run in ONNX Runtime (to the
same rounding). A site key that matched no call raises :class:`RoutingError`
when the block ends (without an exception of its own).
Does NOT: route ``torch.ops.aten.upsample_*`` called directly, change the module,
or track autograd (the op is non-differentiable). The innermost active router
handles a call; an outer one does not see it. Module scopes come from
process-wide forward hooks held only while the block runs.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import torch
import torch.nn.functional as F
from torch.nn.modules import module as nn_module
from torch.overrides import TorchFunctionMode

import exporters.ops
from exporters.ops import resize

__all__ = [
    "FlooredSize",
    "OutputSize",
    "ResizeCall",
    "ResizeRouter",
    "RoutingError",
    "onnx_attributes",
    "route_resize",
]


class OutputSize(tuple):
    """A site value that fixes the site's output spatial size instead of its factor: ``OutputSize((h, w))``.

    What a size-tensor input (MMDeploy's ``DynamicTRTResize(X, size_tensor)``) gives a site: the op
    runs at ``out / in`` (align_corners-safe), as ONNX Runtime does for a ``sizes`` input.
    """


class FlooredSize(tuple):
    """A site value: per-axis factors applied as a ``sizes`` input does: ``FlooredSize((fh, fw))``.

    The output size is ``floor(in * f)`` and the coordinates follow ``out / in`` (what a
    Resize fed sizes, or a plugin fed a size tensor built from the scales, computes).
    """


FactorLike = Union[float, Sequence[float], OutputSize, FlooredSize]
SiteKey = Union[int, str]

_INTERPOLATE = F.interpolate
_SIGNATURE = inspect.signature(_INTERPOLATE)
_OP_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


class RoutingError(ValueError):
    """A factor or site specification that cannot apply to the run (wrong length, unknown site)."""


def onnx_attributes(
    mode: str, align_corners: Optional[bool] = None, antialias: bool = False
) -> Optional[dict[str, Any]]:
    """The ONNX Resize attributes both torch exporters write for ``interpolate(mode=, align_corners=, antialias=)``.

    ``None`` when no Resize reproduces the call (``"area"`` is an adaptive average pool).
    """
    if mode == "nearest":
        return {
            "mode": "nearest",
            "coordinate_transformation_mode": "asymmetric",
            "nearest_mode": "floor",
            "antialias": False,
        }
    if mode == "nearest-exact":
        # torch: src = floor((dst + 0.5) / scale), i.e. the half-pixel coordinate rounded half up
        return {
            "mode": "nearest",
            "coordinate_transformation_mode": "half_pixel",
            "nearest_mode": "round_prefer_ceil",
            "antialias": False,
        }
    ctm = "align_corners" if align_corners else "half_pixel"
    # torch's antialiased kernels drop taps outside the image and renormalise (exclude_outside=1),
    # and its antialiased bicubic uses a = -0.5 (PIL's filter); the dynamo exporter writes the same.
    aa = {"antialias": True, "exclude_outside": True} if antialias else {"antialias": False}
    if mode in ("linear", "bilinear", "trilinear"):
        return {"mode": "linear", "coordinate_transformation_mode": ctm, **aa}
    if mode == "bicubic":
        return {
            "mode": "cubic",
            "coordinate_transformation_mode": ctm,
            "cubic_coeff_a": -0.5 if antialias else -0.75,
            **aa,
        }
    return None


@dataclass
class ResizeCall:
    """One ``interpolate`` call seen by a router, in execution order."""

    order: int  # position among all interpolate calls of the run
    site: Optional[int]  # position among scale-driven calls; None for size-driven calls
    scope: str  # dotted module path of the caller ("" = root; "" too when unknown)
    torch_mode: str
    align_corners: Optional[bool]
    antialias: bool
    recompute_scale_factor: Optional[bool]
    attributes: Optional[dict[str, Any]]  # the ONNX attributes it ran with (None: not an ONNX Resize)
    original_factors: Optional[tuple[float, ...]]  # per spatial axis, as written in the code
    factors: Optional[tuple[float, ...]]  # per spatial axis, as run
    size: Optional[tuple[int, ...]]  # the size= of a size-driven call
    input_shape: tuple[int, ...]
    target_size: Optional[tuple[int, ...]] = None  # the output size a site was given (OutputSize, FlooredSize)
    output_shape: tuple[int, ...] = ()
    routed: bool = False  # executed by torch.ops.onnxtool.resize
    reason: str = ""  # why not routed
    input: Optional[torch.Tensor] = field(default=None, repr=False)  # copies, with record_tensors=True
    output: Optional[torch.Tensor] = field(default=None, repr=False)

    @property
    def mode(self) -> Optional[str]:
        return None if self.attributes is None else self.attributes["mode"]

    @property
    def coordinate_transformation_mode(self) -> Optional[str]:
        return None if self.attributes is None else self.attributes["coordinate_transformation_mode"]

    def describe(self) -> str:
        where = f"site {self.site}" if self.site is not None else f"call {self.order} (size-driven)"
        scope = f" in {self.scope!r}" if self.scope else ""
        factors = "x".join(_fmt(f) for f in self.factors) if self.factors else "size " + str(self.size)
        return f"{where}{scope}: interpolate(mode={self.torch_mode!r}) {factors}"

    def to_dict(self) -> dict[str, Any]:
        skip = {"input", "output"}
        return {k: v for k, v in self.__dict__.items() if k not in skip}


def _float32(value: float) -> float:
    return float(torch.tensor(value, dtype=torch.float32))


def _keeping(scale: float, size: int, out: int) -> float:
    """``scale`` (within a few float64 steps of ``out / size``) moved until ``floor(size * scale) == out``."""
    while math.floor(size * scale) < out:
        scale = math.nextafter(scale, math.inf)
    while math.floor(size * scale) > out:
        scale = math.nextafter(scale, 0.0)
    return scale


def _fmt(value: float) -> str:
    return f"{value:g}"


def _spatial(value: FactorLike, count: int, what: str) -> tuple[float, ...]:
    if isinstance(value, (int, float)):
        values = (float(value),) * count
    else:
        values = tuple(float(v) for v in value)
        if len(values) == 1:
            values = values * count
    if len(values) != count:
        raise RoutingError(f"{what} gives {len(values)} factors for {count} spatial axes")
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise RoutingError(f"{what} must be positive finite factors, got {value!r}")
    return values


class _ScopeTracker:
    """Dotted name of the module whose forward is running, from process-wide hooks held while active."""

    def __init__(self, root: Optional[torch.nn.Module]) -> None:
        self._names: dict[int, str] = {}
        self._root = root
        self._stack: list[str] = []
        self._handles: list[Any] = []

    def __enter__(self) -> "_ScopeTracker":
        if self._root is not None:
            self._names = {id(m): n for n, m in self._root.named_modules(remove_duplicate=False)}
        self._handles = [
            nn_module.register_module_forward_pre_hook(self._pre),
            nn_module.register_module_forward_hook(self._post),
        ]
        return self

    def __exit__(self, *exc: Any) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._stack = []

    def _pre(self, module: torch.nn.Module, args: Any) -> None:
        if not self._names:  # no root given: the first module run is the root
            self._names = {id(m): n for n, m in module.named_modules(remove_duplicate=False)}
        self._stack.append(self._names.get(id(module), type(module).__name__))

    def _post(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if self._stack:
            self._stack.pop()

    @property
    def scope(self) -> str:
        return self._stack[-1] if self._stack else ""


class ResizeRouter(TorchFunctionMode):
    """The mode behind :func:`route_resize`; also usable directly (``router.run(module, *inputs)``).

    Args:
        factor: factor(s) for every scale-driven call not named in ``sites``: one
            number, or one per spatial axis; ``None`` keeps the code's factors.
        sites: per-site factors, keyed by site number or module scope.
        record_tensors: keep a copy of each call's input and output in ``calls`` (``"outputs"``:
            the outputs only).
        module: the root module, for scope names (by default the first module run).

    Each entry of the context starts a new run: ``calls`` and the site count restart.
    """

    def __init__(
        self,
        factor: Optional[FactorLike] = None,
        *,
        sites: Optional[Mapping[SiteKey, FactorLike]] = None,
        record_tensors: Union[bool, str] = False,
        module: Optional[torch.nn.Module] = None,
    ) -> None:
        super().__init__()
        self.factor = factor
        self.sites = dict(sites or {})
        for key in self.sites:
            if isinstance(key, bool) or not isinstance(key, (int, str)):
                raise RoutingError(f"site keys are site numbers or module scopes, got {key!r}")
        self.record_tensors = record_tensors
        self.calls: list[ResizeCall] = []
        self._tracker = _ScopeTracker(module)
        self._used: set[SiteKey] = set()
        self._active = False

    # -- context -------------------------------------------------------------------------
    def __enter__(self) -> "ResizeRouter":
        if self._active:
            raise RoutingError("this ResizeRouter is already active; nest a new one instead")

        exporters.ops.load()  # the C++ op now: a missing build fails here, not mid-run

        self.calls = []
        self._used = set()
        self._active = True
        self._tracker.__enter__()
        try:
            super().__enter__()
        except BaseException:
            self._tracker.__exit__(None, None, None)
            self._active = False
            raise
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            super().__exit__(exc_type, exc, tb)
        finally:
            self._tracker.__exit__(exc_type, exc, tb)
            self._active = False
        if exc_type is None:
            unused = [k for k in self.sites if k not in self._used]
            if unused:
                known = ", ".join(f"{c.site} ({c.scope or 'root'})" for c in self.calls if c.site is not None)
                raise RoutingError(
                    f"site key(s) {unused} matched no scale-driven interpolate call; "
                    f"the run had sites: {known or 'none'}"
                )

    def run(self, module: Any, *inputs: Any, **kwargs: Any) -> Any:
        """``module(*inputs, **kwargs)`` under this router and ``torch.no_grad()``."""
        if isinstance(module, torch.nn.Module) and self._tracker._root is None:
            self._tracker._root = module
        with torch.no_grad(), self:
            return module(*inputs, **kwargs)

    @property
    def site_calls(self) -> list[ResizeCall]:
        """The scale-driven calls (the sites), in site order."""
        return [c for c in self.calls if c.site is not None]

    # -- interception ------------------------------------------------------------------
    def __torch_function__(self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: Optional[dict] = None) -> Any:
        kwargs = kwargs or {}
        if func is not _INTERPOLATE:
            return func(*args, **kwargs)
        return self._interpolate(*args, **kwargs)

    def _factor_for(self, call: ResizeCall, spatial: int, written: tuple[float, ...]) -> tuple[float, ...]:
        for key in (call.site, call.scope):
            if key in self.sites:
                self._used.add(key)
                value = self.sites[key]
                if isinstance(value, FlooredSize):
                    factors = _spatial(tuple(value), spatial, f"sites[{key!r}]")
                    call.target_size = tuple(math.floor(i * f) for i, f in zip(call.input_shape[2:], factors))
                    return factors
                if isinstance(value, OutputSize):
                    if len(value) != spatial or not all(int(v) > 0 for v in value):
                        raise RoutingError(f"sites[{key!r}] = {tuple(value)} is not a positive size per spatial axis")
                    call.target_size = tuple(int(v) for v in value)
                    return tuple(o / i for o, i in zip(call.target_size, call.input_shape[2:]))
                return _spatial(value, spatial, f"sites[{key!r}]")
        if self.factor is not None:
            return _spatial(self.factor, spatial, "factor")
        return written

    def _interpolate(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        bound = _SIGNATURE.bind(*args, **kwargs)
        bound.apply_defaults()
        p = bound.arguments
        x: torch.Tensor = p["input"]
        mode, align_corners, antialias = p["mode"], p["align_corners"], bool(p["antialias"])
        recompute = p["recompute_scale_factor"]
        spatial = x.dim() - 2
        call = ResizeCall(
            order=len(self.calls),
            site=None,
            scope=self._tracker.scope,
            torch_mode=mode,
            align_corners=align_corners,
            antialias=antialias,
            recompute_scale_factor=recompute,
            attributes=onnx_attributes(mode, align_corners, antialias),
            original_factors=None,
            factors=None,
            size=None,
            input_shape=tuple(x.shape),
        )
        self.calls.append(call)
        if p["scale_factor"] is None or p["size"] is not None or spatial < 1:
            # size-driven (or an invalid call torch itself reports): follows the data, torch's kernel
            if p["size"] is not None:
                size = p["size"]
                call.size = tuple(
                    int(s) for s in (size if isinstance(size, (list, tuple)) else [size] * max(spatial, 1))
                )
            call.reason = "size-driven: follows the data"
            return self._torch(call, x, bound, p["scale_factor"])
        call.site = sum(1 for c in self.calls if c.site is not None)
        call.original_factors = _spatial(p["scale_factor"], spatial, f"scale_factor of {call.describe()}")
        call.factors = self._factor_for(call, spatial, call.original_factors)
        reason = self._unroutable(x, call)
        if reason:
            call.reason = reason
            return self._torch(call, x, bound, call.factors)
        attrs = dict(call.attributes or {})
        scales = self._scales(x, call.factors, attrs, recompute, call.target_size)

        y = resize(x, scales, **attrs)
        call.routed = True
        return self._finish(call, x, y)

    @staticmethod
    def _unroutable(x: torch.Tensor, call: ResizeCall) -> str:
        if call.attributes is None:
            return f"mode {call.torch_mode!r} is not an ONNX Resize"
        if x.device.type != "cpu":
            return f"input on {x.device}: the op runs on CPU"
        if x.dtype not in _OP_DTYPES:
            return f"input dtype {x.dtype}: the op takes floating tensors"
        return ""

    @staticmethod
    def _scales(
        x: torch.Tensor,
        factors: tuple[float, ...],
        attributes: dict[str, Any],
        recompute: Optional[bool],
        target: Optional[tuple[int, ...]] = None,
    ) -> torch.Tensor:
        """The op's scales for ``factors``, chosen so the op reproduces torch (and ONNX Runtime).

        The op follows ONNX's reference evaluator: float64 coordinates, and align_corners
        over the fractional output width ``in * scale``. torch and ONNX Runtime use the
        integer output length and float32 steps; these scales close both gaps:

        * recompute_scale_factor=True, align_corners or an :class:`OutputSize`: ``s = out / in``
          (``out = floor(in * f)`` as torch, or the size given), nudged until ``floor(in * s) == out``;
        * nearest: ``s = 1 / float32(1 / f)``, torch's own float32 step,
          and ``out / in`` where torch's legacy-nearest kernel takes a shortcut (``out`` is ``in`` or ``2 * in``);
        * otherwise ``float32(f)``, as an ONNX scales input carries it.
        """
        values = [1.0] * (x.dim() - len(factors))
        exact = bool(recompute) or target is not None or attributes["coordinate_transformation_mode"] == "align_corners"
        for axis, (size, f) in enumerate(zip(x.shape[2:], factors)):
            out = target[axis] if target is not None else math.floor(size * f)
            if out < 1:
                s = f  # an empty output: the op reports it as torch would
            elif exact or (attributes["coordinate_transformation_mode"] == "asymmetric" and out in (size, 2 * size)):
                # (legacy nearest: torch's kernel copies (out == in) or halves indices (out == 2 * in) there)
                s = _keeping(out / size, size, out)
            elif attributes["mode"] == "nearest":
                s = 1.0 / _float32(1.0 / f)
                if math.floor(size * s) != out:  # in * f is (nearly) integral: the float32 step misses it
                    s = _keeping(out / size, size, out)
            else:
                s = _float32(f)
            values.append(s)
        return torch.tensor(values, dtype=torch.float64)

    def _torch(self, call: ResizeCall, x: torch.Tensor, bound: inspect.BoundArguments, factors: Any) -> torch.Tensor:
        p = dict(bound.arguments)
        if call.target_size is not None:
            p["size"], p["scale_factor"], p["recompute_scale_factor"] = list(call.target_size), None, None
        elif call.site is not None:
            p["scale_factor"] = list(factors)
        return self._finish(call, x, _INTERPOLATE(**p))

    def _finish(self, call: ResizeCall, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        call.output_shape = tuple(y.shape)
        if self.record_tensors:
            # copies: models often add into a resize's output in place (FPN top-down paths)
            if self.record_tensors != "outputs":
                call.input = x.detach().clone()
            call.output = y.detach().clone()
        return y


def route_resize(
    factor: Optional[FactorLike] = None,
    *,
    sites: Optional[Mapping[SiteKey, FactorLike]] = None,
    record_tensors: Union[bool, str] = False,
    module: Optional[torch.nn.Module] = None,
) -> ResizeRouter:
    """A :class:`ResizeRouter` to use as ``with route_resize(...) as router:`` (arguments documented there)."""
    return ResizeRouter(factor, sites=sites, record_tensors=record_tensors, module=module)
