"""graphsurgeon_tools.check.limits: the output-size guard the model-running checks call before ORT allocates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto

from graphsurgeon_tools.check.limits import (
    DEFAULT_MAX_OUTPUT_BYTES,
    ENV_VAR,
    check_output_size,
    format_bytes,
    max_output_bytes,
    resized_shape,
    tensor_nbytes,
)
from graphsurgeon_tools.errors import ExitCode, InvalidScalesError, ResourceLimitError, UsageError


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_default_is_one_gib_and_the_boundary_is_inclusive() -> None:
    assert max_output_bytes() == DEFAULT_MAX_OUTPUT_BYTES == 1 << 30
    # exactly 1 GiB of float32 passes, one more row does not
    assert check_output_size((1, 1, 16384, 16384), "float32") == 1 << 30
    with pytest.raises(ResourceLimitError) as info:
        check_output_size((1, 1, 16385, 16384), "float32", what="model.onnx: Resize 'up' at factor 4")
    message = str(info.value)
    assert "model.onnx: Resize 'up' at factor 4" in message and "1x1x16385x16384" in message
    assert "1 GiB" in message and ENV_VAR in message
    assert info.value.exit_code == ExitCode.INVALID_INPUT


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1048576", 1 << 20),
        ("1M", 1 << 20),
        ("1MiB", 1 << 20),
        ("2g", 2 << 30),
        ("512K", 512 << 10),
        (" 3 GB ", 3 << 30),
        ("0", None),
    ],
)
def test_environment_variable(raw: str, expected, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, raw)
    assert max_output_bytes() == expected


@pytest.mark.parametrize("raw", ["lots", "-5", "1.5G", "1 PB", "0x10"])
def test_malformed_environment_is_a_usage_error_naming_the_variable(raw: str, monkeypatch) -> None:
    monkeypatch.setenv(ENV_VAR, raw)
    with pytest.raises(UsageError, match=ENV_VAR):
        max_output_bytes()


def test_keyword_beats_environment_and_zero_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "1K")
    with pytest.raises(ResourceLimitError):
        check_output_size((1024,), "float32")
    assert check_output_size((1024,), "float32", limit=4096) == 4096
    assert check_output_size((10**6, 10**6), "float32", limit=0) == 4 * 10**12  # off: arithmetic only


def test_dtypes_from_numpy_strings_and_onnx_element_types() -> None:
    assert tensor_nbytes((2, 3), np.float16) == 12
    assert tensor_nbytes((2, 3), "float64") == 48
    assert tensor_nbytes((2, 3), TensorProto.INT8) == 6
    assert tensor_nbytes((2, 3), TensorProto.FLOAT) == 24
    with pytest.raises(ValueError):
        tensor_nbytes((2,), 12345)  # not an ONNX element type
    with pytest.raises(ValueError):
        tensor_nbytes((2, "N"), "float32")  # symbolic dims are the caller's to substitute
    with pytest.raises(ValueError):
        tensor_nbytes((2, -1), "float32")


def test_resized_shape_floors_like_onnx_resize() -> None:
    assert resized_shape((1, 3, 5, 7), (1.0, 1.0, 1.5, 0.5)) == (1, 3, 7, 3)
    assert resized_shape((1, 3, 224, 224), (1, 1, 3, 3)) == (1, 3, 672, 672)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.0, -2.0])
def test_resized_shape_refuses_nonsense_scales(bad: float) -> None:
    with pytest.raises(InvalidScalesError):
        resized_shape((1, 3, 8, 8), (1.0, 1.0, bad, 2.0))
    with pytest.raises(InvalidScalesError, match="3 entries for a rank-4"):
        resized_shape((1, 3, 8, 8), (1.0, 2.0, 2.0))


def test_absurd_factors_are_refused_without_overflow() -> None:
    # 1e300 x 1e300 is beyond float range: the guard must still say no, with a readable message.
    shape = resized_shape((1, 3, 8, 8), (1.0, 1.0, 1e300, 1e300))
    with pytest.raises(ResourceLimitError, match=r"8e\+300"):
        check_output_size(shape, "float32")
    shape = resized_shape((1, 3, 8, 8), (1.0, 1.0, 1e308, 1e308))
    assert math.isinf(shape[-1])
    with pytest.raises(ResourceLimitError, match="inf"):
        check_output_size(shape, "float32")


def test_format_bytes() -> None:
    assert format_bytes(0) == "0 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(1610612736) == "1.5 GiB"
    assert format_bytes(10**400) == "more than 1e308 bytes"
