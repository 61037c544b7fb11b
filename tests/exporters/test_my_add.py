"""torch.ops.onnxtool.my_add (2 * a + b): values, broadcasting, autograd, opcheck, torch.export."""

from __future__ import annotations

import pytest
import torch

import exporters.ops as ops

ops.load()  # torch.ops.onnxtool.* is called directly below


def test_values() -> None:
    a = torch.tensor([1.0, -2.0, 3.5])
    b = torch.tensor([0.5, 4.0, -1.0])
    torch.testing.assert_close(ops.my_add(a, b), torch.tensor([2.5, 0.0, 6.0]), rtol=0, atol=0)


def test_broadcasting_and_promotion_follow_aten() -> None:
    a = torch.rand(2, 1, 4, dtype=torch.float32)
    b = torch.rand(3, 1, dtype=torch.float64)
    y = ops.my_add(a, b)
    assert y.shape == (2, 3, 4) and y.dtype == torch.float64
    torch.testing.assert_close(y, 2 * a + b, rtol=0, atol=0)


def test_mismatched_shapes_are_rejected() -> None:
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        ops.my_add(torch.rand(3), torch.rand(4))


def test_gradients() -> None:
    a = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.rand(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ops.my_add, (a, b))
    ops.my_add(a, b).sum().backward()
    torch.testing.assert_close(a.grad, torch.full_like(a, 2.0))
    torch.testing.assert_close(b.grad, torch.full_like(b, 2.0))  # broadcast over 2 rows


@pytest.mark.parametrize(
    "args",
    [
        (torch.rand(3, 4), torch.rand(3, 4)),
        (torch.rand(2, 3, requires_grad=True), torch.rand(3, requires_grad=True)),
        (torch.rand(5, dtype=torch.float64), torch.rand(1)),
    ],
    ids=["same-shape", "grad-broadcast", "promote"],
)
def test_opcheck(args) -> None:
    results = torch.library.opcheck(torch.ops.onnxtool.my_add.default, args)  # raises on a failed check
    assert results and set(results.values()) == {"SUCCESS"}, results


def test_torch_export() -> None:
    class Model(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return ops.my_add(a, b).relu()

    a, b = torch.randn(2, 3), torch.randn(2, 3)
    exported = torch.export.export(Model(), (a, b))
    assert any(str(n.target) == "onnxtool.my_add.default" for n in exported.graph.nodes)
    torch.testing.assert_close(exported.module()(a, b), (2 * a + b).relu(), rtol=0, atol=0)
