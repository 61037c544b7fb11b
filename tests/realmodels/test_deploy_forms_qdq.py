"""INT8 QDQ models as a deployment hands them over: quantized here by onnxruntime.quantization.

Real exports (the tutorial's SRCNN, transformers' DPT built by its own code with random weights)
are quantized with ``quantize_static`` (QDQ format, per-tensor and per-channel weights, random
calibration data), then taken through swap-plugin (its built-in check), validate of the plugin
model against the quantized original, make-dynamic-scale and reverse. ORT's quantizer writes
DPT's fusion-stage and head upsamples as ``DequantizeLinear -> Resize -> QuantizeLinear`` (Resize
is one of its direct 8-bit ops); SRCNN's first op is the Resize on the float input, so it is
followed by a QuantizeLinear only ("half" QDQ).

Figures per model and form are recorded as test properties (``record_property``), the table of
the closing note.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from graphsurgeon_tools import make_dynamic_scale, swap_plugin, validate
from graphsurgeon_tools.resize.qdq import UNFUSED_LEVEL, qdq_sites
from realmodels.fixtures import real_models  # noqa: F401 - session fixture

quantization = pytest.importorskip("onnxruntime.quantization")


class _Calibration(quantization.CalibrationDataReader):
    """Two seeded random batches: enough for the quantizer's min/max, no data set."""

    def __init__(self, name: str, shape: tuple[int, ...]) -> None:
        rng = np.random.default_rng(0)
        self.batches = iter([{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(2)])

    def get_next(self):  # noqa: ANN201 - ORT's protocol
        return next(self.batches, None)


def _quantize(source: Path, target: Path, shape: tuple[int, ...], per_channel: bool) -> onnx.ModelProto:
    quantization.quantize_static(
        str(source),
        str(target),
        _Calibration("input", shape),
        quant_format=quantization.QuantFormat.QDQ,
        per_channel=per_channel,
        activation_type=quantization.QuantType.QInt8,
        weight_type=quantization.QuantType.QInt8,
    )
    return onnx.load(target)


FORMS = [False, True]
FORM_IDS = ["per-tensor", "per-channel"]


@pytest.fixture(scope="module")
def quantized(real_models, srcnn_exports, tmp_path_factory) -> dict[tuple[str, bool], Path]:  # noqa: F811
    folder = tmp_path_factory.mktemp("qdq")
    sources = {
        "dpt": (real_models.path("dpt/torchscript-17"), (1, 3, 32, 32)),
        "srcnn": (srcnn_exports["torchscript-17"], (1, 3, 16, 16)),
    }
    out: dict[tuple[str, bool], Path] = {}
    for name, (source, shape) in sources.items():
        for per_channel in FORMS:
            target = folder / f"{name}.{'pc' if per_channel else 'pt'}.onnx"
            _quantize(source, target, shape, per_channel)
            out[(name, per_channel)] = target
    return out


@pytest.mark.parametrize("per_channel", FORMS, ids=FORM_IDS)
def test_dpt_quantized_by_ort_has_dq_resize_q_sites_and_swaps_with_the_check_passing(
    quantized, per_channel: bool, record_property, tmp_path
) -> None:
    path = quantized[("dpt", per_channel)]
    sites = qdq_sites(onnx.load(path))
    full = [s for s in sites.values() if s.full]
    assert len(full) == 5 and all(s.same_parameters for s in full)  # four fusion stages and the head
    result = swap_plugin(path)
    check = result.check
    assert check.passed is True, check.summary
    assert check.level == UNFUSED_LEVEL and "qdq" in check.figures
    assert len(result.rewritten) == 5
    record_property("swap-plugin", check.summary)
    plugin = tmp_path / "dpt.plugin.onnx"
    onnx.save(result.model, plugin)
    report = validate(plugin, path)
    assert report.passed, report.summary_line()
    assert any("quantized Resize sites" in note for note in report.notes)
    assert any(o.kind == "site" for f in report.factors for o in f.outputs)
    record_property("validate", report.summary_line())
    back = swap_plugin(result.model, reverse=True)
    assert back.check.passed is True, back.check.summary


def test_dpt_quantized_make_dynamic_scale_is_exact(quantized) -> None:
    result = make_dynamic_scale(quantized[("dpt", False)])
    assert result.rewritten and result.check.passed is True, result.check.summary
    assert max(o.max_abs_diff for o in result.check.outputs) == 0


@pytest.mark.parametrize("per_channel", FORMS, ids=FORM_IDS)
def test_srcnn_quantized_swaps_its_cubic_site_before_the_quantizelinear(quantized, per_channel: bool, tmp_path) -> None:
    path = quantized[("srcnn", per_channel)]
    (site,) = qdq_sites(onnx.load(path)).values()
    assert not site.dq and site.q and not site.full  # Resize on the float input, then Q
    result = swap_plugin(path, check_dims={"height": 16, "width": 16, "batch": 1})
    assert result.check.passed is True, result.check.summary
    assert result.check.level == UNFUSED_LEVEL
    plugin = tmp_path / "srcnn.plugin.onnx"
    onnx.save(result.model, plugin)
    report = validate(plugin, path, inputs={"input": np.random.default_rng(0).random((1, 3, 16, 16), np.float32)})
    assert report.passed, report.summary_line()
