"""exporters.routing: an unmodified module's interpolate calls run by the C++ op, at any factor."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional
nn = torch.nn

from exporters.routing import ResizeRouter, RoutingError, onnx_attributes, route_resize  # noqa: E402

MODES = [
    {"mode": "nearest"},
    {"mode": "nearest-exact"},
    {"mode": "bilinear", "align_corners": False},
    {"mode": "bilinear", "align_corners": True},
    {"mode": "bicubic", "align_corners": False},
    {"mode": "bicubic", "align_corners": True},
    {"mode": "bilinear", "antialias": True},
    {"mode": "bicubic", "antialias": True},
    {"mode": "nearest", "recompute_scale_factor": True},
    {"mode": "bilinear", "align_corners": False, "recompute_scale_factor": True},
]
EXACT = {"nearest", "nearest-exact"}


def _ids(kw: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in kw.items())


def _assert_same(routed: "torch.Tensor", plain: "torch.Tensor", mode: str) -> None:
    assert routed.shape == plain.shape
    if mode in EXACT:
        assert torch.equal(routed, plain)
    else:  # torch steps in float32, the op in float64
        torch.testing.assert_close(routed, plain, rtol=0, atol=2e-5)


@pytest.mark.parametrize("kw", MODES, ids=_ids)
@pytest.mark.parametrize("factor", [2, 3, 0.5, 1.5, 1.7, 2.5])
def test_a_routed_call_equals_plain_pytorch_at_the_factor_in_the_code(kw: dict, factor: float) -> None:
    x = torch.randn(2, 3, 11, 13, generator=torch.Generator().manual_seed(1))
    plain = F.interpolate(x, scale_factor=factor, **kw)
    with route_resize() as router:
        routed = F.interpolate(x, scale_factor=factor, **kw)
    (call,) = router.calls
    assert call.routed and call.site == 0 and call.original_factors == call.factors == (factor, factor)
    _assert_same(routed, plain, kw["mode"])


def test_nearest_stays_bit_exact_over_many_sizes_and_factors() -> None:
    # Known limit (module docstring): a non-dyadic factor whose product with the size is an
    # integer (20 * 1.1); torch's float32 step cannot give that output size, so the op runs
    # at out / in there and may pick a neighbouring pixel at a boundary.
    gen = torch.Generator().manual_seed(2)
    for size in range(4, 40, 3):
        x = torch.randn(1, 1, size, size + 2, generator=gen)
        for factor in (1.1, 1.3, 1.7, 2.2, 2.9, 3.3, 0.7, 0.45, 1.25, 3.5):
            if (
                any(abs(n * factor - round(n * factor)) < 1e-6 for n in (size, size + 2))
                and not (factor * 4).is_integer()
            ):
                continue
            for mode in ("nearest", "nearest-exact"):
                with route_resize():
                    routed = F.interpolate(x, scale_factor=factor, mode=mode)
                assert torch.equal(routed, F.interpolate(x, scale_factor=factor, mode=mode)), (size, factor, mode)


class _Entrypoints(nn.Module):
    """Every public way torch offers to upsample; each ends in F.interpolate."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.up_nearest = nn.UpsamplingNearest2d(scale_factor=2)
        self.up_bilinear = nn.UpsamplingBilinear2d(scale_factor=2)

    def forward(self, x: "torch.Tensor") -> list:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # F.upsample* are deprecated
            return [
                self.up(x),
                self.up_nearest(x),
                self.up_bilinear(x),
                F.upsample(x, scale_factor=2),
                F.upsample_nearest(x, scale_factor=2),
                F.upsample_bilinear(x, scale_factor=2),
            ]


def test_modules_and_deprecated_functions_are_routed_with_their_scopes() -> None:
    model = _Entrypoints().eval()
    x = torch.randn(1, 2, 5, 6)
    plain = model(x)
    router = ResizeRouter()
    routed = router.run(model, x)
    assert [c.routed for c in router.calls] == [True] * 6
    assert [c.scope for c in router.calls] == ["up", "up_nearest", "up_bilinear", "", "", ""]
    assert [c.coordinate_transformation_mode for c in router.calls] == [
        "asymmetric",
        "asymmetric",
        "align_corners",
        "asymmetric",
        "asymmetric",
        "align_corners",
    ]
    for a, b, call in zip(routed, plain, router.calls):
        _assert_same(a, b, call.torch_mode)


class _ThreeSites(nn.Module):
    def __init__(self, factor: float = 2.0) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)
        self.head = nn.Upsample(scale_factor=factor, mode="bilinear", align_corners=False)
        self.factor = factor

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        x = F.interpolate(self.conv(x), scale_factor=self.factor, mode="nearest")
        x = F.interpolate(x, scale_factor=self.factor, mode="bicubic", align_corners=True)
        y = self.head(x)
        return y + F.interpolate(x, size=y.shape[-2:], mode="bilinear", align_corners=False)  # size-driven


def test_factors_apply_to_every_site_or_per_site_by_number_or_scope() -> None:
    model = _ThreeSites().eval()
    x = torch.randn(1, 2, 4, 5)
    with torch.no_grad(), route_resize(3) as router:
        y = model(x)
    assert [c.factors for c in router.site_calls] == [(3.0, 3.0)] * 3
    assert y.shape[-2:] == (4 * 27, 5 * 27)
    size_call = router.calls[3]
    assert size_call.site is None and size_call.size == (108, 135) and not size_call.routed
    with torch.no_grad(), route_resize(sites={1: (1.5, 2.0), "head": 4}) as router:
        y = model(x)
    assert [c.factors for c in router.site_calls] == [(2.0, 2.0), (1.5, 2.0), (4.0, 4.0)]
    assert [c.original_factors for c in router.site_calls] == [(2.0, 2.0)] * 3
    assert y.shape[-2:] == (48, 80)


def test_a_site_key_that_matches_nothing_is_one_clear_error() -> None:
    model = _ThreeSites().eval()
    with pytest.raises(RoutingError, match=r"\[7, 'tail'\] matched no .* 0 \(root\), 1 \(root\), 2 \(head\)"):
        ResizeRouter(sites={7: 2, "tail": 2}).run(model, torch.randn(1, 2, 4, 4))
    with pytest.raises(RoutingError, match="3 factors for 2 spatial axes"):
        ResizeRouter(2, sites={0: (1, 2, 3)}).run(model, torch.randn(1, 2, 4, 4))


def test_routers_nest_and_leave_nothing_behind() -> None:
    from torch.nn.modules import module as nn_module

    hooks = len(nn_module._global_forward_pre_hooks)
    x = torch.randn(1, 1, 3, 3)
    with route_resize(2) as outer:
        F.interpolate(x, scale_factor=4)
        with route_resize(3) as inner:
            y = F.interpolate(x, scale_factor=4)
        z = F.interpolate(x, scale_factor=4)
    assert y.shape[-1] == 9 and z.shape[-1] == 6
    assert len(outer.calls) == 2 and len(inner.calls) == 1
    assert F.interpolate(x, scale_factor=4).shape[-1] == 12
    assert len(nn_module._global_forward_pre_hooks) == hooks
    with pytest.raises(RoutingError, match="already active"), outer, outer:
        pass


def test_calls_the_op_cannot_take_run_in_pytorch_at_the_chosen_factor() -> None:
    x = torch.randn(1, 1, 4, 4)
    with route_resize(2, record_tensors=True) as router:
        area = F.interpolate(x, scale_factor=4, mode="area")
        ints = F.interpolate((x * 10).to(torch.uint8), scale_factor=4, mode="nearest")
    assert area.shape[-1] == ints.shape[-1] == 8
    assert [c.routed for c in router.calls] == [False, False]
    assert "not an ONNX Resize" in router.calls[0].reason and "floating" in router.calls[1].reason
    assert torch.equal(router.calls[1].output, ints)


def test_recorded_tensors_are_copies_taken_at_the_call() -> None:
    x = torch.randn(1, 1, 3, 3)
    with route_resize(record_tensors=True) as router:
        y = F.interpolate(x, scale_factor=2)
        y.add_(1)  # an FPN-style in-place add after the resize
    call = router.calls[0]
    assert torch.equal(call.input, x) and torch.equal(call.output + 1, y)


def test_the_attribute_table_matches_what_the_exporters_write() -> None:
    assert onnx_attributes("nearest") == {
        "mode": "nearest",
        "coordinate_transformation_mode": "asymmetric",
        "nearest_mode": "floor",
        "antialias": False,
    }
    assert onnx_attributes("bicubic", True, True)["cubic_coeff_a"] == -0.5
    assert onnx_attributes("area") is None


def _torchscript_onnx(module: "nn.Module", x: "torch.Tensor") -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x,), buffer, dynamo=False, opset_version=17, input_names=["x"])
    return buffer.getvalue()


@pytest.mark.parametrize("factor", [3.0, 1.5, 4.0])
def test_at_another_factor_a_routed_run_equals_the_model_exported_at_that_factor_in_ort(factor: float) -> None:
    ort = pytest.importorskip("onnxruntime")
    x = torch.randn(1, 2, 6, 7, generator=torch.Generator().manual_seed(3))
    original = _ThreeSites(2.0).eval()
    at_factor = _ThreeSites(factor).eval()
    at_factor.load_state_dict(original.state_dict())
    session = ort.InferenceSession(_torchscript_onnx(at_factor, x), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x.numpy()})[0]
    router = ResizeRouter(factor)
    routed = router.run(original, x).numpy()
    assert routed.shape == expected.shape
    np.testing.assert_allclose(routed, expected, rtol=0, atol=5e-5)


def test_a_site_can_be_given_its_output_size() -> None:
    from exporters.routing import OutputSize

    x = torch.randn(1, 1, 7, 5)
    with route_resize(sites={0: OutputSize((15, 11)), 1: OutputSize((3, 4))}) as router:
        a = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
        b = F.interpolate(x, scale_factor=2, mode="area")  # not routed: torch at that size
    assert a.shape[-2:] == (15, 11) and b.shape[-2:] == (3, 4)
    torch.testing.assert_close(
        a, F.interpolate(x, size=(15, 11), mode="bilinear", align_corners=True), rtol=0, atol=2e-5
    )
    assert router.calls[0].target_size == (15, 11) and router.calls[0].routed
