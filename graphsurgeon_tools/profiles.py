"""Optimization profiles for TensorRT: trtexec flags, the Polygraphy option, ORT's TensorRT options.

``tensorrt_profile(model, sizes=(min, opt, max), factors=(min, opt, max)) -> Profile``

Every dynamic input of a TensorRT engine needs a min/opt/max range, and an input whose
*values* set shapes (a shape tensor: an int64 factor or output-size input feeding a
Resize, or a plugin shape input) needs min/opt/max *values*:

* trtexec (NVIDIA/TensorRT samples/common/sampleEngines.cpp): ``--minShapes=x:1x3x64x64,f:2x2``;
  for a shape-tensor input the numbers are passed to ``setShapeValues`` (its values);
* Polygraphy (``polygraphy run/convert``): ``--trt-min-shapes x:[1,3,64,64] f:[2,2]``
  (then ``--trt-opt-shapes``, ``--trt-max-shapes``); shape tensors take values alike;
* ONNX Runtime's TensorRT provider (onnxruntime tensorrt_execution_provider.cc,
  ApplyProfileShapesFromProviderOptions): ``trt_profile_min_shapes="x:1x3x64x64,f:2x2"``
  (and ``_opt_``/``_max_``); for a shape tensor the numbers are its values; every dynamic
  input must be listed.

Roles of the inputs (found from the graph, not from names):
* ``data``: inputs with symbolic dims; the spatial dims (axes 2.. of an (N, C, ...) input:
  (l), (h, w) or (d, h, w); the last two of a rank-2 one) take ``sizes``, every other
  symbolic dim takes ``batch``;
* ``factor``: integer inputs whose values reach a Resize's scales/sizes or a plugin shape
  input through arithmetic (e.g. Shape(X) * f); values = the factors (per resized axis);
* ``sizes``: integer inputs that reach a Resize's sizes or a plugin shape input through
  value-preserving ops only (Identity, Cast, Concat, Unsqueeze, Squeeze, Reshape);
  values = the output size at that site for the data size and factor, computed by ONNX
  shape inference with the data shape and factor values fixed (site by site, in order);
* float inputs feeding a Resize (``scales``) are not listed: TensorRT cannot take them as
  shape inputs (lint rule trt-shape-input-integer); ``Profile.notes`` says so.

Requires: a ModelProto or path. Ensures: min <= opt <= max per value; the model is not
changed. Does NOT: build an engine or check that TensorRT accepts the ranges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence, Union

import onnx
from onnx import ModelProto, TensorProto, helper

from graphsurgeon_tools.core.checker import shape_inference, static_shape, value_info_map, weightless_copy
from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.io import load_model
from graphsurgeon_tools.lint import _geometry as geo
from graphsurgeon_tools.lint.base import LintContext
from graphsurgeon_tools.resize import find_resize_sites

_PASS_THROUGH = ("Identity", "Cast", "Concat", "Unsqueeze", "Squeeze", "Reshape", "Flatten")
_INTEGER = {6, 7}  # TensorProto.INT32, INT64
_LEVELS = ("min", "opt", "max")


@dataclass(frozen=True)
class InputRange:
    """One profile entry: shapes for a data input, values for a shape input."""

    name: str
    role: str  # "data" | "factor" | "sizes"
    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]

    @property
    def values(self) -> bool:
        """True when the numbers are a shape input's values, not a tensor's dims."""
        return self.role != "data"

    def level(self, which: str) -> tuple[int, ...]:
        return {"min": self.min, "opt": self.opt, "max": self.max}[which]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "values": self.values,
            "min": list(self.min),
            "opt": list(self.opt),
            "max": list(self.max),
        }


@dataclass
class Profile:
    """A single optimization profile and its spellings for three tools."""

    inputs: list[InputRange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def _spec(self, which: str) -> str:
        return ",".join(f"{i.name}:{'x'.join(str(v) for v in i.level(which))}" for i in self.inputs)

    def trtexec(self) -> list[str]:
        """``--minShapes=... --optShapes=... --maxShapes=...`` (one argv entry each)."""
        return [f"--{which}Shapes={self._spec(which)}" for which in _LEVELS]

    def polygraphy(self) -> list[str]:
        """``--trt-min-shapes a:[..] b:[..] --trt-opt-shapes ... --trt-max-shapes ...`` as argv."""
        argv: list[str] = []
        for which in _LEVELS:
            argv.append(f"--trt-{which}-shapes")
            argv.extend(f"{i.name}:[{','.join(str(v) for v in i.level(which))}]" for i in self.inputs)
        return argv

    def onnxruntime(self) -> dict[str, str]:
        """TensorRT execution-provider options ``trt_profile_{min,opt,max}_shapes``."""
        return {f"trt_profile_{which}_shapes": self._spec(which) for which in _LEVELS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "inputs": [i.to_dict() for i in self.inputs],
            "trtexec": " ".join(self.trtexec()),
            "polygraphy": " ".join(self.polygraphy()),
            "onnxruntime": self.onnxruntime(),
            "notes": list(self.notes),
        }


Levels = Sequence[Any]  # (min, opt, max)


def _three(name: str, value: Levels) -> tuple[Any, Any, Any]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise UsageError(f"{name} takes three entries (min, opt, max), got {value!r}")
    return tuple(value)  # type: ignore[return-value]


def _per_axis(value: Any, count: int, what: str) -> tuple[Any, ...]:
    items = tuple(value) if isinstance(value, (list, tuple)) else (value,) * count
    if len(items) == 1 and count > 1:
        items = items * count
    if len(items) != count:
        raise UsageError(f"{what} has {len(items)} entries for {count} axes")
    return items


def _check_order(entry: InputRange) -> None:
    for lo, mid, hi in zip(entry.min, entry.opt, entry.max):
        if not lo <= mid <= hi:
            raise UsageError(
                f"profile for {entry.name!r}: need min <= opt <= max, got "
                f"{list(entry.min)}, {list(entry.opt)}, {list(entry.max)}"
            )


def _shape_slots(ctx: "LintContext") -> list[tuple[str, str]]:
    """(tensor setting a shape, the X it resizes) for Resize parameters and plugin shape inputs."""
    slots = []
    for site in ctx.sites:
        tensor = geo.parameter_tensor(site)
        if tensor and (geo.uses_sizes(site) or geo.scales_are_tensor(site)):
            slots.append((tensor, site.input_name))
    for node in ctx.plugin_nodes:
        for attr in node.attribute:
            if attr.name == "tensorrt_plugin_shape_input_indices":
                slots.extend((node.input[i % len(node.input)], node.input[0]) for i in attr.ints if node.input)
    return slots


def _passed_through(ctx: "LintContext", tensor: str) -> set[str]:
    """Graph inputs reaching ``tensor`` through value-preserving ops only."""
    found, stack, seen = set(), [tensor], set()
    while stack:
        name = stack.pop()
        if name in seen or not name:
            continue
        seen.add(name)
        if name in ctx.graph_inputs:
            found.add(name)
            continue
        node = ctx.producers.get(name)
        if node is not None and node.op_type in _PASS_THROUGH:
            stack.extend(node.input)
    return found


def _dims(info: Any) -> list[Any]:
    return list(static_shape(info) or ())


def tensorrt_profile(
    model: Union["ModelProto", str, Any], *, sizes: Levels, factors: Levels, batch: Levels = (1, 1, 1)
) -> Profile:
    """One optimization profile for ``model``'s dynamic inputs and shape inputs.

    Args:
        model: ModelProto or path (weights are not read).
        sizes: (min, opt, max) data sizes, each one int per spatial axis ((l), (h, w), (d, h, w)) or
            one int for every spatial axis.
        factors: (min, opt, max) resize factors, each one int or one per resized (spatial) axis.
        batch: (min, opt, max) for every other symbolic dim of a data input.
    """
    proto = load_model(model)
    ctx = LintContext(proto, find_resize_sites(proto))
    sizes3 = _three("sizes", sizes)
    factors3 = _three("factors", factors)
    batch3 = _three("batch", batch)
    profile = Profile()
    slots = _shape_slots(ctx)
    feeding = {name for tensor, _ in slots for name in ctx.graph_inputs_feeding(tensor)}
    sized = {name for tensor, _ in slots for name in _passed_through(ctx, tensor)}
    infos = {i.name: i for i in proto.graph.input}
    data_shapes: dict[str, list[tuple[int, ...]]] = {}
    for name, code in ctx.graph_inputs.items():
        dims = _dims(infos[name])
        if name in feeding:
            if code not in _INTEGER:
                profile.notes.append(
                    f"{name!r} ({ctx.elem_type_name(name)}) feeds a Resize but cannot be a "
                    'TensorRT shape input: rewrite with layout="factor" or layout="sizes"'
                )
            continue
        if all(isinstance(d, int) for d in dims):
            continue  # static: no profile entry needed
        levels = []
        first = _first_spatial(len(dims))
        for which in range(3):
            spatial = _per_axis(sizes3[which], len(dims) - first, f"the data size for {name!r}")
            shape = []
            for axis, d in enumerate(dims):
                if isinstance(d, int):
                    shape.append(d)
                elif axis >= first:
                    shape.append(int(spatial[axis - first]))
                else:
                    shape.append(int(batch3[which]))
            levels.append(tuple(shape))
        data_shapes[name] = levels
        profile.inputs.append(InputRange(name, "data", *levels))
    for name in ctx.graph_inputs:
        if name in feeding and ctx.graph_inputs[name] in _INTEGER and name not in sized:
            count = _vector_length(_dims(infos[name]))
            levels = [tuple(int(v) for v in _per_axis(f, count, f"factor for {name!r}")) for f in factors3]
            profile.inputs.append(InputRange(name, "factor", *levels))
    sized_inputs = [n for n in ctx.graph_inputs if n in sized and ctx.graph_inputs[n] in _INTEGER]
    if sized_inputs:
        per_level = [
            _output_sizes(proto, ctx, slots, sized_inputs, data_shapes, profile, which, factors3[which])
            for which in range(3)
        ]
        for name in sized_inputs:
            if all(name in level for level in per_level):
                profile.inputs.append(InputRange(name, "sizes", *(level[name] for level in per_level)))
            else:
                profile.notes.append(
                    f"{name!r}: the output size could not be inferred from the data size; give its values by hand"
                )
    for entry in profile.inputs:
        _check_order(entry)
    return profile


def _first_spatial(rank: int) -> int:
    """The first spatial axis: 2 for (N, C, ...) inputs of any spatial rank, the last two of a rank-2 one."""
    return 2 if rank >= 3 else max(rank - 2, 0)


def _vector_length(dims: list[Any]) -> int:
    if not dims:
        return 1  # a scalar shape input holds one value
    return int(dims[0]) if isinstance(dims[0], int) else 2


def _output_sizes(
    proto: "ModelProto",
    ctx: "LintContext",
    slots: list[tuple[str, str]],
    names: list[str],
    data_shapes: dict[str, list[tuple[int, ...]]],
    profile: Profile,
    which: int,
    factor: Any,
) -> dict[str, tuple[int, ...]]:
    """Values of each sizes input at one profile level, site by site (shape inference in between)."""
    work = weightless_copy(proto)
    for info in work.graph.input:
        if info.name in data_shapes:
            shape = data_shapes[info.name][which]
            dims = info.type.tensor_type.shape.dim
            for dim, value in zip(dims, shape):
                dim.ClearField("dim_param")
                dim.dim_value = value
    for info in list(work.graph.input):
        if info.name in ctx.graph_inputs and info.name not in names and info.name not in data_shapes:
            code = ctx.graph_inputs[info.name]
            if code in _INTEGER:  # a factor input: fix its value so the sizes downstream resolve
                count = _vector_length(_dims(info))
                _freeze(
                    work,
                    info.name,
                    TensorProto.INT64 if code == 7 else TensorProto.INT32,
                    [count] if _dims(info) else [],
                    [int(v) for v in _per_axis(factor, count, "factor")],
                )
    found: dict[str, tuple[int, ...]] = {}
    x_of = {}
    for tensor, x in slots:
        for name in _passed_through(ctx, tensor):
            x_of.setdefault(name, x)
    for name in names:  # graph order = site order for the layouts written here
        try:
            inferred = shape_inference(work)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as exc:
            profile.notes.append(f"shape inference failed ({str(exc).splitlines()[0]})")
            return found
        infos = value_info_map(inferred.graph)
        infos.update({i.name: i for i in inferred.graph.input})
        x_dims = _dims(infos.get(x_of.get(name, "")))
        count = _vector_length(_dims(next(i for i in proto.graph.input if i.name == name)))
        if len(x_dims) < count or not all(isinstance(d, int) for d in x_dims[-count:]):
            continue
        spatial = min(count, len(x_dims) - _first_spatial(len(x_dims)))  # a full-rank sizes input: 1 on N, C
        per_axis = _per_axis(factor, spatial, "factor")
        per_axis = (1,) * (count - len(per_axis)) + tuple(per_axis)
        value = tuple(int(math.floor(d * f)) for d, f in zip(x_dims[-count:], per_axis))
        found[name] = value
        _freeze(work, name, ctx.graph_inputs[name], [count], list(value))
    return found


def _freeze(model: "ModelProto", name: str, elem_type: int, dims: list[int], values: list[int]) -> None:
    """Turn graph input ``name`` into an initializer (shape inference then propagates its values)."""
    kept = [i for i in model.graph.input if i.name != name]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    model.graph.initializer.append(helper.make_tensor(name, elem_type, dims, values))


def parse_profile(text: str) -> tuple[tuple[Any, Any, Any], tuple[Any, Any, Any]]:
    """``"32x32,256x256,512x384:1,2,4"`` -> (sizes, factors), each (min, opt, max).

    A size is one int per spatial axis (``L``, ``HxW``, ``DxHxW``) or one int for all of them; a
    factor one int or one per spatial axis (``2x2``, ``2x2x2``). The
    factors part may be left out (``"32,256,512"``: factors 1, 2, 4 are NOT assumed; a
    model with factor or sizes inputs then needs them and raises UsageError).
    """

    def items(part: str, what: str) -> tuple[Any, Any, Any]:
        values = [v.strip() for v in part.split(",") if v.strip()]
        if len(values) != 3:
            raise UsageError(f"profile={text!r}: {what} need three entries (min,opt,max), got {len(values)}")
        out = []
        for value in values:
            try:
                dims = tuple(int(d) for d in value.lower().split("x"))
            except ValueError:
                raise UsageError(f"profile={text!r}: {value!r} is not an int, HxW or DxHxW") from None
            if len(dims) > 3 or any(d < 1 for d in dims):
                raise UsageError(f"profile={text!r}: {value!r} must be one to three positive ints (L, HxW, DxHxW)")
            out.append(dims if len(dims) > 1 else dims[0])
        return tuple(out)  # type: ignore[return-value]

    sizes_part, _, factors_part = text.partition(":")
    sizes = items(sizes_part, "sizes")
    factors = items(factors_part, "factors") if factors_part else (None, None, None)
    return sizes, factors  # type: ignore[return-value]


def profile_report(model: Union["ModelProto", str, Any], text: str) -> dict[str, Any]:
    """The ``profile`` entry of a model-writing command's report, from ``profile="SIZES:FACTORS"``."""
    sizes, factors = parse_profile(text)
    profile = tensorrt_profile(model, sizes=sizes, factors=factors if factors[0] is not None else (1, 1, 1))
    if factors[0] is None and any(i.role != "data" for i in profile.inputs):
        raise UsageError(
            f"profile={text!r}: the model has factor/sizes inputs; give factors as SIZES:FACTORS "
            "(e.g. 32,256,512:1,2,4)"
        )
    return profile.to_dict()
