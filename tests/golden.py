"""Golden ONNX models built in code (no binaries), for every Resize/Upsample shape the passes meet.

Other test modules import these builders; their names and signatures are stable.
Every builder returns a fresh ``onnx.ModelProto`` that passes
``onnx.checker.check_model(full_check=True)`` and runs in ONNX Runtime. Inputs are
named ``x`` (N x C x H x W float32), outputs ``y``. Small by design: tests stay fast.

Builders:

* :func:`resize_model` - one Resize at opset 10/11/13/18/19 (op versions 10, 11, 13, 18,
  19), scales from any source in :data:`SCALES_SOURCES`, any mode/attributes.
* :func:`upsample_model` - one Upsample-7 (scales attribute, opset 7/8) or Upsample-9
  (scales input, opset 9).
* :func:`fpn_model` - several Resize sites with different factors feeding each other
  (FPN-like top-down path), the shape real detectors have.
* :func:`sizes_model` - a Resize driven by ``sizes`` instead of scales.
* :func:`shared_constant_model` - a scales Constant that another node also reads.
* :func:`custom_domain_model` - a Resize next to a node in a custom domain ORT cannot run.
* :func:`spatial_resize_model` - one Resize on 1, 2 or 3 spatial axes (shapes in :data:`SPATIAL_SHAPES`).
* :func:`free_and_pinned_model` - one factor-free site and one pinned by a Concat with a lateral.
* :func:`sizes_from_static_shapes_model` - sizes computed from two inputs' static shapes
  (what simplify=True folds).
* :func:`typed_resize_model` - a Resize of a tensor of any element type (uint8, int8, int32, float16 ...), any mode.
* :func:`grid_sample_model` - one GridSample (what the built-in ``gridsample`` plugin spec matches).
* :func:`constant_output_model` - ``x * 0 -> Resize``: every output is the constant zero (vacuous to compare).
* :func:`resize_conv` - ``x -> Resize -> Conv3x3 -> y`` with scales from an input, a pair or a constant
  (what validate compares).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import onnx
import onnx.parser
from onnx import TensorProto, helper, numpy_helper

__all__ = [
    "RESIZE_OPSETS",
    "SCALES_SOURCES",
    "SPATIAL_SHAPES",
    "TORCH_UP_MODULE",
    "constant_output_model",
    "custom_domain_model",
    "fpn_model",
    "free_and_pinned_model",
    "grid_sample_model",
    "resize_conv",
    "resize_model",
    "shared_constant_model",
    "sizes_from_static_shapes_model",
    "sizes_model",
    "spatial_resize_model",
    "typed_resize_model",
    "upsample_model",
]

#: One opset per Resize schema version: Resize-10, -11, -13, -18, -19.
RESIZE_OPSETS = (10, 11, 13, 18, 19)
#: Where the scales of :func:`resize_model` come from.
SCALES_SOURCES = ("initializer", "constant", "identity", "folded", "graph_input", "runtime")
#: A Python module (source text) for a ``python:FILE:build`` reference: PyTorch's x2 nearest interpolate (ONNX's
#: asymmetric / floor nearest) followed by a Relu. Loading it needs torch.
TORCH_UP_MODULE = """
import torch
from torch import nn


class Up(nn.Module):
    def forward(self, x):
        return torch.relu(nn.functional.interpolate(x, scale_factor=2.0, mode="nearest"))


def build():
    return Up()
"""
#: The input shape of :func:`spatial_resize_model` per number of spatial axes (odd lengths, N and C first).
SPATIAL_SHAPES = {1: [1, 3, 7], 2: [1, 3, 5, 7], 3: [1, 2, 3, 5, 7]}


def _ir_version(opset: int) -> int:
    # The lowest IR version that supports the opset keeps the models loadable by old tools.
    return {7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9}.get(opset, 10)


def _model(
    nodes, inputs, outputs, initializers, opset: int, *, infer: bool = True, extra_opsets=(), check: bool = True
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "golden", inputs, outputs, initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset), *[helper.make_opsetid(d, v) for d, v in extra_opsets]],
        producer_name="onnxtool-tests",
    )
    model.ir_version = _ir_version(opset)
    if infer:
        # value_info with static shapes, so tests can see that no stale shape survives.
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    if check:
        onnx.checker.check_model(model, full_check=True)
    return model


def _out_shape(shape: Sequence[int], scales: Sequence[float]) -> list:
    # nonsense scales (NaN, wrong length: for error tests) give a symbolic dim instead
    return [int(np.floor(d * s)) if np.isfinite(d * s) else f"out_{i}" for i, (d, s) in enumerate(zip(shape, scales))]


def _scales_nodes(source: str, scales: Sequence[float], x: str = "x", name: str = "scales_const"):
    """Nodes, initializers and extra inputs that produce the scales tensor; returns (..., tensor)."""
    value = np.asarray(scales, dtype=np.float32)
    nodes, inits, inputs = [], [], []
    if source == "initializer":
        inits.append(numpy_helper.from_array(value, name))
        return nodes, inits, inputs, name
    if source == "constant":
        nodes.append(
            helper.make_node("Constant", [], [name], name=f"{name}_node", value=numpy_helper.from_array(value, name))
        )
        return nodes, inits, inputs, name
    if source == "identity":
        inits.append(numpy_helper.from_array(value, f"{name}_src"))
        nodes.append(helper.make_node("Identity", [f"{name}_src"], [f"{name}_id1"], name=f"{name}_identity1"))
        nodes.append(helper.make_node("Identity", [f"{name}_id1"], [name], name=f"{name}_identity2"))
        return nodes, inits, inputs, name
    if source == "folded":
        # Concat([1, 1], Mul([h, w] / 2, 2)): the kind of arithmetic exporters leave behind.
        head = np.asarray(scales[:2], dtype=np.float32)
        tail = np.asarray(scales[2:], dtype=np.float32) / 2
        inits += [
            numpy_helper.from_array(head, f"{name}_head"),
            numpy_helper.from_array(tail, f"{name}_half"),
            numpy_helper.from_array(np.asarray([2.0], np.float32), f"{name}_two"),
        ]
        nodes.append(helper.make_node("Mul", [f"{name}_half", f"{name}_two"], [f"{name}_tail"], name=f"{name}_mul"))
        nodes.append(
            helper.make_node("Concat", [f"{name}_head", f"{name}_tail"], [name], name=f"{name}_concat", axis=0)
        )
        return nodes, inits, inputs, name
    if source == "graph_input":
        inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [len(scales)]))
        return nodes, inits, inputs, name
    if source == "runtime":
        # Shape(x) / Shape(x) * scales: constant in value, but computed from data at run time.
        inits.append(numpy_helper.from_array(value, f"{name}_base"))
        nodes += [
            helper.make_node("Shape", [x], [f"{name}_shape"], name=f"{name}_shape_node"),
            helper.make_node("Cast", [f"{name}_shape"], [f"{name}_f"], name=f"{name}_cast", to=TensorProto.FLOAT),
            helper.make_node("Div", [f"{name}_f", f"{name}_f"], [f"{name}_ones"], name=f"{name}_div"),
            helper.make_node("Mul", [f"{name}_ones", f"{name}_base"], [name], name=f"{name}_mul"),
        ]
        return nodes, inits, inputs, name
    raise ValueError(f"unknown scales source {source!r}; use one of {SCALES_SOURCES}")


def resize_model(
    opset: int = 13,
    *,
    source: str = "initializer",
    scales: Sequence[float] = (1.0, 1.0, 2.0, 2.0),
    shape: Sequence[Optional[int]] = (1, 3, 8, 8),
    mode: str = "nearest",
    coordinate_transformation_mode: Optional[str] = None,
    nearest_mode: Optional[str] = None,
    axes: Optional[Sequence[int]] = None,
    antialias: Optional[int] = None,
    empty_roi: str = "constant",
    post_op: bool = True,
    infer: bool = True,
) -> onnx.ModelProto:
    """``x -> Resize(scales) -> [Relu] -> y`` at ``opset`` (10 gives Resize-10's (X, scales) form).

    ``shape`` entries that are None become symbolic (``N``, ``H``, ``W``...). ``empty_roi``:
    "constant" (an empty Constant, as the TorchScript exporter writes) or "empty" (the
    empty-string input the dynamo exporter writes; opset 13+ only). ``axes`` (opset 18+):
    ``scales`` then has one entry per axis. ``post_op`` adds a Relu after the Resize so the
    rewritten output has a downstream node. ``infer=False`` skips shape inference and the
    checker, for models with deliberately nonsense scales (NaN, wrong length).
    """
    names = ["N", "C", "H", "W", "D"]
    dims = [d if d is not None else names[i] for i, d in enumerate(shape)]
    nodes, inits, extra_inputs, scales_name = _scales_nodes(source, scales)
    attrs = {"mode": mode}
    if opset >= 11:
        if coordinate_transformation_mode is not None:
            attrs["coordinate_transformation_mode"] = coordinate_transformation_mode
        if nearest_mode is not None:
            attrs["nearest_mode"] = nearest_mode
    if axes is not None:
        attrs["axes"] = list(axes)
    if antialias is not None:
        attrs["antialias"] = antialias
    if opset == 10:
        resize_inputs = ["x", scales_name]
    else:
        if empty_roi == "empty" and opset >= 13:
            roi = ""
        else:
            roi = "roi_empty"
            nodes.append(
                helper.make_node(
                    "Constant", [], [roi], name="roi_node", value=helper.make_tensor(roi, TensorProto.FLOAT, [0], [])
                )
            )
        resize_inputs = ["x", roi, scales_name]
    resized = "resized" if post_op else "y"
    nodes.append(helper.make_node("Resize", resize_inputs, [resized], name="resize", **attrs))
    if post_op:
        nodes.append(helper.make_node("Relu", [resized], ["y"], name="relu"))
    full = list(scales)
    if axes is not None:
        full = [1.0] * len(shape)
        for axis, value in zip(axes, scales):
            full[axis] = value
    out_dims = [_out_shape([d], [s])[0] if isinstance(d, int) else None for d, s in zip(dims, full)]
    out_dims = [o if o is not None else (d if s == 1.0 else f"{d}_out") for o, d, s in zip(out_dims, dims, full)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims), *extra_inputs]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_dims)]
    return _model(nodes, inputs, outputs, inits, opset, infer=infer, check=infer)


def upsample_model(
    version: int = 9,
    *,
    opset: Optional[int] = None,
    scales: Sequence[float] = (1.0, 1.0, 2.0, 2.0),
    shape: Sequence[int] = (1, 2, 5, 7),
    mode: str = "nearest",
    source: str = "constant",
    extra_ops: Sequence[str] = (),
) -> onnx.ModelProto:
    """``x -> Upsample -> Relu -> y``: ``version`` 7 keeps scales in an attribute (opset 7 or
    8, default 8), 9 reads them from an input (opset 9) coming from ``source``.

    ``extra_ops`` appends ops after the Relu to exercise the opset-9 bump: "Gemm"-like ops
    that only gained types at 9, or "Scan"-free ones; "BatchNormalization" adds one with the
    default ``spatial``.
    """
    opset = opset or (8 if version == 7 else 9)
    nodes, inits, extra_inputs = [], [], []
    if version == 7:
        nodes.append(helper.make_node("Upsample", ["x"], ["up"], name="upsample", mode=mode, scales=list(scales)))
    else:
        more_nodes, inits, extra_inputs, scales_name = _scales_nodes(source, scales)
        nodes += more_nodes
        nodes.append(helper.make_node("Upsample", ["x", scales_name], ["up"], name="upsample", mode=mode))
    nodes.append(helper.make_node("Relu", ["up"], ["relu_out"], name="relu"))
    last = "relu_out"
    out_shape = _out_shape(shape, scales)
    for index, op in enumerate(extra_ops):
        if op == "BatchNormalization":
            channels = out_shape[1]
            for param, fill in (("scale", 1.5), ("bias", 0.1), ("mean", 0.2), ("var", 2.0)):
                inits.append(numpy_helper.from_array(np.full([channels], fill, np.float32), f"bn_{param}"))
            nodes.append(
                helper.make_node(
                    "BatchNormalization",
                    [last, "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                    [f"extra_{index}"],
                    name=f"bn_{index}",
                )
            )
        elif op == "Scan":
            raise ValueError("use scan_blocks_bump in the test instead")
        else:
            nodes.append(helper.make_node(op, [last], [f"extra_{index}"], name=f"extra_{index}"))
        last = f"extra_{index}"
    nodes.append(helper.make_node("Identity", [last], ["y"], name="out"))
    # IR 3 (opset 7/8) requires initializers to be graph inputs as well.
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape)), *extra_inputs]
    if _ir_version(opset) < 4:
        inputs += [helper.make_tensor_value_info(i.name, i.data_type, list(i.dims)) for i in inits]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)]
    return _model(nodes, inputs, outputs, inits, opset)


def fpn_model(
    opset: int = 13,
    *,
    factors: Sequence[float] = (2.0, 4.0, 8.0),
    base: int = 2,
    channels: int = 4,
    mode: str = "nearest",
    coordinate_transformation_mode: str = "asymmetric",
    symbolic: bool = True,
) -> onnx.ModelProto:
    """An FPN-like top-down path: a coarse map ``x`` (N x C x base x base) is upsampled by
    each factor and added to a lateral map of the matching size; the sums are concatenated
    after bringing them to the finest resolution. Sites have different factors and mixed
    scales sources (initializer, Constant, Identity), like real detectors.

    With ``symbolic`` the batch dim is named ``N`` and H/W are static.
    """
    nodes, inits, inputs = [], [], []
    batch = "N" if symbolic else 1
    inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, channels, base, base]))
    finest = int(base * max(factors))
    branch_outputs = []
    sources = ("initializer", "constant", "identity")
    for index, factor in enumerate(factors):
        size = int(base * factor)
        lateral = f"lateral_{index}"
        inputs.append(helper.make_tensor_value_info(lateral, TensorProto.FLOAT, [batch, channels, size, size]))
        more, more_inits, _, scales_name = _scales_nodes(
            sources[index % len(sources)], [1.0, 1.0, factor, factor], name=f"scales_const_{index}"
        )
        nodes += more
        inits += more_inits
        roi = f"roi_{index}"
        nodes.append(
            helper.make_node(
                "Constant",
                [],
                [roi],
                name=f"roi_node_{index}",
                value=helper.make_tensor(roi, TensorProto.FLOAT, [0], []),
            )
        )
        attrs = {"mode": mode, "coordinate_transformation_mode": coordinate_transformation_mode}
        if mode == "nearest":
            attrs["nearest_mode"] = "floor"
        nodes.append(
            helper.make_node("Resize", ["x", roi, scales_name], [f"up_{index}"], name=f"resize_{index}", **attrs)
        )
        nodes.append(helper.make_node("Add", [f"up_{index}", lateral], [f"sum_{index}"], name=f"add_{index}"))
        # Back to the finest grid with a second, fixed-size Tile so the branches concatenate.
        repeat = finest // size
        reps = f"reps_{index}"
        inits.append(numpy_helper.from_array(np.asarray([1, 1, repeat, repeat], np.int64), reps))
        nodes.append(helper.make_node("Tile", [f"sum_{index}", reps], [f"tiled_{index}"], name=f"tile_{index}"))
        branch_outputs.append(f"tiled_{index}")
    nodes.append(helper.make_node("Concat", branch_outputs, ["y"], name="concat", axis=1))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, channels * len(factors), finest, finest])]
    return _model(nodes, inputs, outputs, inits, opset)


def sizes_model(
    opset: int = 13,
    *,
    sizes: Sequence[int] = (1, 3, 24, 20),
    shape: Sequence[Optional[int]] = (1, 3, 8, 10),
    mode: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    keep_aspect_ratio_policy: Optional[str] = None,
) -> onnx.ModelProto:
    """``x -> Resize(sizes) -> y`` (roi and scales empty). ``shape`` entries that are None
    become symbolic, which makes the sizes impossible to express as scales."""
    names = ["N", "C", "H", "W"]
    dims = [d if d is not None else names[i] for i, d in enumerate(shape)]
    inits = [numpy_helper.from_array(np.asarray(sizes, np.int64), "sizes_const")]
    attrs = {"mode": mode, "coordinate_transformation_mode": coordinate_transformation_mode}
    if keep_aspect_ratio_policy is not None:
        attrs["keep_aspect_ratio_policy"] = keep_aspect_ratio_policy
    if opset >= 13:
        inputs_ = ["x", "", "", "sizes_const"]
        nodes = []
    else:
        nodes = [
            helper.make_node(
                "Constant", [], ["roi_empty"], value=helper.make_tensor("roi_empty", TensorProto.FLOAT, [0], [])
            ),
            helper.make_node(
                "Constant", [], ["scales_empty"], value=helper.make_tensor("scales_empty", TensorProto.FLOAT, [0], [])
            ),
        ]
        inputs_ = ["x", "roi_empty", "scales_empty", "sizes_const"]
    nodes.append(helper.make_node("Resize", inputs_, ["y"], name="resize", **attrs))
    out = list(sizes) if keep_aspect_ratio_policy in (None, "stretch") else [None] * len(sizes)
    out = [o if o is not None else f"out_{i}" for i, o in enumerate(out)]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        inits,
        opset,
    )


def shared_constant_model(opset: int = 13, *, via: str = "initializer") -> onnx.ModelProto:
    """The scales tensor of the Resize is also read by a Mul on another branch, so a rewrite
    must leave it in place: ``y = Resize(x, s)``, ``z = Mul(v, s)``."""
    nodes, inits, _, scales_name = _scales_nodes(via, [1.0, 1.0, 2.0, 2.0])
    nodes.append(
        helper.make_node(
            "Constant", [], ["roi_empty"], value=helper.make_tensor("roi_empty", TensorProto.FLOAT, [0], [])
        )
    )
    nodes.append(helper.make_node("Resize", ["x", "roi_empty", scales_name], ["y"], name="resize", mode="nearest"))
    nodes.append(helper.make_node("Mul", ["v", scales_name], ["z"], name="mul"))
    return _model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4]),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [4]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [4]),
        ],
        inits,
        opset,
    )


def custom_domain_model(opset: int = 13) -> onnx.ModelProto:
    """``x -> Resize(initializer scales) -> custom.domain::Mystery -> y``: ORT cannot run it."""
    nodes, inits, _, scales_name = _scales_nodes("initializer", [1.0, 1.0, 2.0, 2.0])
    nodes.append(helper.make_node("Resize", ["x", "", scales_name], ["up"], name="resize", mode="nearest"))
    nodes.append(helper.make_node("Mystery", ["up"], ["y"], name="mystery", domain="custom.domain"))
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 8, 8])],
        inits,
        opset,
        infer=False,
        extra_opsets=[("custom.domain", 1)],
    )


def spatial_resize_model(
    spatial: int, mode: str = "linear", factor: float = 2.0, x: str = "", opset: int = 13
) -> onnx.ModelProto:
    """``X -> Resize(initializer scales: 1, 1, factor on every spatial axis) -> Y`` on ``spatial`` axes.

    ``x`` overrides the input's declaration (``"float[N,3,?]"``); by default it is float32 of
    :data:`SPATIAL_SHAPES` ``[spatial]``.
    """
    rank = spatial + 2
    scales = ", ".join(["1.0", "1.0"] + [repr(float(factor))] * spatial)
    x = x or "float" + str(SPATIAL_SHAPES[spatial]).replace(" ", "")
    return onnx.parser.parse_model(f"""
<ir_version: 8, opset_import: ["" : {opset}]>
g ({x} X) => (float[{",".join("?" * rank)}] Y) <float[{rank}] s = {{{scales}}}> {{
  Y = Resize <mode="{mode}"> (X, , s)
}}""")


def free_and_pinned_model() -> onnx.ModelProto:
    """Two x2 sites on one input: ``free_y`` meets nothing (factor-free), ``up`` is pinned by a Concat
    with ``lateral`` (float[1,4,16,16]). Each node is named after its output."""
    model = onnx.parser.parse_model(
        '< ir_version: 8, opset_import: ["" : 13] >'
        + """
    two (float[1,4,8,8] x, float[1,4,16,16] lateral) => (float[1,4,16,16] free_y, float[1,8,16,16] pinned_y)
    <float[4] scales = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}>
    {
        free_y = Resize <mode = "nearest"> (x, roi, scales)
        up = Resize <mode = "nearest"> (x, roi, scales)
        pinned_y = Concat <axis = 1> (up, lateral)
    }
    """
    )
    for node in model.graph.node:
        node.name = node.output[0]
    return model


def sizes_from_static_shapes_model() -> onnx.ModelProto:
    """``up = Resize(x, sizes=Concat(Shape(x)[0:2], Shape(lateral)[2:4]))`` concatenated with ``lateral``:
    the sizes are computed, but only from static shapes (simplify=True folds them to a constant)."""
    return onnx.parser.parse_model(
        '< ir_version: 8, opset_import: ["" : 13] >'
        + """
    g (float[1,4,8,8] x, float[1,4,16,16] lateral) => (float[1,8,16,16] y)
    <int64[1] two = {2}, int64[1] four = {4}, int64[1] zero = {0}>
    {
        xs = Shape (x)
        nc = Slice (xs, zero, two)
        ls = Shape (lateral)
        hw = Slice (ls, two, four)
        sizes = Concat <axis = 0> (nc, hw)
        up = Resize <mode = "nearest"> (x, , , sizes)
        y = Concat <axis = 1> (up, lateral)
    }
    """
    )


def typed_resize_model(dtype: str, mode: str = "nearest") -> onnx.ModelProto:
    """``y = Resize(x, scales 1, 1, 2, 2)`` on a ``dtype`` tensor (``"uint8"``, ``"int32"``, ``"float16"`` ...), opset 17."""
    return onnx.parser.parse_model(f"""
    <ir_version: 8, opset_import: ["" : 17]>
    g ({dtype}[1,2,4,4] x) => ({dtype}[1,2,8,8] y) <float[4] s = {{1.0, 1.0, 2.0, 2.0}}> {{
        y = Resize<mode = "{mode}">(x, , s)
    }}""")


def grid_sample_model() -> onnx.ModelProto:
    """``y = GridSample<bilinear>(x, grid)``, opset 16, static shapes."""
    return onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 16]>
g (float[1,3,8,8] x, float[1,4,5,2] grid) => (float[1,3,4,5] y) {
  y = GridSample <mode="bilinear"> (x, grid)
}""")


def resize_conv(
    *,
    scales: str = "input",
    factor: float = 3.0,
    mode: str = "cubic",
    ctm: str = "half_pixel",
    coeff: float = -0.75,
    nudge: float = 0.0,
    opset: int = 17,
) -> onnx.ModelProto:
    """X[1,3,h,w] -> Resize -> Conv3x3 -> y. ``scales``: "input" ([4] graph input), "pair"
    ([2] input concatenated after [1, 1]) or "constant" (an initializer holding ``factor``)."""
    rng = np.random.default_rng(1)
    weight = (rng.standard_normal((3, 3, 3, 3)) * 0.2).astype(np.float32)
    weight[0, 0, 1, 1] += nudge
    inits = [
        numpy_helper.from_array(weight, "conv.weight"),
        numpy_helper.from_array(np.full(3, 0.1, np.float32), "conv.bias"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])]
    nodes = []
    if scales == "input":
        inputs.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]))
        scales_name = "scales"
    elif scales == "pair":
        inputs.append(helper.make_tensor_value_info("factor_hw", TensorProto.FLOAT, [2]))
        inits.append(numpy_helper.from_array(np.ones(2, np.float32), "ones"))
        nodes.append(helper.make_node("Concat", ["ones", "factor_hw"], ["full_scales"], axis=0))
        scales_name = "full_scales"
    else:
        inits.append(numpy_helper.from_array(np.array([1, 1, factor, factor], np.float32), "baked"))
        scales_name = "baked"
    nodes.append(
        helper.make_node(
            "Resize",
            ["x", "", scales_name],
            ["up"],
            name="upsample",
            mode=mode,
            coordinate_transformation_mode=ctm,
            cubic_coeff_a=coeff,
        )
    )
    nodes.append(helper.make_node("Conv", ["up", "conv.weight", "conv.bias"], ["y"], pads=[1, 1, 1, 1]))
    graph = helper.make_graph(
        nodes, "resize_conv", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, "H", "W"])], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model, full_check=True)
    return model


def constant_output_model() -> onnx.ModelProto:
    """``x[1,1,4,4] * 0 -> Resize(x2, nearest) -> y``: every output element is zero whatever the input, so a
    comparison of two runs proves nothing (what the vacuity checks must refuse to call a pass)."""
    zero = numpy_helper.from_array(np.zeros((), np.float32), "zero")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales_const")
    nodes = [
        helper.make_node("Mul", ["x", "zero"], ["z"], name="mul"),
        helper.make_node("Resize", ["z", "", "scales_const"], ["y"], name="resize", mode="nearest"),
    ]
    graph = helper.make_graph(
        nodes,
        "zeros",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 8, 8])],
        [zero, scales],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
