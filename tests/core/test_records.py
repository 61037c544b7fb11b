"""core.records: what the class itself (``cls(**values)``, ``dataclasses.replace``) gives, faster."""

from __future__ import annotations

import dataclasses

import pytest
from onnx import TensorProto, helper

from graphsurgeon_tools.core import records
from graphsurgeon_tools.resize.sites import ValueSource, find_resize_sites


def _site():
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "s"], ["y"], name="up", mode="nearest")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor("s", TensorProto.FLOAT, [4], [1, 1, 2, 2])],
    )
    (site,) = find_resize_sites(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    return site


def test_replace_equals_dataclasses_replace_and_leaves_the_site_alone() -> None:
    site = _site()
    changes = dict(scales=None, scales_source=ValueSource.GRAPH_INPUT, scales_tensor="scales", notes=(), opset=13)
    made = records.replace(site, **changes)
    assert made == dataclasses.replace(site, **changes) and type(made) is type(site)
    assert site.scales == (1.0, 1.0, 2.0, 2.0) and site.scales_tensor == "s"  # the original is unchanged
    assert made.scales_tensor == "scales" and made.node_name == "up"
    with pytest.raises(TypeError):  # an unknown field: dataclasses.replace's own error
        records.replace(site, no_such_field=1)


@dataclasses.dataclass(frozen=True)
class _Plain:
    a: int
    b: tuple = ()


@dataclasses.dataclass(frozen=True)
class _Checked:
    a: int

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("negative")


def test_build_equals_the_class_and_goes_through_it_where_it_must() -> None:
    site = _site()
    assert records.build(type(site), dict(vars(site))) == site
    made = records.build(_Plain, {"a": 1, "b": (2,)})
    assert made == _Plain(1, (2,)) and list(vars(made)) == ["a", "b"]
    assert records.build(_Plain, {"b": (2,), "a": 1}) == _Plain(1, (2,))  # another order: through the class
    assert records.build(_Plain, {"a": 1}) == _Plain(1)  # a default left out: through the class
    with pytest.raises(TypeError):
        records.build(_Plain, {"a": 1, "c": 2})
    with pytest.raises(ValueError, match="negative"):  # __post_init__ runs: never filled directly
        records.build(_Checked, {"a": -1})
    with pytest.raises(ValueError, match="negative"):
        records.replace(_Checked(1), a=-1)
