"""validate on unmodified exports against their own modules: the model's own factor, calls with no
Resize left to PyTorch, and half-precision models against float32 modules (cast at the boundary).

Every model is a small torch module exported here (TorchScript and dynamo exporters), run in
ONNX Runtime and compared with the module run through the routed C++ op.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")

from validation import half_net  # noqa: E402 - imports torch

from graphsurgeon_tools import swap_plugin, validate  # noqa: E402
from graphsurgeon_tools.check.tolerance import EPS  # noqa: E402

F = torch.nn.functional


class SizesNet(torch.nn.Module):
    """A site whose output size comes from a shape (``size=``): sizes-driven in the export."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.b = torch.nn.Conv2d(4, 3, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.a(x))
        return self.b(F.interpolate(y, size=(x.shape[-2] * 2, x.shape[-1] * 2), mode="bilinear"))


class MixedNet(torch.nn.Module):
    """nearest-exact (the dynamo exporter writes index arithmetic, no Resize) then bilinear x2."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Conv2d(1, 2, 3, padding=1)
        self.b = torch.nn.Conv2d(2, 1, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.interpolate(self.a(x), scale_factor=2, mode="nearest-exact")
        return self.b(F.interpolate(y, scale_factor=2, mode="bilinear"))


def _seeded(cls: type) -> torch.nn.Module:
    torch.manual_seed(0)
    return cls().eval()


@pytest.fixture(scope="module")
def half_export() -> onnx.ModelProto:
    return half_net.half_export()


def test_a_sizes_driven_export_is_compared_at_its_own_factor_by_default() -> None:
    net = _seeded(SizesNet)
    model = half_net.torchscript(net, torch.rand(1, 3, 8, 8), dynamic_axes={"input": {2: "h", 3: "w"}})
    assert not any(
        i.type.tensor_type.elem_type == 1 and len(i.type.tensor_type.shape.dim) == 1 for i in model.graph.input
    )  # no scale input: the sweep cannot drive it
    report = validate(model, net)
    assert report.passed, report.summary_line()
    assert [f.factor for f in report.factors] == [None]  # one point, as the model stands; no "x2 drives nothing"
    assert any("compared at the model's own factor" in n for n in report.notes)
    # asking for factors explicitly is still honoured (and says why it cannot drive them)
    asked = validate(model, net, factors=[3])
    assert not asked.passed


def test_calls_the_exporter_wrote_no_resize_for_are_left_to_pytorch_and_listed() -> None:
    net = _seeded(MixedNet)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(net, (torch.rand(1, 1, 8, 8),), dynamo=True, opset_version=18, verbose=False)
    model = program.model_proto
    resizes = [n for n in model.graph.node if n.op_type == "Resize"]
    assert len(resizes) == 1  # the nearest-exact call became GatherND index arithmetic
    report = validate(model, net)
    assert report.passed, report.summary_line()
    assert report.reference["left_to_pytorch"] == ["site 0: interpolate(mode='nearest-exact') 2x2"]
    assert any(n.startswith("left to PyTorch at the code's factor") for n in report.notes)
    assert any(o.max_abs_error is not None and not o.vacuous for f in report.factors for o in f.outputs)


def test_a_half_precision_export_is_validated_against_its_float32_module(half_export) -> None:
    report = validate(half_export, half_net.seeded())  # float16 data in, float32 parameters
    assert report.passed, report.summary_line()
    assert "cast from float16 to float32" in report.reference["precision"]
    assert "ulps of float16" in report.tolerance
    worst = max(o.max_abs_error for f in report.factors for o in f.outputs)
    assert 0 < worst < 16 * EPS["float16"] * 4  # float16 rounding, not a blunder


def test_a_half_module_takes_float16_inputs_as_they_are(half_export) -> None:
    report = validate(half_export, half_net.seeded().half())
    assert report.passed, report.summary_line()
    assert report.reference["precision"] == ""  # nothing to cast


def test_explicit_tolerances_still_decide(half_export) -> None:
    strict = validate(half_export, half_net.seeded(), atol=1e-7, rtol=0.0)
    assert not strict.passed and strict.tolerance == ""
    assert strict.atol == 1e-7


def test_swap_plugin_checks_a_half_precision_export_in_float16_ulps(half_export) -> None:
    result = swap_plugin(half_export)
    assert result.check.passed is True, result.check.summary
    assert "float16" in result.check.tolerance
    assert result.check.outputs[0].max_abs_diff < 2 * EPS["float16"] * 16
    assert result.model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16


def test_the_notes_say_what_was_cast_and_what_was_left_to_pytorch(half_export) -> None:
    report = validate(half_export, half_net.seeded())
    assert any(n.startswith("reference: the module's parameters are float32") for n in report.notes)
    assert any(n.startswith("tolerance: dtype-aware default") for n in report.notes)


def test_the_scales_convention_casts_at_the_boundary_too(half_export) -> None:
    from exporters.registrations import TorchModuleRunner

    out = TorchModuleRunner().run(
        half_net.seeded(), [np.random.default_rng(0).random((1, 3, 8, 8)).astype(np.float16)], None
    )
    assert out[0].dtype == np.float16 and out[0].shape == (1, 3, 32, 32)
