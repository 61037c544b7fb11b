"""Models whose Resize/Upsample sites live outside the main graph (If/Loop/Scan bodies,
model-local functions), built in code for the site-discovery, pass and hostile tests.

Every builder returns a checker-valid ModelProto that ONNX Runtime runs: input ``x``
float [1, 3, 8, 8] (plus ``cond`` bool [] for If models), one output ``y``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18
X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
COND = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])


def _up(scales: Sequence[float], shape: Sequence[int] = (1, 3, 8, 8)) -> list:
    """The output shape at ``scales``; unknown dims where a (hostile) scale makes no size."""
    return [int(d * f) if np.isfinite(f) and f > 0 else None for d, f in zip(shape, scales)]


def _out(name: str, dims: Sequence[int]) -> onnx.ValueInfoProto:
    """Static output shapes on purpose: a rewrite must not leave them stale."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def _scales_const(name: str, scales: Sequence[float]) -> onnx.NodeProto:
    return helper.make_node(
        "Constant",
        [],
        [name],
        name=name,
        value=helper.make_tensor(name, TensorProto.FLOAT, [len(scales)], list(scales)),
    )


def _resize(name: str, x: str, scales: str, out: str, **attrs) -> onnx.NodeProto:
    return helper.make_node("Resize", [x, "", scales], [out], name=name, **attrs)


def _model(graph: onnx.GraphProto, opset: int = OPSET, functions=(), extra_opsets=()) -> onnx.ModelProto:
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset), *extra_opsets], functions=list(functions)
    )
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def if_model(
    then_scales: Sequence[float] = (1, 1, 2, 2),
    else_scales: Sequence[float] = (1, 1, 2, 2),
    outer_constant: bool = True,
    mode: str = "nearest",
) -> onnx.ModelProto:
    """``y = If(cond, then: Resize(x, Constant), else: Resize(x, outer initializer))``.

    The then branch holds its scales in a Constant node of its own; the else branch reads a
    main-graph initializer (``outer_constant``) or a Constant of its own.
    """
    then_body = helper.make_graph(
        [_scales_const("then_scales", then_scales), _resize("then_resize", "x", "then_scales", "then_y", mode=mode)],
        "then",
        [],
        [_out("then_y", _up(then_scales))],
    )
    else_nodes = [] if outer_constant else [_scales_const("else_scales", else_scales)]
    else_body = helper.make_graph(
        else_nodes + [_resize("else_resize", "x", "else_scales", "else_y", mode=mode)],
        "else",
        [],
        [_out("else_y", _up(else_scales))],
    )
    inits = [numpy_helper.from_array(np.asarray(else_scales, np.float32), "else_scales")] if outer_constant else []
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_body, else_branch=else_body)],
        "if_model",
        [X, COND],
        [_out("y", _up(then_scales))],
        initializer=inits,
    )
    return _model(graph)


def loop_model(scales: Sequence[float] = (1, 1, 2, 2), trips: int = 1) -> onnx.ModelProto:
    """``y = Loop(trips){ Resize(x, body Constant) }`` scan-output concatenated over iterations."""
    body = helper.make_graph(
        [
            _scales_const("loop_scales", scales),
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
            _resize("loop_resize", "x", "loop_scales", "loop_y"),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), _out("loop_y", _up(scales))],
    )
    nodes = [
        helper.make_node(
            "Constant", [], ["trips"], name="trips", value=helper.make_tensor("trips", TensorProto.INT64, [], [trips])
        ),
        helper.make_node(
            "Constant", [], ["go"], name="go", value=helper.make_tensor("go", TensorProto.BOOL, [], [True])
        ),
        helper.make_node("Loop", ["trips", "go"], ["y"], name="steps", body=body),
    ]
    graph = helper.make_graph(nodes, "loop_model", [X], [_out("y", [trips, *_up(scales)])])
    return _model(graph)


def scan_model(scales: Sequence[float] = (1, 2, 2)) -> onnx.ModelProto:
    """``y = Scan over axis 0 of x { Resize(slice [3, 8, 8], body initializer scales) }``."""
    body = helper.make_graph(
        [_resize("scan_resize", "slice", "scan_scales", "slice_up")],
        "scan_body",
        [helper.make_tensor_value_info("slice", TensorProto.FLOAT, [3, 8, 8])],
        [_out("slice_up", _up(scales, (3, 8, 8)))],
        initializer=[numpy_helper.from_array(np.asarray(scales, np.float32), "scan_scales")],
    )
    graph = helper.make_graph(
        [helper.make_node("Scan", ["x"], ["y"], name="scan", body=body, num_scan_inputs=1)],
        "scan_model",
        [X],
        [_out("y", [1, *_up(scales, (3, 8, 8))])],
    )
    return _model(graph)


def nested_if_in_loop_model(scales: Sequence[float] = (1, 1, 2, 2)) -> onnx.ModelProto:
    """A Loop body holding an If whose branch resizes with a main-graph initializer (two levels)."""
    inner_then = helper.make_graph(
        [_resize("deep_resize", "x", "deep_scales", "deep_y")], "inner_then", [], [_out("deep_y", _up(scales))]
    )
    inner_else = helper.make_graph(
        [_resize("deep_resize_else", "x", "deep_scales", "deep_y2")], "inner_else", [], [_out("deep_y2", _up(scales))]
    )
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
            helper.make_node(
                "If", ["cond_in"], ["body_y"], name="inner", then_branch=inner_then, else_branch=inner_else
            ),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), _out("body_y", _up(scales))],
    )
    nodes = [
        helper.make_node(
            "Constant", [], ["trips"], name="trips", value=helper.make_tensor("trips", TensorProto.INT64, [], [1])
        ),
        helper.make_node(
            "Constant", [], ["go"], name="go", value=helper.make_tensor("go", TensorProto.BOOL, [], [True])
        ),
        helper.make_node("Loop", ["trips", "go"], ["y"], name="steps", body=body),
    ]
    graph = helper.make_graph(
        nodes,
        "deep_model",
        [X],
        [_out("y", [1, *_up(scales)])],
        initializer=[numpy_helper.from_array(np.asarray(scales, np.float32), "deep_scales")],
    )
    return _model(graph)


def function_model(scales: Sequence[float] = (1, 1, 2, 2), calls: int = 1) -> onnx.ModelProto:
    """``y = local.Up(x)`` (``calls`` times in a chain), ``Up`` a model-local function
    holding ``Resize(x, Constant)``."""
    fn = helper.make_function(
        "local",
        "Up",
        ["fx"],
        ["fy"],
        [_scales_const("fn_scales", scales), _resize("fn_resize", "fx", "fn_scales", "fy")],
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    nodes = []
    current = "x"
    for call in range(calls):
        out = "y" if call == calls - 1 else f"up{call}"
        nodes.append(helper.make_node("Up", [current], [out], name=f"up_call{call}", domain="local"))
        current = out
    graph = helper.make_graph(
        nodes, "fn_model", [X], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)]
    )
    return _model(graph, functions=[fn], extra_opsets=[helper.make_opsetid("local", 1)])


def upsample7_in_if_model() -> onnx.ModelProto:
    """Opset 7: ``main_up`` (Upsample-7, x2 in an attribute) in the main graph and ``body_up`` (the same)
    in both branches of If ``branch``: the opset bump Upsample-7 needs would strand the body's attribute."""
    body = helper.make_graph(
        [helper.make_node("Upsample", ["x"], ["b"], name="body_up", scales=[1.0, 1.0, 2.0, 2.0])],
        "b",
        [],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 3, 16, 16])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Upsample", ["x"], ["m"], name="main_up", scales=[1.0, 1.0, 2.0, 2.0]),
            helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=body, else_branch=body),
        ],
        "g",
        [X, COND],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 16, 16]),
            helper.make_tensor_value_info("m", TensorProto.FLOAT, [1, 3, 16, 16]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    model.ir_version = 8
    return model


def feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs for ``model``'s data and cond inputs (cond True)."""
    rng = np.random.default_rng(seed)
    out = {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)}
    if any(i.name == "cond" for i in model.graph.input):
        out["cond"] = np.array(True)
    return out
