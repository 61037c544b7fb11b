"""The built-in check's cost: at most ONE ONNX Runtime session per model on the default path.

Every real session ORT builds is counted where ORT builds it
(``InferenceSession._create_inference_session``, which every session class goes through: the
plain CPU session, make_session's plugin session), and told apart by the model it was built
from (its graph inputs and node types: the two models of a check differ there; the outputs the
check exposes do not count). Real models, real sessions, real plugin kernel; each check must
still pass. The report says which levels ran and which sessions were opened, and asking for
the optimized-level figure (``optimized_figure=True``) adds exactly one session per model at
``ORT_ENABLE_ALL`` (the CLI's report of it: tests/cli/test_check_cost_cli.py). A check that
compares more than once (seeds for If branches, an intermediate step measured against the user's
model) reuses each model's session: a step is a third model with one session of its own.
"""

from __future__ import annotations

from collections import Counter

import golden
import onnx
import onnx.parser
import pytest
from hostile import nested
from onnxruntime.capi import onnxruntime_inference_collection as ort_collection

from graphsurgeon_tools import make_dynamic_scale, set_factor, swap_plugin

EXACT = "ORT_ENABLE_EXTENDED"


def _fingerprint(session: object) -> tuple:
    """The model a session was built from, up to the outputs the check adds: inputs and op types."""
    blob, path = session._model_bytes, session._model_path  # type: ignore[attr-defined]
    model = onnx.load(path) if blob is None else onnx.ModelProto.FromString(blob)
    initializers = {t.name for t in model.graph.initializer}
    return (
        tuple(sorted(i.name for i in model.graph.input if i.name not in initializers)),
        tuple(n.op_type for n in model.graph.node),
    )


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts every ORT session built, per model (see :func:`_fingerprint`)."""
    built: Counter = Counter()
    real = ort_collection.InferenceSession._create_inference_session

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built[_fingerprint(self)] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ort_collection.InferenceSession, "_create_inference_session", counting)
    return built


def _qdq_model() -> onnx.ModelProto:
    """x -> Q -> DQ -> Resize(nearest x2) -> Q: a quantized site (compared at ORT_ENABLE_BASIC)."""
    return onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4,8,8] x) => (int8[1,4,16,16] y)
    <float s = {0.05}, int8 z = {3}, float s2 = {0.05}, int8 z2 = {3}, float[4] k = {1.0, 1.0, 2.0, 2.0}> {
        xq = QuantizeLinear(x, s, z)
        xd = DequantizeLinear(xq, s, z)
        r = Resize<mode = "nearest">(xd, , k)
        y = QuantizeLinear(r, s2, z2)
    }""")


def _assert_one_each(check, sessions: Counter, level: str = EXACT) -> None:
    assert check.passed is True, check.summary
    assert len(sessions) == 2 and set(sessions.values()) == {1}, sessions  # two models, one session each
    report = check.to_dict()
    assert report["levels"] == [level] and report["optimized"] == {}
    assert report["sessions"] == [
        {"model": "reference", "level": level, "reused": False},
        {"model": "candidate", "level": level, "reused": False},
    ]


def test_make_dynamic_scale_checks_with_one_session_per_model(sessions: Counter) -> None:
    result = make_dynamic_scale(golden.resize_model(13, mode="linear"))
    _assert_one_each(result.check, sessions)


@pytest.mark.parametrize("signature", ["scales", "sizes"])
def test_swap_plugin_checks_with_one_session_per_model(sessions: Counter, signature: str) -> None:
    result = swap_plugin(golden.resize_model(13, mode="linear"), signature=signature)
    assert [s.op_type_after for s in result.rewritten] == ["DynamicTRTResize"]
    _assert_one_each(result.check, sessions)


def test_swap_plugin_reverse_checks_with_one_session_per_model(sessions: Counter) -> None:
    plugin = swap_plugin(golden.resize_model(13, mode="linear"), check=False).model
    assert not sessions
    result = swap_plugin(plugin, reverse=True)
    _assert_one_each(result.check, sessions)


def test_swap_plugin_on_a_quantized_site_checks_with_one_session_per_model(sessions: Counter) -> None:
    result = swap_plugin(_qdq_model())
    _assert_one_each(result.check, sessions, level="ORT_ENABLE_BASIC")
    assert "the fused difference is not measured" in result.check.figures["qdq"]["text"]


def _sizes_past_inference() -> onnx.ModelProto:
    """Symbolic H, W reach the Resize through a float Cast of its own shape: shape inference cannot
    say X's dims there, so swap-plugin's sizes check runs the original once to learn them."""
    return onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,H,W] x) => (float[1,3,?,?] y)
    <int64[1] s0 = {2}, int64[1] e0 = {4}, int64[2] lead = {1, 3}, float[4] k = {1.0, 1.0, 2.0, 2.0}> {
        sh = Shape(x)
        hw = Slice(sh, s0, e0)
        hwf = Cast<to = 1>(hw)
        hwi = Cast<to = 7>(hwf)
        shape = Concat<axis = 0>(lead, hwi)
        r = Reshape(x, shape)
        y = Resize<mode = "nearest">(r, , k)
    }""")


def test_swap_plugin_sizes_learned_from_a_run_reuse_that_session(sessions: Counter) -> None:
    result = swap_plugin(_sizes_past_inference(), signature="sizes")
    check = result.check
    assert check.passed is True, check.summary
    assert len(sessions) == 2 and set(sessions.values()) == {1}, sessions
    assert check.sessions == [
        {"model": "reference", "level": EXACT, "reused": False, "for": "the original output sizes"},
        {"model": "reference", "level": EXACT, "reused": True},
        {"model": "candidate", "level": EXACT, "reused": False},
    ]


def test_set_factor_checks_with_one_session_per_model(sessions: Counter) -> None:
    dynamic = make_dynamic_scale(golden.resize_model(13, mode="linear"), check=False).model
    assert not sessions
    result = set_factor(dynamic, every=3)
    _assert_one_each(result.check, sessions)


def test_the_optimized_figure_on_request_costs_one_more_session_per_model(sessions: Counter) -> None:
    result = swap_plugin(golden.resize_model(13, mode="linear"), optimized_figure=True)
    check = result.check
    assert check.passed is True and check.optimized["level"] == "ORT_ENABLE_ALL"
    assert check.optimized["max_abs_diff"] is not None
    assert len(sessions) == 2 and set(sessions.values()) == {2}, sessions
    assert check.levels == [EXACT, "ORT_ENABLE_ALL"]
    assert not any(s["reused"] for s in check.sessions)
    assert sorted((s["model"], s["level"]) for s in check.sessions) == sorted(
        (model, level) for model in ("reference", "candidate") for level in (EXACT, "ORT_ENABLE_ALL")
    )


def test_the_seeds_for_other_if_branches_reuse_the_two_sessions(sessions: Counter) -> None:
    result = make_dynamic_scale(nested.if_model())
    assert result.check.passed is True and any("every branch ran" in n for n in result.notes)
    assert len(sessions) == 2 and set(sessions.values()) == {1}, sessions


@pytest.mark.parametrize("case", ["inline-functions", "relayout"])
def test_a_step_measured_against_the_users_model_reuses_its_session(sessions: Counter, case: str) -> None:
    if case == "inline-functions":
        model, keywords = nested.function_model(), {"inline_functions": True}
    else:
        model = make_dynamic_scale(golden.resize_model(13, mode="linear"), check=False).model
        keywords = {"layout": "sizes"}
    assert not sessions
    result = make_dynamic_scale(model, **keywords)
    check = result.check
    assert check.passed is True and [step["step"] for step in check.steps] == [case]
    assert check.steps[0]["passed"] is True
    # the user's model, the written model, the step's model: one session each
    assert len(sessions) == 3 and set(sessions.values()) == {1}, sessions
    assert check.steps[0]["sessions"] == [
        {"model": "reference", "level": EXACT, "reused": True},
        {"model": "candidate", "level": EXACT, "reused": False},
    ]
