"""find_resize_sites(nested=True): sites in If/Loop/Scan bodies and model-local functions,
each with where it lives; the tracer follows a body's reads into the enclosing scopes."""

from __future__ import annotations

import pytest
from hostile import nested

from graphsurgeon_tools.core.graph import MAIN_GRAPH, scopes
from graphsurgeon_tools.inspection import inspect_model
from graphsurgeon_tools.resize import ValueSource, find_resize_sites
from graphsurgeon_tools.resize.sites import in_function


def _by_name(model, **kwargs):
    return {s.node_name: s for s in find_resize_sites(model, nested=True, **kwargs)}


def test_default_stays_main_graph_only() -> None:
    assert find_resize_sites(nested.if_model()) == []


def test_if_branches_own_constant_and_outer_initializer() -> None:
    sites = _by_name(nested.if_model(then_scales=(1, 1, 2, 2), else_scales=(1, 1, 3, 3)))
    then, other = sites["then_resize"], sites["else_resize"]
    assert then.scope == "If 'branch' then_branch" and other.scope == "If 'branch' else_branch"
    assert then.scales_source is ValueSource.CONSTANT and then.scales == (1, 1, 2, 2)
    assert then.scales_nodes == ("then_scales",)
    # the else branch reads a main-graph initializer: traced in the outer scope, no body nodes
    assert other.scales_source is ValueSource.INITIALIZER and other.scales == (1, 1, 3, 3) and other.scales_nodes == ()
    assert then.input_shape == (1, 3, 8, 8) and not then.in_main_graph
    assert then.to_dict()["scope"] == "If 'branch' then_branch"


def test_loop_scan_and_two_levels_deep() -> None:
    (loop,) = find_resize_sites(nested.loop_model(), nested=True)
    assert loop.scope == "Loop 'steps' body" and loop.scales_source is ValueSource.CONSTANT
    (scan,) = find_resize_sites(nested.scan_model(), nested=True)
    assert scan.scope == "Scan 'scan' body" and scan.scales == (1, 2, 2) and scan.input_shape == (3, 8, 8)
    deep = _by_name(nested.nested_if_in_loop_model())
    assert deep["deep_resize"].scope == "Loop 'steps' body / If 'inner' then_branch"
    assert deep["deep_resize"].scales_source is ValueSource.INITIALIZER


def test_function_sites_are_reported_in_their_function() -> None:
    (site,) = find_resize_sites(nested.function_model(), nested=True)
    assert site.scope == "function 'local.Up'" and in_function(site)
    assert site.scales_source is ValueSource.CONSTANT and site.scales == (1, 1, 2, 2)


def test_body_inputs_are_run_time_values() -> None:
    """A Scan body's slice input, or a Loop counter, is not a graph input the user feeds."""
    from graphsurgeon_tools.core.constants import ConstantTracer

    model = nested.loop_model()
    body = next(s for s in scopes(model) if s.parent == MAIN_GRAPH).graph
    tracer = ConstantTracer(model, graph=body, outer=ConstantTracer(model))
    trace = tracer.trace("i")
    assert trace.source is ValueSource.RUNTIME and "input of the body" in trace.reason
    assert tracer.trace("trips").source is ValueSource.CONSTANT  # an outer Constant, seen from the body


def test_nonsense_scales_in_a_body_are_refused_naming_the_scope() -> None:
    from graphsurgeon_tools.errors import InvalidScalesError

    model = nested.if_model(then_scales=(1, 1, 0, 2))
    (bad,) = [s for s in find_resize_sites(model, nested=True) if s.problems]
    assert bad.node_name == "then_resize"
    with pytest.raises(InvalidScalesError, match=r"then_resize.*inside If 'branch' then_branch"):
        inspect_model(model)


def test_inspect_lists_every_site_with_where_it_lives() -> None:
    report = inspect_model(nested.nested_if_in_loop_model())
    assert [s["scope"] for s in report.to_dict()["sites"]] == [
        "Loop 'steps' body / If 'inner' else_branch",
        "Loop 'steps' body / If 'inner' then_branch",
    ]


def test_scopes_walk_deep_nesting_without_recursion() -> None:
    """As deep as protobuf lets a model nest (its decoder stops near 100 message levels, 3 per
    If): scopes() walks it with an explicit stack."""
    from onnx import TensorProto, helper

    def leaf(level: int):
        return helper.make_graph(
            [helper.make_node("Identity", ["x"], [f"e{level}"])],
            f"e{level}",
            [],
            [helper.make_tensor_value_info(f"e{level}", TensorProto.FLOAT, None)],
        )

    graph = leaf(0)
    for level in range(1, 30):  # one deep branch per level, the other a leaf: 60 graphs
        node = helper.make_node(
            "If", ["c"], [f"o{level}"], name=f"if{level}", then_branch=graph, else_branch=leaf(level)
        )
        graph = helper.make_graph(
            [node], f"g{level}", [], [helper.make_tensor_value_info(f"o{level}", TensorProto.FLOAT, None)]
        )
    names = [s.name for s in scopes(helper.make_model(graph))]
    assert len(names) == 1 + 2 * 29 and names[0] == MAIN_GRAPH
    assert names[-1].count(" / ") == 28
