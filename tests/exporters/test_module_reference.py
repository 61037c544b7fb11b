"""exporters.module_reference: an unmodified module as validate's reference, per-site factors from the feeds."""

from __future__ import annotations

import copy
import io
import warnings

import numpy as np
import onnx
import pytest
from onnx import helper

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
nn = torch.nn
F = torch.nn.functional

from exporters.module_reference import RoutedModuleReference, flatten_outputs, site_values  # noqa: E402
from exporters.routing import OutputSize  # noqa: E402
from exporters.site_mapping import SiteMappingError  # noqa: E402
from graphsurgeon_tools import make_dynamic_scale, swap_plugin  # noqa: E402
from graphsurgeon_tools.validation.references import RunFailed  # noqa: E402


class _TwoSites(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(1, 2, 3, padding=1)
        self.b = nn.Conv2d(2, 2, 3, padding=1)

    def forward(self, x: "torch.Tensor") -> tuple:
        y = F.interpolate(self.a(x), scale_factor=2, mode="nearest")
        z = F.interpolate(self.b(y), scale_factor=2, mode="bicubic", align_corners=False)
        return z, {"skip": y, "none": None}


def _export(module: "nn.Module", x: "torch.Tensor") -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x,), buffer, dynamo=False, opset_version=17, input_names=["x"])
    return onnx.load_from_string(buffer.getvalue())


def _ort(model: onnx.ModelProto, feeds: dict, extra: tuple = ()) -> dict:
    model = copy.deepcopy(model)
    for name in extra:
        model.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds)))


@pytest.fixture(scope="module")
def two_sites() -> tuple:
    torch.manual_seed(0)
    module = _TwoSites().eval()
    x = torch.randn(1, 1, 5, 6)
    static = _export(module, x)
    dynamic = make_dynamic_scale(static, check=False).model
    return module, x.numpy(), static, dynamic


def test_each_site_runs_at_the_factor_the_candidate_is_fed(two_sites: tuple) -> None:
    module, x, _, dynamic = two_sites
    reference = RoutedModuleReference(module, "python:two_sites", dynamic)
    feeds = {"x": x, "scales_0": np.array([1, 1, 3, 3], np.float32), "scales_1": np.array([1, 1, 1.5, 2.5], np.float32)}
    got = reference.run(3.0, [("x", x)], feeds)
    expected = list(_ort(dynamic, feeds).values())
    assert [name for name, _ in got] == ["output_0", "output_1"]  # (z, {"skip": y, "none": None}) flattened
    for (_, value), want in zip(got, expected):
        assert value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=0, atol=1e-5)
    assert got[0][1].shape[-2:] == (22, 45)
    assert reference.free_sites == [0, 1]
    assert [s["scales_input"] for s in reference.sites()] == ["scales_0", "scales_1"]


def test_a_static_candidate_runs_at_its_own_factors_and_refuses_others(two_sites: tuple) -> None:
    module, x, static, _ = two_sites
    reference = RoutedModuleReference(module, "python:two_sites", static)
    got = reference.run(None, [("x", x)], {"x": x})
    np.testing.assert_allclose(got[0][1], list(_ort(static, {"x": x}).values())[0], rtol=0, atol=1e-5)
    with pytest.raises(RunFailed, match="factor 3 drives nothing: no resize site of the candidate takes a scales"):
        reference.run(3.0, [("x", x)], {"x": x})


def test_a_site_whose_mode_changed_is_caught_by_the_mapping(two_sites: tuple) -> None:
    module, x, static, _ = two_sites
    wrong = copy.deepcopy(static)
    node = [n for n in wrong.graph.node if n.op_type == "Resize"][1]
    next(a for a in node.attribute if a.name == "mode").s = b"linear"
    reference = RoutedModuleReference(module, "python:two_sites", wrong)
    with pytest.raises(
        SiteMappingError, match=rf"site 1: interpolate\(mode='bicubic'\) 2x2 vs node '{node.name}'.*mode linear"
    ):
        reference.run(None, [("x", x)], {"x": x})


FORMS = {
    "dynamic": lambda m: make_dynamic_scale(m).model,
    "pair": lambda m: make_dynamic_scale(m, check=False, factor=True).model,
    "plugin-scales": lambda m: swap_plugin(make_dynamic_scale(m, check=False).model).model,
    "plugin-size-tensor": lambda m: swap_plugin(m, signature="size-tensor").model,
    "plugin-size-input": lambda m: swap_plugin(m, signature="size-tensor", size_input="size").model,
}


@pytest.mark.parametrize("form", list(FORMS))
def test_every_candidate_form_gives_each_site_its_fed_factor(two_sites: tuple, form: str) -> None:
    from graphsurgeon_tools import make_session

    module, x, static, _ = two_sites
    candidate = FORMS[form](static)
    reference = RoutedModuleReference(module, "python:two_sites", candidate)
    reference.prepare([x])
    assert reference.free_sites == [0, 1], reference.sites()
    session = make_session(candidate)
    for factors in ((3.0, 1.5), (1.0, 2.0)):
        feeds = {"x": x}
        shape = list(x.shape)
        for spec, f in zip(session.get_inputs()[1:], factors):
            shape = [shape[0], shape[1], int(shape[2] * f), int(shape[3] * f)]
            if "size" in form and "input" in form:
                feeds[spec.name] = np.zeros(shape, np.float32)
            elif form == "pair":
                feeds[spec.name] = np.array([f, f], np.float32)
            else:
                feeds[spec.name] = np.array([1, 1, f, f], np.float32)
        want = session.run(None, feeds)
        got = reference.run(factors[0], [("x", x)], feeds)
        for (_, value), expected in zip(got, want):
            assert value.shape == expected.shape, (form, factors)
            np.testing.assert_allclose(value, expected, rtol=0, atol=1e-5)


def _localise(reference: RoutedModuleReference, candidate: onnx.ModelProto, feeds: dict):
    reference.run(None, [("x", feeds["x"])], feeds)
    return reference.localise(lambda names: _ort(candidate, feeds, tuple(names)))


def test_localisation_names_the_site_where_an_error_appears(two_sites: tuple) -> None:
    module, x, static, _ = two_sites
    wrong = copy.deepcopy(static)
    node = [n for n in wrong.graph.node if n.op_type == "Resize"][1]
    node.attribute.append(helper.make_attribute("exclude_outside", 1))  # invisible to the mapping
    found = _localise(RoutedModuleReference(module, "python:two_sites", wrong), wrong, {"x": x})
    assert (found.site, found.node, found.from_upstream) == (1, node.name, False)
    assert "the error appears at this site" in found.message


def test_localisation_says_when_the_error_came_from_upstream(two_sites: tuple) -> None:
    module, x, static, _ = two_sites
    wrong = copy.deepcopy(static)
    weight = next(t for t in wrong.graph.initializer if t.name == "b.weight")
    values = onnx.numpy_helper.to_array(weight) * 1.5
    weight.CopyFrom(onnx.numpy_helper.from_array(values, "b.weight"))
    found = _localise(RoutedModuleReference(module, "python:two_sites", wrong), wrong, {"x": x})
    assert (found.site, found.from_upstream) == (1, True)
    assert "the error comes from upstream" in found.message
    agrees = _localise(RoutedModuleReference(module, "python:two_sites", static), static, {"x": x})
    assert agrees.site is None


def test_feeds_read_as_factors_or_output_sizes() -> None:
    assert site_values(np.array([1, 1, 2, 3], np.float32), 2) == (2.0, 3.0)
    assert site_values(np.array([4], np.float32), 2) == (4.0, 4.0)
    assert site_values(np.array([1, 1, 20, 30], np.int64), 2) == OutputSize((20, 30))
    assert site_values(np.zeros((1, 1, 7, 9), np.float32), 2) == OutputSize((7, 9))
    assert flatten_outputs((torch.ones(1), {"a": torch.zeros(2), "b": None}, [torch.ones(3)]))[2].shape == (3,)


# --- real models (tests/realmodels): the unmodified module at other factors --------------

# Factors tried per free site alone and on all sites together. Swin2SR crops its output to the
# size of its native x4 (``reconstruction[:, :, :h * upscale, :w * upscale]``), so its points keep
# the total factor within x4 (the crop is the finding below).
ALONE = {"swin2sr": (1.0, 1.5), "vae_decoder": (3.0, 4.0), "dpt": (3.0, 4.0)}
TOGETHER = {"swin2sr": (1.5, 2.0), "vae_decoder": (2.0, 3.0, 4.0), "dpt": (2.0, 3.0, 4.0)}
WORST: dict[str, float] = {}  # model/variant -> worst |diff| against the unmodified module (shown with -s)


def _dynamic(path):
    return make_dynamic_scale(onnx.load(str(path)), check=False).model  # weights in memory: small models


def _points(static: onnx.ModelProto, name: str, reference: RoutedModuleReference) -> list[dict[int, float]]:
    """Sweep points: each free site alone, then all sites together where the graph's shapes allow."""
    from graphsurgeon_tools.resize.freedom import factor_clash, site_freedom

    freedom = site_freedom(static)
    sites = reference.sites()
    free = [s["site"] for s in sites if freedom[s["node"]].free]
    points = [{site: f} for site in free for f in ALONE[name]]
    points += [
        {s["site"]: f for s in sites}
        for f in TOGETHER[name]
        if factor_clash(static, {s["node"]: f for s in sites}) is None
    ]
    return points


@pytest.mark.slow
@pytest.mark.parametrize("form", ["dynamic", "plugin"])
@pytest.mark.parametrize("variant", ["torchscript-17", "dynamo-18"])
@pytest.mark.parametrize("name", list(ALONE))
def test_real_models_match_their_candidates_on_free_sites(real_export, name: str, variant: str, form: str) -> None:
    from graphsurgeon_tools import make_session

    built, path = real_export(name, variant)
    static = onnx.load(str(path))
    dynamic = _dynamic(path)
    if form == "plugin":
        dynamic = swap_plugin(dynamic).model
    reference = RoutedModuleReference(built.module, name, dynamic)
    x = built.example.numpy()
    data_name = dynamic.graph.input[0].name
    reference.prepare([x])
    sites = reference.sites()
    assert reference.free_sites == [s["site"] for s in sites]  # every site has a scales input now
    session = make_session(dynamic)
    points = _points(static, name, reference)
    assert points, "no free site and no runnable factor: nothing validated"
    worst = 0.0
    for point in points:
        feeds = {data_name: x}
        for s in sites:
            f = point.get(s["site"])
            feeds[s["scales_input"]] = np.array([1, 1, *(s["factors"] if f is None else (f, f))], np.float32)
        want = session.run(None, feeds)[0]
        got = reference.run(3.0, [(data_name, x)], feeds)[0][1]
        assert got.shape == want.shape, point
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * scale, err_msg=str(point))
        worst = max(worst, float(np.abs(got - want).max()))
    WORST[f"{name}/{variant}/{form}"] = worst
    print(f"\n{name}/{variant}/{form}: {len(sites)} sites, points {points}, worst |diff| {worst:.3g}")


@pytest.mark.slow
def test_swin2sr_crop_survives_torchscript_but_not_dynamo(real_export) -> None:
    """A finding, kept as a test: the dynamo export drops Swin2SR's crop (a no-op at the traced size)."""
    x3 = {"scales_0": np.array([1, 1, 3, 3], np.float32), "scales_1": np.array([1, 1, 3, 3], np.float32)}
    shapes = {}
    for variant in ("torchscript-17", "dynamo-18"):
        built, path = real_export("swin2sr", variant)
        dynamic = _dynamic(path)
        feeds = {dynamic.graph.input[0].name: built.example.numpy(), **x3}
        shapes[variant] = list(_ort(dynamic, feeds).values())[0].shape[-2:]
        reference = RoutedModuleReference(built.module, "swin2sr", dynamic)
        assert reference.run(3.0, [("input", built.example.numpy())], feeds)[0][1].shape[-2:] == (64, 64)
    assert shapes == {"torchscript-17": (64, 64), "dynamo-18": (144, 144)}


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["torchscript-17", "dynamo-18"])
@pytest.mark.parametrize("name", ["swin2sr", "vae_decoder", "dpt", "segformer", "upernet"])
def test_real_models_match_their_static_exports_at_the_original_factors(real_export, name: str, variant: str) -> None:
    built, path = real_export(name, variant)
    static = onnx.load(str(path))
    reference = RoutedModuleReference(built.module, name, static)
    x = built.example.numpy()
    data_name = static.graph.input[0].name
    got = reference.run(None, [(data_name, x)], {data_name: x})[0][1]
    want = list(_ort(static, {data_name: x}).values())[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * max(1.0, float(np.abs(want).max())))
    print(
        f"\n{name}/{variant}/static: {len(reference.sites())} scale-driven sites, "
        f"{len(reference.mapping.size_driven_calls)} size-driven calls, worst |diff| {np.abs(got - want).max():.3g}"
    )
