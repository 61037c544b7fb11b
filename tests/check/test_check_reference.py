"""Every built-in check speaks about the user's own model, never about an intermediate.

A pass may make intermediate models before its own rewrite (onnxsim with ``simplify=True``,
inlined functions, a rebaked earlier layout). Two properties, for every check in the codebase:

* the reference of every comparison a pass makes is the model the user handed in, byte for
  byte (a spy on compare_models, the one comparison every check goes through);
* a mutation of an intermediate step that changes numbers is caught: the check fails, and the
  report names the step and its own difference from the user's model.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import onnx
import onnx.parser
import pytest
from hostile import nested
from onnx import helper, numpy_helper

from graphsurgeon_tools import make_dynamic_scale, swap_plugin
from graphsurgeon_tools.check import equivalence


def _weighted() -> onnx.ModelProto:
    """x * w -> Resize x2: a weight onnxsim keeps, and outputs that are not constant."""
    model = onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,8,8] x) => (float[1,3,16,16] y)
    <float[1,3,1,1] w = {0.5, 1.5, 2.5}, float[4] s = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}> {
      m = Mul (x, w)
      y = Resize <mode = "linear"> (m, roi, s)
    }""")
    for index, node in enumerate(model.graph.node):
        node.name = f"n{index}"
    return model


def _perturb(model: onnx.ModelProto) -> onnx.ModelProto:
    """In place: the first graph input reaches every main-graph consumer times 1.001."""
    x = model.graph.input[0].name
    model.graph.initializer.append(numpy_helper.from_array(np.array(1.001, np.float32), "perturb_k"))
    for node in model.graph.node:
        for index, name in enumerate(node.input):
            if name == x:
                node.input[index] = "perturb_x"
    model.graph.node.insert(0, helper.make_node("Mul", [x, "perturb_k"], ["perturb_x"], name="perturb"))
    return model


@pytest.fixture
def references(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The serialized reference of every compare_models call."""
    seen: list[bytes] = []
    real = equivalence.compare_models

    def spy(original: Any, rewritten: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(original if isinstance(original, bytes) else original.SerializeToString())
        return real(original, rewritten, *args, **kwargs)

    monkeypatch.setattr(equivalence, "compare_models", spy)
    return seen


#: (what the user hands in, the run). Each pass, and each intermediate step a pass can make.
RUNS: dict[str, tuple[Callable[[], onnx.ModelProto], Callable[[onnx.ModelProto], Any]]] = {
    "make-dynamic-scale": (_weighted, lambda m: make_dynamic_scale(m)),
    "make-dynamic-scale in place": (_weighted, lambda m: make_dynamic_scale(m, inplace=True)),
    "make-dynamic-scale simplify": (_weighted, lambda m: make_dynamic_scale(m, simplify=True)),
    "make-dynamic-scale inline": (nested.function_model, lambda m: make_dynamic_scale(m, inline_functions=True)),
    "make-dynamic-scale relayout": (
        lambda: make_dynamic_scale(_weighted(), check=False).model,
        lambda m: make_dynamic_scale(m, layout="sizes"),
    ),
    "swap-plugin": (_weighted, lambda m: swap_plugin(m)),
    "swap-plugin inline": (nested.function_model, lambda m: swap_plugin(m, inline_functions=True)),
    "swap-plugin reverse": (
        lambda: swap_plugin(_weighted(), check=False).model,
        lambda m: swap_plugin(m, reverse=True),
    ),
}


@pytest.mark.parametrize("case", sorted(RUNS))
def test_every_check_compares_with_the_users_model_byte_for_byte(references: list[bytes], case: str) -> None:
    build, run = RUNS[case]
    model = build()
    given = model.SerializeToString()
    references.clear()
    result = run(model)
    assert result.check is not None and result.check.passed is True, result.check
    assert references and all(ref == given for ref in references), case
    # the report names both models by role and sha256; each step says its own difference
    import hashlib

    models = result.check.to_dict()["models"]
    assert models["reference"] == {"role": "input", "sha256": hashlib.sha256(given).hexdigest()}
    assert models["candidate"]["role"] == "written"
    for step in result.check.steps:
        assert step["reference"] == models["reference"] and step["candidate"]["role"] == f"after {step['step']}"
        assert step["passed"] is True and step["max_abs_diff"] == 0.0


def test_simplify_reports_what_onnxsim_changed() -> None:
    model = onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,8,8] x) => (float[1,3,16,16] y)
    <float[1,3,1,1] w = {0.5, 1.5, 2.5}, float[0] roi = {}> {
      shape = Shape (x)
      two = Constant <value = int64[4] {1, 1, 2, 2}> ()
      sizes = Mul (shape, two)
      m = Mul (x, w)
      y = Resize <mode = "nearest"> (m, roi, , sizes)
    }""")
    result = make_dynamic_scale(model, simplify=True, from_sizes=True)
    (step,) = result.check.steps
    assert step["step"] == "onnxsim" and step["changes"]["nodes_folded"] == 3  # Shape, Constant, Mul -> a constant
    assert step["changes"]["nodes_before"] == 5 and step["changes"]["nodes_after"] == 2


def _perturbing(real: Callable[..., Any]) -> Callable[..., Any]:
    def perturbed(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        _perturb(out[0] if isinstance(out, tuple) else out)
        return out

    return perturbed


def test_a_mutated_onnxsim_step_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxsim

    monkeypatch.setattr(onnxsim, "simplify", _perturbing(onnxsim.simplify))
    result = make_dynamic_scale(_weighted(), simplify=True)
    assert result.failed
    (step,) = result.check.steps
    assert step["step"] == "onnxsim" and step["passed"] is False and step["max_abs_diff"] > 0
    assert "step onnxsim alone differs from your input model" in result.failure_message()


@pytest.mark.parametrize(
    "run",
    [lambda m: make_dynamic_scale(m, inline_functions=True), lambda m: swap_plugin(m, inline_functions=True)],
    ids=["make-dynamic-scale", "swap-plugin"],
)
def test_a_mutated_inlining_step_is_caught(monkeypatch: pytest.MonkeyPatch, run: Callable[..., Any]) -> None:
    from graphsurgeon_tools.core import graph as core_graph

    monkeypatch.setattr(core_graph, "inline_local_functions", _perturbing(core_graph.inline_local_functions))
    result = run(nested.function_model())
    assert result.failed and [s["passed"] for s in result.check.steps] == [False]
    assert "step inline-functions alone differs" in result.failure_message()


def test_a_mutated_relayout_step_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphsurgeon_tools.passes.make_dynamic_scale import relayout

    real = relayout.rebake

    def rebake(model: onnx.ModelProto, *args: Any) -> list[str]:
        relaid = real(model, *args)
        _perturb(model)
        return relaid

    monkeypatch.setattr(relayout, "rebake", rebake)
    dynamic = make_dynamic_scale(_weighted(), check=False).model
    result = make_dynamic_scale(dynamic, layout="sizes")
    assert result.failed and [s["step"] for s in result.check.steps] == ["relayout"]
    assert result.check.steps[0]["passed"] is False
