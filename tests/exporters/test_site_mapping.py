"""exporters.site_mapping: routed calls <-> a candidate's Resize / Upsample / DynamicTRTResize sites."""

from __future__ import annotations

import io
import warnings

import onnx
import pytest
from onnx import helper

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from exporters.routing import ResizeRouter  # noqa: E402
from exporters.site_mapping import SiteMappingError, candidate_sites, map_sites  # noqa: E402


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.head = nn.Sequential(nn.Identity(), nn.Upsample(scale_factor=3, mode="nearest"))

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        return self.head(F.interpolate(self.up(x), scale_factor=0.5, mode="bicubic"))


class _Net(nn.Module):
    """Two branches (so a valid graph may order them either way), a size-driven call, nested scopes."""

    def __init__(self) -> None:
        super().__init__()
        self.left = _Block()
        self.right = nn.Upsample(scale_factor=3, mode="nearest")

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        a = self.left(x)
        b = self.right(x)
        return a + F.interpolate(b, size=a.shape[-2:], mode="bilinear")


def _export(module: "nn.Module", x: "torch.Tensor", dynamo: bool = False) -> onnx.ModelProto:
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        if dynamo:
            return torch.onnx.export(module, (x,), dynamo=True, verbose=False).model_proto
        buffer = io.BytesIO()
        torch.onnx.export(module, (x,), buffer, dynamo=False, opset_version=17)
        return onnx.load_from_string(buffer.getvalue())


@pytest.fixture(scope="module")
def net() -> tuple:
    module = _Net().eval()
    x = torch.randn(1, 1, 4, 6)
    router = ResizeRouter()
    router.run(module, x)
    return module, x, router.calls


def test_sites_pair_in_execution_order_with_their_torchscript_scopes(net: tuple) -> None:
    module, x, calls = net
    mapping = map_sites(calls, _export(module, x))
    assert [p.site.scope for p in mapping.pairs] == ["left.up", "left", "left.head.1", "right"]
    assert [p.call.scope for p in mapping.pairs] == ["left.up", "left", "left.head.1", "right"]
    assert [p.site.factors for p in mapping.pairs] == [(2.0, 2.0), (0.5, 0.5), (3.0, 3.0), (3.0, 3.0)]
    assert len(mapping.size_driven_calls) == 1 and not mapping.notes


def test_dynamo_name_scopes_pair_too(net: tuple) -> None:
    module, x, calls = net
    mapping = map_sites(calls, _export(module, x, dynamo=True))
    assert [p.site.scope for p in mapping.pairs] == ["left.up", "left", "left.head.1", "right"]


def test_a_reordered_graph_is_paired_by_scope(net: tuple) -> None:
    module, x, calls = net
    model = _export(module, x)
    # the right branch first: still topologically sorted
    nodes = sorted(model.graph.node, key=lambda n: not n.name.startswith("/right/"))
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.checker.check_model(model)
    mapping = map_sites(calls, model)
    assert [p.site.node_name for p in mapping.pairs][-1] == "/right/Resize"
    assert mapping.notes == ["graph order differs from execution order; sites paired by module scope"]


def test_a_changed_mode_is_one_error_naming_the_site_and_what_differs(net: tuple) -> None:
    module, x, calls = net
    model = _export(module, x)
    node = next(n for n in model.graph.node if n.name == "/left/head/head.1/Resize")
    for attr in node.attribute:
        if attr.name == "mode":
            attr.s = b"linear"
    with pytest.raises(SiteMappingError) as caught:
        map_sites(calls, model, label="cand.onnx")
    message = str(caught.value)
    assert message.startswith("cand.onnx disagrees with the reference at 1 site(s): site 2 in 'left.head.1'")
    assert "node '/left/head/head.1/Resize' (Resize): mode linear (the reference: nearest)" in message
    assert caught.value.exit_code == 1


def test_a_missing_site_is_one_error_listing_both_sides(net: tuple) -> None:
    module, x, calls = net
    with pytest.raises(
        SiteMappingError, match=r"makes 3 scale-driven resize call\(s\) but the candidate has 4 .*/right/Resize"
    ):
        map_sites(calls[:-2] + calls[-1:], _export(module, x))


def test_plugin_nodes_and_scale_inputs_are_sites(net: tuple) -> None:
    module, x, calls = net
    model = _export(module, x)
    target = next(n for n in model.graph.node if n.name == "/left/up/Resize")
    plugin = helper.make_node(
        "DynamicTRTResize",
        [target.input[0], "s"],
        list(target.output),
        name="plugin_up",
        domain="trt.plugins",
        mode="linear",
        align_corners=1,
    )
    nodes = [plugin if n is target else n for n in model.graph.node]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    model.graph.input.append(helper.make_tensor_value_info("s", onnx.TensorProto.FLOAT, [4]))
    sites = candidate_sites(model)
    assert (sites[0].op_type, sites[0].coordinate_transformation_mode, sites[0].scales_input) == (
        "DynamicTRTResize",
        "align_corners",
        "s",
    )
    assert map_sites(calls, model).pairs[0].site.node_name == "plugin_up"


def test_a_wrapper_prefix_and_method_calls_do_not_break_scopes() -> None:
    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = _Block()

        def forward(self, x: "torch.Tensor") -> "torch.Tensor":
            return self.inner(x)

    wrapped = Wrapper().eval()
    x = torch.randn(1, 1, 4, 6)
    router = ResizeRouter()
    router.run(wrapped.inner, x)  # the reference is the bare block, the candidate its wrapper
    mapping = map_sites(router.calls, _export(wrapped, x))
    assert [p.site.scope for p in mapping.pairs] == ["inner.up", "inner", "inner.head.1"]


# --- real models, built by their projects' code (tests/realmodels) ---------------------------

REAL = {  # model -> (scale-driven sites, size-driven calls)
    "swin2sr": (2, 0),
    "vae_decoder": (1, 0),
    "dpt": (5, 1),
    "segformer": (0, 4),
    "upernet": (0, 9),
}


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["torchscript-17", "dynamo-18"])
@pytest.mark.parametrize("name", list(REAL))
def test_every_real_model_maps_site_by_site(real_export, name: str, variant: str) -> None:
    model, path = real_export(name, variant)
    router = ResizeRouter()
    router.run(model.module, model.example)
    mapping = map_sites(router.calls, path)
    assert (len(mapping.pairs), len(mapping.size_driven_calls)) == REAL[name]
    assert all(p.site.scope is None or p.call.scope.endswith(p.site.scope) for p in mapping.pairs)
