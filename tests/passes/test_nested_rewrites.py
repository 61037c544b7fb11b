"""make-dynamic-scale and swap-plugin on sites outside the main graph: rewritten (bodies) or
skipped with the reason (functions without inline_functions=True, swap-plugin in bodies),
never silently left baked."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hostile import nested

from graphsurgeon_tools import make_dynamic_scale, swap_plugin
from graphsurgeon_tools.resize import find_resize_sites

BUILDERS = {
    "if_outer_initializer": nested.if_model,
    "if_own_constants": lambda: nested.if_model(
        outer_constant=False, then_scales=(1, 1, 3, 3), else_scales=(1, 1, 3, 3)
    ),
    "loop": nested.loop_model,
    "scan": nested.scan_model,
    "if_in_loop": nested.nested_if_in_loop_model,
}


def _run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize("layout", [{}, {"factor": True}, {"shared": True}], ids=["full", "factor", "shared"])
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_body_sites_are_rewritten_checked_and_follow_the_new_input(name: str, layout: dict) -> None:
    model = BUILDERS[name]()
    result = make_dynamic_scale(model, **layout)
    assert result.skipped == [] and len(result.rewritten) == len(find_resize_sites(model, nested=True))
    assert result.check is not None and result.check.passed  # the built-in ORT check ran
    rewritten = result.model
    onnx.checker.check_model(rewritten, full_check=True)
    assert not any(s.has_constant_scales for s in find_resize_sites(rewritten, nested=True))
    feeds = nested.feeds(model)
    expected = _run(model, feeds)
    at_original = {**feeds, **result.feeds()}
    np.testing.assert_array_equal(_run(rewritten, at_original)[0], expected[0])
    # another factor: the body follows the main-graph input it reads from the outer scope
    bigger = {k: np.where(v > 1, v + 1, v).astype(np.float32) for k, v in result.feeds().items()}
    out = _run(rewritten, {**feeds, **bigger})[0]
    assert out.shape[-1] > expected[0].shape[-1]
    # rerunning changes nothing (idempotent)
    assert not make_dynamic_scale(rewritten, check=False).changed


def test_a_body_constant_and_an_outer_constant_are_both_removed() -> None:
    result = make_dynamic_scale(nested.if_model(), check=False)
    assert set(result.removed_nodes) == {"then_scales", "else_scales"}
    assert not result.model.graph.initializer


def test_function_sites_are_skipped_with_the_reason_unless_inlined() -> None:
    model = nested.function_model(calls=2)
    result = make_dynamic_scale(model)
    assert not result.changed and result.model is model
    (skip,) = result.skipped
    assert skip.node == "fn_resize" and "function 'local.Up'" in skip.reason and "inline_functions=True" in skip.reason
    inlined = make_dynamic_scale(model, inline_functions=True)
    assert len(inlined.rewritten) == 2 and inlined.skipped == [] and inlined.check.passed
    assert not inlined.model.functions
    np.testing.assert_array_equal(
        _run(inlined.model, {**nested.feeds(model), **inlined.feeds()})[0], _run(model, nested.feeds(model))[0]
    )


def test_nodes_selects_a_body_site_by_name() -> None:
    result = make_dynamic_scale(nested.if_model(), nodes=["then_*"])
    assert [r.node for r in result.rewritten] == ["then_resize"] and result.skipped == []


def test_upsample7_in_a_body_is_skipped_and_blocks_the_opset_bump() -> None:
    model = nested.upsample7_in_if_model()
    result = make_dynamic_scale(model)
    assert not result.changed
    reasons = {s.node: s.reason for s in result.skipped}
    assert "Upsample-7 inside If 'branch'" in reasons["main_up"]  # the bump would strand the body's attribute
    assert "keeps its scales in an attribute" in reasons["body_up"]


@pytest.mark.parametrize("builder", [nested.if_model, nested.loop_model, nested.function_model])
def test_swap_plugin_reports_every_site_it_leaves(builder) -> None:
    model = builder()
    result = swap_plugin(model)
    assert not result.changed
    assert len(result.skipped) == len(find_resize_sites(model, nested=True))
    assert all("main-graph sites only" in s.reason for s in result.skipped)


def test_swap_plugin_inlines_functions_when_asked() -> None:
    model = nested.function_model(calls=2)
    result = swap_plugin(model, inline_functions=True)
    assert [r.node for r in result.rewritten] == ["fn_resize__1", "fn_resize__2"] and result.skipped == []
    assert len(model.functions) == 1  # the caller's proto is untouched


def test_the_built_in_check_runs_every_if_branch(monkeypatch) -> None:
    """Seed 0 gives `cond` one value; the check reruns with a seed giving the other, and a
    difference found there fails the result."""
    from graphsurgeon_tools.check import equivalence
    from graphsurgeon_tools.check.feeds import concrete_input_shapes, random_feeds
    from graphsurgeon_tools.passes.make_dynamic_scale.branches import branch_seeds

    model = nested.if_model()
    shapes = concrete_input_shapes(model)
    (seed,) = branch_seeds(model, ["If 'branch' then_branch"])
    assert bool(random_feeds(model, shapes, seed)["cond"]) != bool(random_feeds(model, shapes, 0)["cond"])
    assert branch_seeds(model, ["main graph", "Loop 'steps' body"]) == []  # no If: nothing to steer

    result = make_dynamic_scale(model)
    assert result.check.passed and any("every branch ran" in n for n in result.notes)

    real, seen = equivalence.compare_models, []

    def fails_on_other_seeds(*args, seed=0, **kwargs):
        seen.append(seed)
        check = real(*args, seed=seed, **kwargs)
        if seed:
            check.passed = False
        return check

    monkeypatch.setattr(equivalence, "compare_models", fails_on_other_seeds)
    assert make_dynamic_scale(model).failed and seen == [0, seed]


def test_a_generic_spec_reports_matching_nodes_inside_bodies() -> None:
    from onnx import TensorProto, helper

    from graphsurgeon_tools.plugins import parse_spec

    spec = parse_spec('[plugin]\nop_type = "P"\n[match]\nop_type = "Relu"\n', source="relu.toml")
    body = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["b"], name="body_relu")],
        "b",
        [],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 3, 8, 8])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["m"], name="main_relu"),
            helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=body, else_branch=body),
        ],
        "g",
        [nested.X, nested.COND],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8]),
            helper.make_tensor_value_info("m", TensorProto.FLOAT, [1, 3, 8, 8]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    result = swap_plugin(model, spec=spec)
    assert [r.node for r in result.rewritten] == ["main_relu"]
    assert [(s.node, s.reason) for s in result.skipped] == [
        ("body_relu", "inside If 'branch' else_branch: swap-plugin swaps main-graph nodes only"),
        ("body_relu", "inside If 'branch' then_branch: swap-plugin swaps main-graph nodes only"),
    ]


def test_main_graph_sites_outside_a_specs_names_are_not_reported_as_nested() -> None:
    """A spec's [match] name patterns leave other main-graph sites alone (not "nested" skips)."""
    import dataclasses

    from hostile import models

    from graphsurgeon_tools.plugins import builtin_spec

    spec = builtin_spec("DynamicTRTResize")
    spec = dataclasses.replace(spec, match=dataclasses.replace(spec.match, name_patterns=("nothing*",)))
    result = swap_plugin(models.resize_model(), spec=spec)
    assert not result.changed and result.skipped == []
