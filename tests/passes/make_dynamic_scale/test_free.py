"""make-dynamic-scale and factor freedom: the report says which sites are free,
``only_free=True`` rewrites only those, and a sizes-driven skip says when simplify=True would help."""

from __future__ import annotations

import golden

from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale


def test_each_rewritten_site_says_whether_it_is_free() -> None:
    report = make_dynamic_scale(golden.free_and_pinned_model()).to_dict()
    by_node = {site["node"]: site for site in report["rewritten"]}
    assert by_node["free_y"]["free"] is True and by_node["free_y"]["pinned_by"] is None
    assert by_node["up"]["free"] is False
    assert by_node["up"]["pinned_by"] == "Concat pinned_y joins [1,4,24,24] with [1,4,16,16]"


def test_only_free_rewrites_the_free_sites_and_says_why_not_the_others() -> None:
    result = make_dynamic_scale(golden.free_and_pinned_model(), only_free=True)
    assert [site.node for site in result.rewritten] == ["free_y"]
    (skip,) = result.skipped
    assert skip.node == "up"
    assert skip.reason == ("not free (only_free=True): Concat pinned_y joins [1,4,24,24] with [1,4,16,16]")
    assert result.check.passed


def test_only_free_with_every_site_pinned_changes_nothing() -> None:
    model = golden.fpn_model(13, factors=(2.0, 4.0))
    result = make_dynamic_scale(model, only_free=True)
    assert not result.rewritten and not result.new_inputs
    assert [s.reason.split(":")[0] for s in result.skipped] == ["not free (only_free=True)"] * 2


def test_sizes_computed_from_static_shapes_suggest_simplify() -> None:
    model = golden.sizes_from_static_shapes_model()
    (skip,) = make_dynamic_scale(model, from_sizes=True).skipped
    assert "simplify=True folds it" in skip.reason


def test_freedom_false_skips_the_analysis_but_not_the_rewrite() -> None:
    with_freedom = make_dynamic_scale(golden.free_and_pinned_model())
    without = make_dynamic_scale(golden.free_and_pinned_model(), freedom=False)
    assert [s.node for s in without.rewritten] == [s.node for s in with_freedom.rewritten] == ["free_y", "up"]
    assert all(site["free"] is None and site["pinned_by"] is None for site in without.to_dict()["rewritten"])
    assert without.model.SerializeToString() == with_freedom.model.SerializeToString()


def test_only_free_without_the_analysis_is_a_usage_error() -> None:
    import pytest

    from graphsurgeon_tools.errors import UsageError

    with pytest.raises(UsageError, match="only_free=True needs the freedom analysis"):
        make_dynamic_scale(golden.free_and_pinned_model(), only_free=True, freedom=False)
