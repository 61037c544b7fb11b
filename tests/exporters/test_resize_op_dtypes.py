"""The torch op's dtype face: what it takes (every KERNEL_DTYPES entry, output of the same dtype) and
what it refuses with the reason (other dtypes, integer cubic, integer antialias). Numerics against
ONNX Runtime are tests/runtime/test_conformance_*.py."""

from __future__ import annotations

import pytest
import torch

from exporters import ops
from graphsurgeon_tools.resize.kernel_dtypes import KERNEL_DTYPES, kernel_dtype_problem


@pytest.mark.parametrize("name", sorted(KERNEL_DTYPES))
def test_every_table_dtype_runs_each_mode_it_lists(name: str) -> None:
    dtype = getattr(torch, name)
    x = (torch.arange(2 * 3 * 5) % 50).reshape(1, 2, 3, 5).to(dtype)
    for mode in ("nearest", "linear", "cubic"):
        if kernel_dtype_problem(name, mode, plugin=False):
            with pytest.raises(RuntimeError, match="not supported on integer"):
                ops.resize(x, torch.tensor([1.0, 1.0, 2.0, 1.5]), mode=mode)
            continue
        y = ops.resize(x, torch.tensor([1.0, 1.0, 2.0, 1.5]), mode=mode)
        assert y.dtype == dtype and tuple(y.shape) == (1, 2, 6, 7)
        assert y.to(torch.float64).abs().sum() > 0


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.int16])
def test_other_dtypes_are_refused_with_the_list(dtype: torch.dtype) -> None:
    with pytest.raises(RuntimeError, match="X must be float32, float64, float16, bfloat16, uint8, int8 or int32"):
        ops.resize(torch.zeros(1, 1, 2, 2, dtype=dtype), torch.tensor([1.0, 1.0, 2.0, 2.0]))


def test_integer_antialias_is_refused() -> None:
    with pytest.raises(RuntimeError, match="antialias is not supported on integer"):
        ops.resize(
            torch.zeros(1, 1, 4, 4, dtype=torch.uint8),
            torch.tensor([1.0, 1.0, 0.5, 0.5]),
            mode="linear",
            antialias=True,
        )


def test_uint8_linear_truncates_like_onnxruntime() -> None:
    # 0 and 255 blended 3:1 is 63.75: ORT casts its float32 blend, so 63 (not 64).
    x = torch.tensor([[0, 255]], dtype=torch.uint8)
    y = ops.resize(x, torch.tensor([1.0, 2.0]), mode="linear")
    assert y.tolist() == [[0, 63, 191, 255]]
