"""Fuzzing sites outside the main graph: test_fuzz's random Resize/Upsample graphs wrapped in
an If (both branches), a Loop body (one trip) or a model-local function.

Law (``make_dynamic_scale``, bodies and functions): either it refuses with an
OnnxToolError naming why, or - at the original factors - the rewritten model gives ONNX
Runtime outputs identical (bit for bit) to the original's, for every branch; every site
it did not rewrite is in ``result.skipped`` with a reason (nothing stays baked silently);
functions are skipped unless ``inline_functions=True``; running it again changes nothing.

Bounded and reproducible like tests/fuzz/test_fuzz.py (``derandomize=True``, fixed counts).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from test_fuzz import _SETTINGS, _count, _doc_feeds, _feeds, _run_ort, models_with_feeds

from graphsurgeon_tools.errors import OnnxToolError

CONTAINERS = ("if", "loop", "function")
REFUSALS: Counter = Counter()  # why the pass refused (shown when the law fails)


def _renamed(graph: onnx.GraphProto, suffix: str, keep: set[str]) -> list[onnx.NodeProto]:
    """The graph's nodes with every tensor they make (and every node name) suffixed: a second
    branch may not redefine the first's names."""
    made = {o for n in graph.node for o in n.output if o}
    nodes = []
    for node in graph.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.name = node.name + suffix
        copy.input[:] = [f"{i}{suffix}" if i in made and i not in keep else i for i in node.input]
        copy.output[:] = [f"{o}{suffix}" if o else o for o in node.output]
        nodes.append(copy)
    return nodes


def _wrap(model: onnx.ModelProto, container: str) -> onnx.ModelProto:
    graph = model.graph
    out = graph.output[0]
    opset = next(o.version for o in model.opset_import if o.domain == "")
    untyped = helper.make_tensor_value_info
    if container == "if":
        then_body = helper.make_graph(
            _renamed(graph, "_t", set()), "then", [], [untyped(out.name + "_t", TensorProto.FLOAT, None)]
        )
        else_body = helper.make_graph(
            _renamed(graph, "_e", set()), "else", [], [untyped(out.name + "_e", TensorProto.FLOAT, None)]
        )
        nodes = [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_body, else_branch=else_body)]
        inputs = list(graph.input) + [untyped("cond", TensorProto.BOOL, [])]
        inits, functions = list(graph.initializer), []
    elif container == "loop":
        body = helper.make_graph(
            [*_renamed(graph, "_l", set()), helper.make_node("Identity", ["c_in"], ["c_out"], name="keep")],
            "body",
            [untyped("i", TensorProto.INT64, []), untyped("c_in", TensorProto.BOOL, [])],
            [untyped("c_out", TensorProto.BOOL, []), untyped(out.name + "_l", TensorProto.FLOAT, None)],
        )
        nodes = [
            helper.make_node(
                "Constant", [], ["trips"], name="trips", value=numpy_helper.from_array(np.asarray(1, np.int64), "trips")
            ),
            helper.make_node("Constant", [], ["go"], name="go", value=numpy_helper.from_array(np.asarray(True), "go")),
            helper.make_node("Loop", ["trips", "go"], ["y"], name="steps", body=body),
        ]
        inputs, inits, functions = list(graph.input), list(graph.initializer), []
    else:  # a model-local function: initializers become Constant nodes inside it
        consts = [helper.make_node("Constant", [], [t.name], name=f"c_{t.name}", value=t) for t in graph.initializer]
        fn_inputs = [i.name for i in graph.input]
        fn = helper.make_function(
            "local",
            "Body",
            fn_inputs,
            [out.name],
            consts + list(graph.node),
            opset_imports=[helper.make_opsetid("", opset)],
        )
        nodes = [helper.make_node("Body", fn_inputs, ["y"], name="call", domain="local")]
        inputs, inits, functions = list(graph.input), [], [fn]
    rank = len(out.type.tensor_type.shape.dim) + (1 if container == "loop" else 0)
    wrapped = helper.make_graph(nodes, "wrapped", inputs, [untyped("y", TensorProto.FLOAT, [None] * rank)], inits)
    imports = [helper.make_opsetid("", max(opset, 11))]  # If/Loop as ORT runs them with bodies
    if functions:
        imports.append(helper.make_opsetid("local", 1))
    result = helper.make_model(wrapped, opset_imports=imports, functions=functions, producer_name="fuzz")
    result.ir_version = 8
    result.doc_string = model.doc_string
    return result


@st.composite
def nested_models(draw: Any) -> tuple[onnx.ModelProto, str]:
    model = draw(models_with_feeds())
    opset = next(o.version for o in model.opset_import if o.domain == "")
    assume(opset >= 11)  # wrapping needs If/Loop at opset 11+; lower ops would change meaning
    container = draw(st.sampled_from(CONTAINERS))
    return _wrap(model, container), container


def _outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[list[np.ndarray]]:
    """Outputs per branch (cond True and False for If models)."""
    has_cond = any(i.name == "cond" for i in model.graph.input)
    return [_run_ort(model, {**feeds, "cond": np.asarray(flag)}) for flag in ((True, False) if has_cond else (None,))]


def test_make_dynamic_scale_on_bodies_and_functions(request: pytest.FixtureRequest) -> None:
    from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
    from graphsurgeon_tools.resize import find_resize_sites

    tally: Counter = Counter()

    @settings(max_examples=120, **_SETTINGS)
    @given(case=nested_models(), factor=st.booleans(), shared=st.booleans(), inline=st.booleans())
    def law(case: tuple[onnx.ModelProto, str], factor: bool, shared: bool, inline: bool) -> None:
        model, container = case
        given_scales = {k: np.asarray(v, np.float32) for k, v in _doc_feeds(model).items()}
        feeds = {**_feeds(model), **given_scales}
        try:
            onnx.checker.check_model(model, full_check=True)
            expected = _outputs(model, feeds)
        except Exception:  # noqa: BLE001 - the generator made something onnx/ORT cannot run: not an example
            assume(False)
        note(onnx.printer.to_text(model))
        tally["examples"] += 1
        tally[container] += 1
        sites = find_resize_sites(model, nested=True)
        before = model.SerializeToString()
        try:
            result = make_dynamic_scale(model, factor=factor, shared=shared, inline_functions=inline, check=False)
        except OnnxToolError as exc:
            assert str(exc).strip() and "\n" not in str(exc).strip()
            tally["refused"] += 1
            REFUSALS[type(exc).__name__ + ": " + str(exc)[:90]] += 1
            return
        assert model.SerializeToString() == before, "the pass modified its input"
        skipped = {s.node for s in result.skipped}
        rewritten = {s.node for s in result.rewritten}
        if container == "function" and not inline:
            assert not result.changed and {s.node_name for s in sites} <= skipped, "a function site went unreported"
            assert all("inline_functions=True" in s.reason for s in result.skipped)
        constant = {s.node_name for s in sites if s.has_constant_scales}
        if container != "function":
            assert constant <= rewritten | skipped, "a constant site was neither rewritten nor skipped"
        if not result.changed:
            tally["unchanged"] += 1
            return
        tally["rewritten"] += 1
        onnx.checker.check_model(result.model, full_check=True)
        fed = {**feeds, **{s.new_input: np.asarray(s.fed_value, np.float32) for s in result.rewritten}}
        for got, want in zip(_outputs(result.model, fed), expected):
            assert len(got) == len(want)
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)  # fed the original factor: identical, not close
        left = [s for s in find_resize_sites(result.model, nested=True) if s.has_constant_scales]
        assert {s.node_name for s in left} <= skipped, f"baked and unreported: {[s.node_name for s in left]}"
        again = make_dynamic_scale(result.model, factor=factor, shared=shared, check=False)
        assert not again.changed, "make_dynamic_scale is not idempotent"

    law()
    _count(
        request, "make_dynamic_scale_nested", tally["examples"], **{k: v for k, v in tally.items() if k != "examples"}
    )
    assert tally["examples"] >= 30 and tally["rewritten"] >= 15, tally
    assert all(tally[c] for c in CONTAINERS), tally
    json.dumps(dict(tally))


def test_swap_plugin_accounts_for_every_nested_site(request: pytest.FixtureRequest) -> None:
    """swap-plugin swaps main-graph sites only: on a wrapped model it changes nothing and lists
    every site it left (or refuses in one line); with inline_functions=True a function's sites
    are swapped like main-graph ones."""
    from graphsurgeon_tools.passes.swap_plugin import swap_plugin
    from graphsurgeon_tools.resize import find_resize_sites

    tally: Counter = Counter()

    @settings(max_examples=60, **_SETTINGS)
    @given(case=nested_models(), inline=st.booleans())
    def law(case: tuple[onnx.ModelProto, str], inline: bool) -> None:
        model, container = case
        try:
            onnx.checker.check_model(model, full_check=True)
        except onnx.checker.ValidationError:
            assume(False)
        tally["examples"] += 1
        sites = {s.node_name for s in find_resize_sites(model, nested=True)}
        assume(len(sites) == len(find_resize_sites(model, nested=True)))  # distinct names to compare
        try:
            result = swap_plugin(model, inline_functions=inline)
        except OnnxToolError as exc:
            assert str(exc).strip() and "\n" not in str(exc).strip()
            tally["refused"] += 1
            return
        skipped = {s.node for s in result.skipped}
        if container == "function" and inline:
            tally["inlined"] += 1
            # one call of the function: as many sites after inlining as inside it (names change)
            assert len(result.rewritten) + len(result.skipped) == len(sites), "inlined sites went unreported"
            return
        assert not result.changed and sites <= skipped, f"unreported: {sites - skipped}"
        tally["skipped_all"] += 1

    law()
    _count(request, "swap_plugin_nested", tally["examples"], **{k: v for k, v in tally.items() if k != "examples"})
    assert tally["examples"] >= 20 and tally["skipped_all"] >= 10, tally
