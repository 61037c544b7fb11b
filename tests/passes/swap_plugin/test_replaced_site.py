"""site_facts.replaced_site: what dataclasses.replace gives, for the sites make-dynamic-scale rewrote."""

from __future__ import annotations

import dataclasses

from onnx import TensorProto, helper

from graphsurgeon_tools.passes.swap_plugin.site_facts import replaced_site
from graphsurgeon_tools.resize.sites import ValueSource, find_resize_sites


def test_replaced_site_equals_dataclasses_replace_and_leaves_the_site_alone() -> None:
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "s"], ["y"], name="up", mode="nearest")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor("s", TensorProto.FLOAT, [4], [1, 1, 2, 2])],
    )
    (site,) = find_resize_sites(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    changes = dict(scales=None, scales_source=ValueSource.GRAPH_INPUT, scales_tensor="scales", notes=(), opset=13)
    made = replaced_site(site, **changes)
    assert made == dataclasses.replace(site, **changes) and type(made) is type(site)
    assert site.scales == (1.0, 1.0, 2.0, 2.0) and site.scales_tensor == "s"  # the original is unchanged
    assert made.scales_tensor == "scales" and made.node_name == "up"
