"""cli._app.emit: the --json report is the report as JSON data in one walk (flags, printable text,
finite numbers), and a text renderer is handed only what it reads."""

from __future__ import annotations

import contextlib
import enum
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsurgeon_tools.cli._app import _json_default, emit
from graphsurgeon_tools.cli.vocabulary import report_to_flags
from graphsurgeon_tools.io.names import printable
from graphsurgeon_tools.refusal import Fix


class _Level(enum.IntEnum):
    HIGH = 3


class _Entry:
    def to_dict(self) -> dict[str, Any]:
        return {"path": Path("/models/check=1/m.onnx"), "spread": float("nan"), "shape": (1, 2)}


def _by_round_trip(report: dict[str, Any]) -> str:
    """The JSON by its definition: json's own conversion, read back, non-finite numbers as text."""

    def finite(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        if isinstance(value, dict):
            return {key: finite(item) for key, item in value.items()}
        if isinstance(value, list):
            return [finite(item) for item in value]
        return value

    data = json.loads(json.dumps(report_to_flags(report, printable), indent=2, default=_json_default))
    return json.dumps(finite(data), indent=2, allow_nan=False) + "\n"


def _tricky_report() -> dict[str, Any]:
    shared = [1, "shared=True needs equal scales"]
    return {
        "numbers": [1.5, float("nan"), float("inf"), -float("inf"), -0.0, 10**30, np.float64(0.1), np.float32(0.25)],
        "numpy": [np.int64(7), np.bool_(True), np.array([[1.0, np.nan], [3.0, 4.0]])],
        "tuples": (1, ("x", "from_sizes=True")),
        "sets": {3},
        "level": _Level.HIGH,
        "path": Path("/tmp/caf\u00e9/\udcff.onnx"),
        "text": "caf\u00e9 \udcff",
        "k\u00e9y": 1,
        "entry": _Entry(),
        "empty": [{}, []],
        1: "an int key",
        2.5: "a float key",
        float("nan"): "a NaN key",
        False: "a bool key",
        None: "a None key",
        "1": "the same key as 1, later",
        "skipped": [
            {
                "node": "r",
                "code": "sizes-driven",
                "reason": "use from_sizes=True",
                "fix": Fix("make_dynamic_scale", (("from_sizes", True),)).to_dict(),
            }
        ],
        "once": shared,
        "twice": shared,
    }


def test_the_json_report_is_the_report_through_json_with_flags_and_finite_numbers(capsys) -> None:
    report = _tricky_report()
    emit(report, as_json=True, human=lambda _: "")
    out = capsys.readouterr().out
    assert out == _by_round_trip(report)
    data = json.loads(out)
    assert data["numbers"][1:4] == ["nan", "inf", "-inf"] and data["entry"]["spread"] == "nan"
    assert data["skipped"][0]["reason"] == "use --from-sizes" and data["skipped"][0]["hint"]
    assert data["numpy"][0] == 7 and data["numpy"][2][0][1] == "nan" and data["level"] == 3
    assert data["1"] == "the same key as 1, later" and data["NaN"] == "a NaN key" and data["false"] == "a bool key"


_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None, blacklist_categories=()), max_size=8)
    | st.sampled_from(["shared=True", "nodes=['a', 'b']", "check=False skips", "x=1"])
)
_KEYS = st.text(max_size=4) | st.integers(-3, 3) | st.floats(allow_nan=True) | st.sampled_from([True, None])
_REPORTS = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_KEYS, inner, max_size=4)
        | st.fixed_dictionaries({"code": st.just("c"), "fix": st.just({"call": "swap_plugin"})})
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_REPORTS)
def test_the_json_writer_equals_the_round_trip_on_any_report(report: Any) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        emit({"report": report}, as_json=True, human=lambda _: "")
    assert out.getvalue() == _by_round_trip({"report": report})


@pytest.mark.parametrize("report", [{"k": object()}, {(1, 2): 1}, {np.int64(1): 2}])
def test_what_json_cannot_write_fails_as_json_fails(report: dict[Any, Any]) -> None:
    with pytest.raises(TypeError) as ours:
        emit(report, as_json=True, human=lambda _: "")
    with pytest.raises(TypeError) as theirs:
        _by_round_trip(report)
    assert str(ours.value) == str(theirs.value)


def test_a_renderer_is_handed_only_what_it_reads_and_the_json_keeps_everything(capsys) -> None:
    report = {
        "rewritten": [{"node": "a", "note": "shared=True", "layouts": {"x": 1}}, {"node": "b", "layouts": {}}],
        "declared_inputs": [{"name": "scales"}],
        "notes": ["check=False"],
    }
    seen: list[dict[str, Any]] = []

    def human(shown: dict[str, Any]) -> str:
        seen.append(shown)
        return "\n".join(site["node"] for site in shown["rewritten"])

    emit(report, as_json=False, human=human, unread=("declared_inputs", "rewritten.layouts"))
    assert capsys.readouterr().out == "a\nb\n"
    assert seen == [{"rewritten": [{"node": "a", "note": "--shared"}, {"node": "b"}], "notes": ["--no-check"]}]
    with pytest.raises(KeyError):  # a renderer reading what it declared unread fails loudly
        emit(report, as_json=False, human=lambda shown: shown["declared_inputs"], unread=("declared_inputs",))
    emit(report, as_json=True, human=human, unread=("declared_inputs", "rewritten.layouts"))
    data = json.loads(capsys.readouterr().out)
    assert data["declared_inputs"] == [{"name": "scales"}] and data["rewritten"][0]["layouts"] == {"x": 1}
