"""The whole flow on real models, as a new user would run it.

Models built by their projects' own code with random weights (transformers DPT, SegFormer, Swin2SR
nearest+conv, UperNet/ConvNeXt FPN; a diffusers AutoencoderKL decoder), each exported by both torch
exporters at two opsets, plus ONNX models shipped in PaddleOCR-family wheels (see tests/realmodels/).
For every one:

* ``inspect`` lists its sites, each with a source;
* ``make-dynamic-scale --from-sizes`` with the built-in check on exits 0, and the rewritten model fed
  the original factors is bit-identical to the original on every tensor the two graphs share;
* ``swap-plugin`` with both signatures, then ``--reverse``: the round trip is bit-identical;
* ``validate`` of the plugin and of the dynamic model against the original (each site at its own
  factor) and against ``onnx-reference`` passes, and no comparison passes on a vacuous reference.

A test that fails for a known reason carries ``xfail(strict=True)`` with that reason (see
``KNOWN``, empty today); a fix makes them XPASS, which fails the run until the mark is removed.
"""

from __future__ import annotations

import fnmatch
import re

import numpy as np
import onnx
import pytest

from realmodels import tensors
from realmodels.fixtures import CASES, flows, real_models  # noqa: F401 - session fixtures
from realmodels.flow import SIMPLIFY, Step, new_input_feeds
from realmodels.inputs import INPUTS

SIGNATURES = ("scales", "size-tensor")
# onnx's reference evaluator is pure Python (~20 s for Swin2SR's three factors): one export per
# torch model, and the shipped detectors at their small text page.
ONNX_REFERENCE_CASES = tuple(c for c in CASES if "/" not in c and c != "layout_cdla" or c.endswith("/torchscript-17"))

# Why a (test, case pattern) fails, for each one that does: none today (exactness at ORT_ENABLE_EXTENDED,
# dims <= 0 symbolic, baked factors of sizes sites, factor freedom and vacuous marks all hold).
KNOWN: dict[tuple[str, str], str] = {}


def _params(test: str, cases: tuple[str, ...] = CASES, extras: tuple[str, ...] = ()) -> list:
    """pytest params (case, or case and extra) with id "case[-extra]", xfail-marked from KNOWN."""
    params = []
    for case in cases:
        for extra in extras or (None,):
            ident = case if extra is None else f"{case}-{extra}"
            reasons = [
                why for (name, pattern), why in KNOWN.items() if name == test and fnmatch.fnmatch(ident, pattern)
            ]
            marks = [pytest.mark.xfail(reason=reasons[0], strict=True)] if reasons else []
            values = (case,) if extra is None else (case, extra)
            params.append(pytest.param(*values, id=ident, marks=marks))
    return params


def _assert_not_vacuous(step: Step) -> None:
    """validate compared something real: every compared point passed on a comparison that could have
    failed, and no graph output was compared against a constant or below-atol reference (a site
    output may be: DPT's position-embedding resize is all zeros with random weights)."""
    report = step.report
    assert report.get("counts", {}).get("compared", 0) >= 1, step.why()
    for point in report.get("factors", []):
        if point["status"] == "skipped":
            continue
        assert point["status"] == "passed", f"{point['factor']}: {point['status']} {point['reason']}"
        assert any(not o.get("vacuous") for o in point["outputs"]), f"{point['factor']}: only vacuous comparisons"
        vacuous = [o["output"] for o in point["outputs"] if o.get("vacuous") and o.get("kind", "output") == "output"]
        assert not vacuous, f"{point['factor']}: vacuous comparisons of graph outputs {vacuous}"


@pytest.mark.parametrize("case", _params("test_inspect_lists_every_site_with_its_source"))
def test_inspect_lists_every_site_with_its_source(flows, case: str, record_property) -> None:
    step = flows(case).inspect()
    assert step.code == 0, step.why()
    sites = step.report["sites"]
    assert sites, f"{case}: no Resize/Upsample site found"
    sources = sorted(
        {s["scales_source"] if s["scales_source"] != "absent" else f"sizes:{s['sizes_source']}" for s in sites}
    )
    assert "absent" not in sources and "sizes:absent" not in sources
    record_property("sites", len(sites))
    record_property("sources", ",".join(sources))


@pytest.mark.parametrize("case", _params("test_original_outputs_are_not_vacuous"))
def test_original_outputs_are_not_vacuous(real_models, case: str) -> None:
    """The models themselves answer with something a tolerance can judge (else every pass is vacuous)."""
    import onnxruntime as ort

    path = real_models.path(case)
    model = onnx.load(str(path), load_external_data=False)
    feeds = tensors.random_feeds(model)
    feeds.update({name: make() for name, make in INPUTS.get(case, {}).items()})
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for meta, value in zip(session.get_outputs(), session.run(None, feeds)):
        assert value.size and np.ptp(value) > 0, f"{meta.name} is constant"
        assert np.max(np.abs(value)) >= 1e-3, f"{meta.name}: max |y| {np.max(np.abs(value)):.3g} is below 10 x atol"


@pytest.mark.parametrize("case", _params("test_make_dynamic_scale_check_passes"))
def test_make_dynamic_scale_check_passes(flows, case: str, record_property) -> None:
    step = flows(case).dynamic()
    assert step.code == 0, step.why()
    report = step.report
    assert report["rewritten"], f"nothing rewritten; skipped: {report['skipped']}"
    assert report["check"]["passed"] is True
    check = report["check"]
    assert check["models"]["reference"]["role"] == "input"  # the user's file, not onnxsim's output
    if any(fnmatch.fnmatch(case, pattern) for pattern in SIMPLIFY):
        # onnxsim's share, measured on its own against the user's file, and the end-to-end figure
        (step,) = check["steps"]
        assert step["step"] == "onnxsim" and step["changes"]["nodes_folded"] > 0
        assert step["reference"] == check["models"]["reference"]
        end_to_end = max(o["max_abs_diff"] for o in check["outputs"])
        record_property("onnxsim_step", {"max_abs_diff": step["max_abs_diff"], "end_to_end": end_to_end})
        if case == "segformer/torchscript-14":  # onnxsim refolds its float constants: not zero, and said so
            assert end_to_end > 0 and step["max_abs_diff"] > 0
    else:
        assert check["steps"] == []
    record_property("rewritten", len(report["rewritten"]))
    record_property("check", report["check"])


@pytest.mark.parametrize("case", _params("test_dynamic_model_is_bit_exact_on_every_shared_tensor"))
def test_dynamic_model_is_bit_exact_on_every_shared_tensor(flows, case: str, record_property) -> None:
    flow = flows(case)
    step = flow.dynamic()
    assert step.code == 0, step.why()
    diff = tensors.compare_shared(flow.original, step.output, new_input_feeds(step.report))
    assert diff.exact, f"{len(diff.differing)} of {diff.compared} shared tensors differ, first {diff.differing[:3]}"
    record_property("shared_tensors", diff.compared)


@pytest.mark.parametrize(("case", "signature"), _params("test_swap_plugin_round_trip_is_bit_exact", extras=SIGNATURES))
def test_swap_plugin_round_trip_is_bit_exact(flows, case: str, signature: str) -> None:
    flow = flows(case)
    plugin = flow.plugin(signature)
    if _refused_by_the_signature(plugin):  # e.g. sizes-driven sites under signature="scales"
        _assert_the_other_signature_swaps(flow, signature, plugin)
        return
    assert plugin.code == 0, plugin.why()
    back = flow.reversed(signature)
    assert back.code == 0, back.why()
    restored = onnx.load(str(back.output), load_external_data=False)
    assert not [n.name for n in restored.graph.node if n.op_type == "DynamicTRTResize"]
    diff = tensors.compare_shared(flow.original, back.output, new_input_feeds(plugin.report))
    assert diff.exact, f"{len(diff.differing)} of {diff.compared} shared tensors differ, first {diff.differing[:3]}"


def _refused_by_the_signature(step) -> bool:
    """Exit 3 because the requested signature can swap none of the sites (a refused request, not success)."""
    return step.code == 3 and "can swap none of the matched site(s)" in step.err


def _assert_the_other_signature_swaps(flow, signature: str, step) -> None:
    """A signature refused at every site names form codes, and the other signature swaps those sites."""
    from graphsurgeon_tools.passes.swap_plugin.forward import FORM_CODES

    codes = set(re.findall(r"\[([a-z0-9-]+)\]", step.err))
    assert codes and codes <= FORM_CODES, step.why()
    other = flow.plugin(next(s for s in SIGNATURES if s != signature))
    assert other.code == 0 and other.report["rewritten"], other.why()


def _assert_site_refusals(flow, signature: str, report: dict) -> None:
    """Nothing swapped with exit 0: each site carries a real refusal code about the site itself (a refusal
    of the requested signature exits 3 instead), and the other signature refuses the sites alike."""
    from graphsurgeon_tools.passes.swap_plugin.forward import FORM_CODES

    codes = {s["code"] for s in report["skipped"]}
    assert report["skipped"] and "unclassified" not in codes and not codes & FORM_CODES, report["skipped"]
    other = flow.plugin(next(s for s in SIGNATURES if s != signature))
    if other.code == 0 and not other.report["rewritten"]:
        assert {s["code"] for s in other.report["skipped"]} == codes, other.report["skipped"]


@pytest.mark.parametrize(("case", "signature"), _params("test_validate_plugin_against_the_original", extras=SIGNATURES))
def test_validate_plugin_against_the_original(flows, case: str, signature: str) -> None:
    flow = flows(case)
    plugin = flow.plugin(signature)
    if _refused_by_the_signature(plugin):
        _assert_the_other_signature_swaps(flow, signature, plugin)
        return
    assert plugin.code == 0, plugin.why()
    if not plugin.report["rewritten"]:  # exit 0 and nothing swapped: every site refused for what it is
        _assert_site_refusals(flow, signature, plugin.report)
        return
    step = flow.validate(plugin.output, flow.original)
    assert step.code == 0, step.why() + step.report.get("summary", "")
    _assert_not_vacuous(step)


@pytest.mark.parametrize("case", _params("test_validate_dynamic_against_the_original"))
def test_validate_dynamic_against_the_original(flows, case: str) -> None:
    flow = flows(case)
    dynamic = flow.dynamic()
    assert dynamic.code == 0, dynamic.why()
    step = flow.validate(dynamic.output, flow.original)
    assert step.code == 0, step.why() + step.report.get("summary", "")
    _assert_not_vacuous(step)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "which"), _params("test_validate_against_onnx_reference", ONNX_REFERENCE_CASES, ("dynamic", "plugin"))
)
def test_validate_against_onnx_reference(flows, case: str, which: str) -> None:
    flow = flows(case)
    if which == "dynamic":
        made = flow.dynamic()
    else:  # the signature that swaps something (sizes-driven sites need size-tensor)
        made = flow.plugin("scales")
        if _refused_by_the_signature(made) or (made.code == 0 and not made.report["rewritten"]):
            made = flow.plugin("size-tensor")
    assert made.code == 0, made.why()
    step = flow.validate(made.output, "onnx-reference")
    assert step.code == 0, step.why() + step.report.get("summary", "")
    _assert_not_vacuous(step)
