"""set_factor: the reverse of make-dynamic-scale, at a chosen factor, on the tutorial's SRCNN.

SRCNN (exporters.models.StaticSRCNN, random weights, TorchScript opset 17; cubic x3) is made
dynamic in every layout make-dynamic-scale writes (scales, factor=True, factor, sizes) and
swapped to DynamicTRTResize in every input form (scales, sizes, size tensor computed from the
scales, size-tensor graph input). For each: baking the original factor gives back the original
bit for bit in ONNX Runtime (plugin forms: the plugin model fed its original value); baking 2
equals the dynamic model fed 2 (compared here with our own sessions, beside the built-in check);
running it again bakes nothing; validate drives the written model. Each refusal code is produced.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import pytest

from graphsurgeon_tools import make_dynamic_scale, set_factor, swap_plugin
from graphsurgeon_tools.errors import RefusedRequestError, UsageError
from graphsurgeon_tools.runtime.session import make_session

LAYOUTS = {"scales": {}, "factor-flag": {"factor": True}, "factor": {"layout": "factor"}, "sizes": {"layout": "sizes"}}
PLUGIN_FORMS = {
    "plugin-scales": {"signature": "scales"},
    "plugin-sizes": {"signature": "sizes"},
    "plugin-size-tensor": {"signature": "size-tensor"},
    "plugin-size-input": {"signature": "size-tensor", "size_input": "size"},
}
SIDES = ((1, 3, 7, 9), (2, 3, 16, 11))  # odd sides too: floor(in * f) is where layouts could part


@pytest.fixture(scope="module")
def srcnn(srcnn_exports: dict[str, Path]) -> onnx.ModelProto:
    return onnx.load(srcnn_exports["torchscript-17"])


@pytest.fixture(scope="module")
def dynamic(srcnn: onnx.ModelProto) -> dict[str, onnx.ModelProto]:
    models = {name: make_dynamic_scale(srcnn, check=False, **kw).model for name, kw in LAYOUTS.items()}
    models.update({name: swap_plugin(srcnn, check=False, **kw).model for name, kw in PLUGIN_FORMS.items()})
    return models


def _run(model: onnx.ModelProto, feeds: dict) -> np.ndarray:
    session = make_session(model)
    wanted = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]


def _x(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _fed(name: str, factor: float, x: np.ndarray) -> dict[str, np.ndarray]:
    """What the dynamic model of ``name`` is fed to compute ``factor`` (written out by hand, per form)."""
    h, w = (int(np.floor(np.float32(d) * np.float32(factor))) for d in x.shape[-2:])
    return {
        "scales": {"scales": np.array([1, 1, factor, factor], np.float32)},
        "factor-flag": {"scales": np.array([factor, factor], np.float32)},
        "factor": {"factor": np.array([factor, factor], np.int64)},
        "sizes": {"sizes": np.array([h, w], np.int64)},
        "plugin-scales": {"scales": np.array([1, 1, factor, factor], np.float32)},
        "plugin-sizes": {"sizes": np.array([h, w], np.int64)},
        "plugin-size-tensor": {"scales": np.array([1, 1, factor, factor], np.float32)},
        "plugin-size-input": {"size": np.zeros((1, 1, h, w), np.float32)},
    }[name]


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_original_factor_round_trip_is_bit_identical(srcnn: onnx.ModelProto, dynamic: dict, name: str) -> None:
    # the sizes layout records no value (it depends on the input size): its factor is given
    result = set_factor(dynamic[name], every=3) if name == "sizes" else set_factor(dynamic[name], original=True)
    assert result.check.passed is True, result.check
    assert [i.name for i in result.model.graph.input] == ["input"]
    assert result.removed_inputs == [next(iter(_fed(name, 3, _x(SIDES[0]))))]
    assert [n.op_type for n in result.model.graph.node if n.op_type not in ("Conv", "Relu")] == ["Resize"]
    onnx.checker.check_model(result.model, full_check=True)
    for shape in SIDES:
        x = _x(shape)
        want = _run(srcnn, {"input": x})
        got = _run(result.model, {"input": x})
        assert want.shape == (shape[0], 3, shape[2] * 3, shape[3] * 3) and np.ptp(want) > 0
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", [*LAYOUTS, *PLUGIN_FORMS])
def test_factor_two_equals_the_dynamic_model_fed_two(dynamic: dict, name: str) -> None:
    result = set_factor(dynamic[name], sites={"/upsample/Resize": 2})
    assert result.check is not None and result.check.passed is True, result.check
    assert result.rewritten[0].scales == [1.0, 1.0, 2.0, 2.0] and result.rewritten[0].source == "named"
    assert len(result.model.graph.input) == 1
    for shape in SIDES:
        x = _x(shape, seed=1)
        want = _run(dynamic[name], {"input": x, **_fed(name, 2.0, x)})
        got = _run(result.model, {"input": x})
        assert got.shape == (shape[0], 3, shape[2] * 2, shape[3] * 2) and np.ptp(got) > 0
        np.testing.assert_array_equal(got, want)
    again = set_factor(result.model, every=2)  # idempotent: nothing dynamic is left
    assert not again.changed and again.model.SerializeToString() == result.model.SerializeToString()


@pytest.mark.parametrize("name", ["plugin-scales", "plugin-size-tensor"])
def test_plugin_original_equals_the_plugin_model_fed_its_record(dynamic: dict, name: str) -> None:
    result = set_factor(dynamic[name], original=True)
    assert result.check.passed is True
    node = next(n for n in result.model.graph.node if n.op_type == "DynamicTRTResize")
    assert onnx.numpy_helper.to_array(
        next(t for t in result.model.graph.initializer if t.name == node.input[1])
    ).tolist() == [1, 1, 3, 3]
    x = _x(SIDES[1])
    np.testing.assert_array_equal(
        _run(result.model, {"input": x}), _run(dynamic[name], {"input": x, **_fed(name, 3.0, x)})
    )


def test_sites_by_input_name_and_per_axis_factor(dynamic: dict) -> None:
    result = set_factor(dynamic["scales"], sites={"scales": (2, 3)})
    assert result.rewritten[0].scales == [1.0, 1.0, 2.0, 3.0] and result.check.passed is True
    x = _x(SIDES[0])
    assert _run(result.model, {"input": x}).shape == (1, 3, 14, 27)
    record = {p.key: json.loads(p.value) for p in result.model.metadata_props}.get("onnxtool.original_values", {})
    assert "scales" not in record  # the record of the removed input went with it


def test_validate_drives_the_written_model(srcnn: onnx.ModelProto, dynamic: dict) -> None:
    from graphsurgeon_tools import validate

    baked = set_factor(dynamic["factor"], original=True).model
    report = validate(baked, srcnn, factors=[3], input_size=12, diagnose=False)
    assert report.passed, report.to_dict() if hasattr(report, "to_dict") else report


# -- refusals: one test per code ---------------------------------------------------------------------


def _codes(exc: pytest.ExceptionInfo) -> list[str]:
    return [s.code for s in exc.value.skipped]


def test_no_recorded_value(dynamic: dict) -> None:
    with pytest.raises(RefusedRequestError) as exc:
        set_factor(dynamic["sizes"], original=True)
    assert _codes(exc) == ["no-recorded-value"]


def test_factor_not_whole_for_integer_inputs(dynamic: dict) -> None:
    for name in ("factor", "sizes", "plugin-sizes", "plugin-size-input"):
        with pytest.raises(RefusedRequestError) as exc:
            set_factor(dynamic[name], every=1.5)
        assert _codes(exc) == ["factor-not-whole"], name
    assert set_factor(dynamic["scales"], every=1.5).check.passed is True  # float scales take any factor


def test_factor_arity(dynamic: dict) -> None:
    with pytest.raises(RefusedRequestError) as exc:
        set_factor(dynamic["scales"], every=(2, 2, 2))
    assert _codes(exc) == ["factor-arity"]


def test_no_dynamic_input(srcnn: onnx.ModelProto) -> None:
    with pytest.raises(RefusedRequestError) as exc:
        set_factor(srcnn, sites={"/upsample/Resize": 2})
    assert _codes(exc) == ["no-dynamic-input"]
    assert not set_factor(srcnn, every=2).changed  # nothing dynamic, nothing named: nothing to do


def _two_sites_one_input() -> onnx.ModelProto:
    return onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,4,4] X, float[4] s) => (float[1,2,?,?] A, float[1,2,?,?] B) {
  A = Resize <mode="nearest"> (X, , s)
  B = Resize <mode="linear"> (X, , s)
}""")


def test_shared_input_factors_differ_and_the_kept_input() -> None:
    model = _two_sites_one_input()
    names = [n.name for n in model.graph.node]
    result = set_factor(model, sites={"A": 2, "B": 3})  # nodes are unnamed: their outputs name them
    assert [s.code for s in result.skipped] == ["shared-input-factors-differ"] and names == ["", ""]
    assert [i.name for i in result.model.graph.input] == ["X", "s"]  # B still reads s
    assert result.check.passed is True  # s pinned to the baked value in both sessions
    both = set_factor(model, every=2)
    assert both.removed_inputs == ["s"] and both.check.passed is True


def test_rank_unknown() -> None:
    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[16] V, int64[?] shape, float[4] s) => (float[?,?,?,?] Y) {
  X = Reshape (V, shape)
  Y = Resize <mode="nearest"> (X, , s)
}""")  # X's rank is whatever `shape`'s length is at run time
    with pytest.raises(RefusedRequestError) as exc:
        set_factor(model, every=2, check=False)
    assert _codes(exc) == ["rank-unknown"]


def test_usage_errors(dynamic: dict) -> None:
    with pytest.raises(UsageError, match="sites=, every= or original=True"):
        set_factor(dynamic["scales"])
    with pytest.raises(UsageError, match="matches no"):
        set_factor(dynamic["scales"], sites={"nowhere": 2})
    with pytest.raises(UsageError, match="positive finite"):
        set_factor(dynamic["scales"], every=0)


def test_real_model_round_trip(ppocr_det_path: Path) -> None:
    """PaddleOCR's PP-OCRv4 detector (paddle2onnx, shipped weights): six FPN Resize sites made dynamic
    and baked back at their recorded values; every site output and the model output are compared."""
    original = onnx.load(ppocr_det_path)
    dynamic_model = make_dynamic_scale(original, check=False).model
    result = set_factor(dynamic_model, original=True)
    assert len(result.rewritten) == 6 and sorted(result.removed_inputs) == [f"scales_{i}" for i in range(6)]
    assert [i.name for i in result.model.graph.input] == [i.name for i in original.graph.input]
    assert result.check.passed is True and len(result.check.sites) == 6
    assert not any(site.vacuous for site in result.check.sites)
    name = original.graph.input[0].name
    x = _x((1, 3, 64, 96), seed=2)
    np.testing.assert_array_equal(_run(result.model, {name: x}), _run(original, {name: x}))
    # x2 everywhere breaks the FPN's Add of maps of different sizes: the input model itself cannot run
    # there, and the check says so instead of passing
    other = set_factor(dynamic_model, every=2)
    assert other.check.passed is None and "does not run in ONNX Runtime" in other.check.skipped


def test_the_check_makes_one_session_per_model(dynamic: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphsurgeon_tools.runtime import session

    made = []
    real = session.make_session
    monkeypatch.setattr(session, "make_session", lambda model, **kw: made.append(model) or real(model, **kw))
    result = set_factor(dynamic["plugin-sizes"], every=2)
    assert result.check.passed is True and len(made) == 2 and result.check.optimized == {}
