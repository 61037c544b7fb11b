"""Factor freedom: which sites can change their factor alone, and what pins the others."""

from __future__ import annotations

import golden
import numpy as np
import onnx
import onnx.parser
import pytest
from onnx import helper, numpy_helper

from graphsurgeon_tools.resize import find_resize_sites
from graphsurgeon_tools.resize.freedom import (
    factor_clash,
    not_free_message,
    runnable_factors,
    site_freedom,
)

_HEADER = '< ir_version: 8, opset_import: ["" : 13, "custom" : 1] >'


def _parse(body: str) -> onnx.ModelProto:
    model = onnx.parser.parse_model(_HEADER + body)
    onnx.checker.check_model(model, full_check=False)
    return model


def _neck(join: str) -> onnx.ModelProto:
    """coarse (1x4x8x8) -> Resize x2 -> ``join`` with a lateral at 16x16 -> Relu."""
    return _parse(f"""
    neck (float[1,4,8,8] coarse, float[1,4,16,16] lateral) => (float[1,{8 if join == "Concat" else 4},16,16] y)
    <float[4] scales = {{1.0, 1.0, 2.0, 2.0}}, float[0] roi = {{}}>
    {{
        up = Resize <mode = "nearest"> (coarse, roi, scales)
        joined = {join} {"<axis = 1>" if join == "Concat" else ""} (up, lateral)
        y = Relu (joined)
    }}
    """)


def test_a_resize_whose_output_meets_nothing_is_free() -> None:
    model = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 2.0))
    before = model.SerializeToString()
    (freedom,) = site_freedom(model).values()
    assert model.SerializeToString() == before  # read-only
    assert freedom.free is True and freedom.pinned_by is None
    assert freedom.probe == (1, 3, 24, 24)  # x2 grown one step: x3
    assert freedom.to_dict()["free"] is True and freedom.to_dict()["pinned_by"] is None


@pytest.mark.parametrize(
    "join, text",
    [
        ("Concat", "Concat neck_Concat joins [1,4,24,24] with [1,4,16,16]"),
        ("Add", "Add neck_Add cannot broadcast [1,4,24,24] with [1,4,16,16]"),
    ],
)
def test_an_upsample_meeting_a_lateral_connection_is_pinned_by_that_node(join: str, text: str) -> None:
    model = _neck(join)
    model.graph.node[1].name = f"neck_{join}"
    (freedom,) = site_freedom(model).values()
    assert freedom.free is False
    assert freedom.pinned_by.node == f"neck_{join}" and freedom.pinned_by.op_type == join
    assert freedom.pinned_by.shapes == ((1, 4, 24, 24), (1, 4, 16, 16))
    assert freedom.pinned_by.describe() == text
    assert freedom.to_dict()["pinned_by"] == text and freedom.to_dict()["pinned_node"] == f"neck_{join}"


def test_a_reshape_to_a_shape_baked_in_the_graph_pins_the_site() -> None:
    model = _parse("""
    baked (float[1,4,8,8] x) => (float[1,4,256] y)
    <float[4] scales = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}, int64[3] shape = {1, 4, 256}>
    {
        up = Resize <mode = "nearest"> (x, roi, scales)
        y = Reshape (up, shape)
    }
    """)
    (freedom,) = site_freedom(model).values()
    assert freedom.free is False and freedom.pinned_by.op_type == "Reshape"
    assert freedom.pinned_by.describe().endswith(
        "reshapes [1,4,24,24] (2304 elements) to the shape [1,4,256] baked in the graph"
    )


def test_a_reshape_whose_shape_is_computed_from_shape_follows_the_factor() -> None:
    # What the TorchScript exporter writes for x.flatten(2): Shape -> Slice -> Concat -> Reshape.
    model = _parse("""
    computed (float[1,4,8,8] x) => (float[1,4,?] y)
    <float[4] scales = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}, int64[1] zero = {0}, int64[1] two = {2},
     int64[1] minus_one = {-1}>
    {
        up = Resize <mode = "nearest"> (x, roi, scales)
        shape = Shape (up)
        head = Slice (shape, zero, two)
        target = Concat <axis = 0> (head, minus_one)
        y = Reshape (up, target)
    }
    """)
    (freedom,) = site_freedom(model).values()
    assert freedom.free is True


def test_a_site_sized_from_the_lateral_is_pinned_where_it_meets_it() -> None:
    # interpolate(x, size=lateral.shape[2:]): sizes computed at run time from the lateral's Shape.
    model = _parse("""
    sized (float[1,4,8,8] x, float[1,4,16,16] lateral) => (float[1,8,16,16] y)
    <int64[1] two = {2}, int64[1] four = {4}, int64[2] nc = {1, 4}>
    {
        shape = Shape (lateral)
        hw = Slice (shape, two, four)
        sizes = Concat <axis = 0> (nc, hw)
        up = Resize <mode = "nearest"> (x, , , sizes)
        y = Concat <axis = 1> (up, lateral)
    }
    """)
    (site,) = find_resize_sites(model)
    freedom = site_freedom(model)[site.node_name or site.output_name]
    assert freedom.free is False and freedom.pinned_by.op_type == "Concat"
    assert freedom.pinned_by.shapes == ((1, 4, 24, 24), (1, 4, 16, 16))  # x2 -> x3


def test_fpn_sites_are_each_pinned_by_their_own_add() -> None:
    model = golden.fpn_model(13)
    freedom = site_freedom(model)
    assert [f.free for f in freedom.values()] == [False, False, False]
    assert [f.pinned_by.node for f in freedom.values()] == ["add_0", "add_1", "add_2"]


def test_symbolic_input_dims_are_probed_at_a_concrete_size() -> None:
    model = golden.fpn_model(13, symbolic=True)  # batch "N"
    assert all(f.free is False for f in site_freedom(model).values())
    model = golden.resize_model(13, shape=(None, 3, None, None))
    (freedom,) = site_freedom(model).values()
    assert freedom.free is True and freedom.probe == (1, 3, 384, 384)  # 128 x3
    (freedom,) = site_freedom(model, input_shapes={"x": (1, 3, 10, 12)}).values()
    assert freedom.probe == (1, 3, 30, 36)


def test_resize_18_with_axes_grows_only_its_axes() -> None:
    model = golden.resize_model(18, scales=(2.0, 3.0), axes=(2, 3))
    (freedom,) = site_freedom(model).values()
    assert freedom.free is True and freedom.probe == (1, 3, 24, 32)


def test_a_custom_op_downstream_leaves_the_site_undecided_with_the_reason() -> None:
    model = _parse("""
    opaque (float[1,4,8,8] x, float[1,4,16,16] lateral) => (float[1,4,16,16] y)
    <float[4] scales = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}>
    {
        up = Resize <mode = "nearest"> (x, roi, scales)
        mystery = custom.Mystery (up)
        y = Add (mystery, lateral)
    }
    """)
    (freedom,) = site_freedom(model).values()
    assert freedom.free is None
    assert "shapes unknown after Mystery" in freedom.reason and freedom.describe().startswith("not decided:")


def test_scales_fed_as_graph_inputs_are_decided_when_their_values_are_given() -> None:
    model = golden.resize_model(13, source="graph_input")
    (freedom,) = site_freedom(model).values()
    assert freedom.free is None and "unknown" in freedom.reason
    scales_input = next(i.name for i in model.graph.input if i.name != "x")
    (freedom,) = site_freedom(model, input_values={scales_input: np.array([1, 1, 2, 2], np.float32)}).values()
    assert freedom.free is True


def test_the_budget_bounds_the_work_and_says_so() -> None:
    model = golden.fpn_model(13)
    freedom = site_freedom(model, max_visits=0)
    assert all(f.free is None and "budget" in f.reason for f in freedom.values())


def test_many_sites_cost_one_base_pass_and_one_cone_each() -> None:
    # 200 independent branches x -> Resize -> Add(lateral): each site's cone is one Add.
    branches = "\n".join(
        f'up{i} = Resize <mode = "nearest"> (x, roi, scales)\n y{i} = Add (up{i}, lateral)' for i in range(200)
    )
    outputs = ", ".join(f"float[1,2,8,8] y{i}" for i in range(200))
    model = _parse(f"""
    wide (float[1,2,4,4] x, float[1,2,8,8] lateral) => ({outputs})
    <float[4] scales = {{1.0, 1.0, 2.0, 2.0}}, float[0] roi = {{}}>
    {{
        {branches}
    }}
    """)
    freedom = site_freedom(model, max_visits=400)  # two visits per site: its Resize, its Add
    assert len(freedom) == 200 and all(f.free is False for f in freedom.values())


def test_factor_clash_names_the_sweep_point_a_pinned_model_cannot_run() -> None:
    model = _neck("Concat")
    assert factor_clash(model, 2.0) is None  # its own factor
    clash = factor_clash(model, 3.0)
    assert not_free_message(
        3.0, clash
    ) == "not free at x3: Concat neck_concat joins [1,4,24,24] with [1,4,16,16]".replace("neck_concat", clash.node)
    keep, refused = runnable_factors(model, [2.0, 3.0, 4.0])
    assert keep == [2.0] and sorted(refused) == [3.0, 4.0]
    assert refused[4.0].startswith("not free at x4: Concat ")


def test_factor_clash_takes_per_site_factors_and_scales_vectors() -> None:
    model = golden.fpn_model(13, factors=(2.0, 4.0))
    sites = find_resize_sites(model)
    keys = [s.node_name for s in sites]
    assert factor_clash(model, {keys[0]: 2.0, keys[1]: 4.0}) is None
    assert factor_clash(model, {keys[0]: [1.0, 1.0, 2.0, 2.0]}) is None
    clash = factor_clash(model, {keys[1]: 2.0})
    assert clash is not None and clash.node == "add_1"


def test_a_model_whose_scales_are_inputs_is_checked_at_the_fed_factor() -> None:
    # A make-dynamic-scale output: validate asks before it feeds x3 to every scales input.
    model = golden.resize_model(13, source="graph_input")
    assert factor_clash(model, 3.0) is None
    model = _neck("Add")
    model.graph.initializer.pop(0)  # scales -> a graph input, as make-dynamic-scale leaves it
    model.graph.input.append(onnx.helper.make_tensor_value_info("scales", onnx.TensorProto.FLOAT, [4]))
    assert factor_clash(model, 2.0) is None
    assert factor_clash(model, 3.0).op_type == "Add"


def test_inspect_reports_each_site_free_or_pinned() -> None:
    from graphsurgeon_tools.inspection import inspect_model

    model = _neck("Concat")
    model.graph.node[0].name = "up"
    model.graph.node[1].name = "neck_concat"
    (site,) = inspect_model(model).to_dict()["sites"]
    assert site["free"] is False and site["pinned_node"] == "neck_concat"
    assert site["pinned_by"] == "Concat neck_concat joins [1,4,24,24] with [1,4,16,16]"
    assert site["freedom_probe"] == [1, 4, 24, 24]
    (site,) = inspect_model(golden.resize_model(13)).to_dict()["sites"]
    assert site["free"] is True and site["pinned_by"] is None
    (site,) = inspect_model(model, freedom=False).to_dict()["sites"]
    assert "free" not in site


def test_a_site_inside_a_body_is_left_undecided_with_where_it_lives() -> None:
    import dataclasses

    (site,) = find_resize_sites(golden.resize_model(13))
    nested = dataclasses.replace(site, scope="If 'branch' then_branch")
    (freedom,) = site_freedom(golden.resize_model(13), sites=[nested]).values()
    assert freedom.free is None and "inside If 'branch' then_branch" in freedom.reason


def test_a_node_onnx_refuses_does_not_crash_the_flow() -> None:
    # A fuzzed model (the checker refuses it later, in the passes): a Constant turned into an input-less Relu.
    model = golden.resize_model(13, source="constant")
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output[0].startswith("scales"):
            node.op_type = "Relu"
    (freedom,) = site_freedom(model).values()
    assert freedom.free is None


def test_shape_flow_follows_resize_scales_exactly_as_onnx_inference_does():
    """The quick Resize rule (no call into ONNX) gives ONNX's floor(float32(dim) * scale) or defers."""
    from graphsurgeon_tools.resize.shape_rules import Tensor, quick_resize

    rng = np.random.default_rng(0)
    schema = onnx.defs.get_schema("Resize", 13, "")
    node = helper.make_node("Resize", ["x", "", "s"], ["y"])
    decided = 0
    for index in range(300):
        shape = tuple(int(d) for d in rng.integers(1, 3000, 4))
        scales = rng.uniform(0.01, 9, 4) if index % 2 else rng.choice([0.5, 1, 2, 1 / 3, 2 / 3, 0.7, 1.5], 4)
        scales = scales.astype(np.float32)
        quick = quick_resize(node, [Tensor(1, shape), Tensor(), Tensor(1, (4,), scales)])
        if quick is None:  # a product float32 may round up: ONNX decides those
            continue
        decided += 1
        inferred = onnx.shape_inference.infer_node_outputs(
            schema,
            node,
            {"x": helper.make_tensor_type_proto(1, shape), "s": helper.make_tensor_type_proto(1, (4,))},
            {"s": numpy_helper.from_array(scales, "s")},
        )
        assert quick.shape == tuple(d.dim_value for d in inferred["y"].tensor_type.shape.dim), (shape, scales)
    assert decided > 250


def _chain(sites: int, tail: str = "", outputs: str = "float[1,3,8,8] y") -> onnx.ModelProto:
    """x -> ``sites`` Resize x1 sites in a chain (r0 .. r{n-1}) -> ``tail`` (which must make ``y``)."""
    steps = "\n".join(
        f'r{i} = Resize <mode = "nearest"> ({"x" if i == 0 else f"r{i - 1}"}, roi, s)' for i in range(sites)
    )
    return _parse(f"""
    chain (float[1,3,8,8] x, float[1,3,8,8] lateral) => ({outputs})
    <float[4] s = {{1.0, 1.0, 1.0, 1.0}}, float[0] roi = {{}}>
    {{
        {steps}
        {tail or f"y = Identity (r{sites - 1})"}
    }}
    """)


def test_a_chain_of_sites_spends_the_budget_one_walk_after_another() -> None:
    # Site k's walk (last sites first) visits every node from it down, the final Identity included:
    # 2 + 3 + ... + 14 = 104 visits decide the last 13 sites; the 14th runs out on its way, and the
    # sites above it are not walked. 2 + ... + 31 = 495 visits decide all 30.
    model = _chain(30)
    for budget in (104, 110):
        freedom = list(site_freedom(model, max_visits=budget).values())
        assert [f.free for f in freedom[-13:]] == [True] * 13
        assert all(f.free is None and "budget spent (max_visits=" in f.reason for f in freedom[:-13])
        assert all(f.probe == (1, 3, 16, 16) for f in freedom)
    assert all(f.free for f in site_freedom(model, max_visits=495).values())
    assert [f.free for f in site_freedom(model, max_visits=494).values()] == [None] + [True] * 29


def test_every_site_of_a_chain_is_pinned_by_the_join_below_it() -> None:
    model = _chain(10, "y = Concat <axis = 1> (r9, lateral)", "float[1,6,8,8] y")
    for freedom in site_freedom(model).values():
        assert freedom.free is False
        assert freedom.pinned_by.describe().endswith("joins [1,3,16,16] with [1,3,8,8]")


def test_a_skip_connection_is_followed_from_the_site_that_feeds_it() -> None:
    # r0 feeds the chain and the final Add: grown, it reaches both sides of the Add alike (free);
    # any later site grows one side only (pinned). A walk must not take r0's rest from theirs.
    model = _chain(10, "y = Add (r9, r0)")
    freedom = site_freedom(model)
    assert freedom["r0"].free is True
    for key in [f"r{i}" for i in range(1, 10)]:
        assert freedom[key].free is False
        assert freedom[key].pinned_by.describe().endswith("cannot broadcast [1,3,16,16] with [1,3,8,8]")


def _reordered(model: onnx.ModelProto, order: list[int]) -> onnx.ModelProto:
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes[i] for i in order)
    return model


def test_a_join_above_the_site_in_node_order_still_pins_it() -> None:
    # Not topologically sorted: the Concat reading the site's output comes first. A walk reads the
    # readers of what it changes from the nodes below its start only where every reader comes after
    # the producer: here it must read them all, and the Concat pins the site as in the sorted graph.
    model = _reordered(_neck("Concat"), [1, 0, 2])
    (freedom,) = site_freedom(model, sites=find_resize_sites(model)).values()
    assert freedom.free is False
    assert freedom.pinned_by.describe() == "Concat joined joins [1,4,24,24] with [1,4,16,16]"


@pytest.mark.parametrize("order", [[0, 1, 2], [1, 0, 2], [0, 2, 1], [2, 1, 0]])
@pytest.mark.parametrize("twice", [False, True])
def test_the_readers_a_walk_reads_are_every_reader_of_what_it_can_change(order: list[int], twice: bool) -> None:
    # For every start: each tensor the nodes from the start on write has the readers core.graph.consumers
    # finds in the whole graph, in node order (a name written twice, or a graph out of order, included).
    from graphsurgeon_tools.core.graph import consumers
    from graphsurgeon_tools.resize.shape_flow import ShapeFlow

    model = _reordered(_neck("Concat"), order)
    if twice:
        model.graph.node[2].output[0] = model.graph.node[0].output[0]
    everywhere = consumers(model.graph)
    flow = ShapeFlow(model)
    for start in reversed(range(len(model.graph.node))):  # upwards, as site_freedom asks
        readers = flow._consumers_from(start)
        for node in model.graph.node[start:]:
            for name in node.output:
                assert readers.get(name, []) == everywhere.get(name, []), (order, twice, start, name)
