"""A model that uses torch.asinh: dynamic-range compression, as in astronomy and HDR imaging.

``make()`` is the factory ``onnxtool validate --reference python:asinh_model.py:make`` calls.
"""

import torch
from torch import nn


class AsinhStretch(nn.Module):
    """y = asinh(gain * x) / gain: linear near zero, logarithmic for large |x|, odd-symmetric."""

    def __init__(self, gain: float = 4.0):
        super().__init__()
        self.gain = gain

    def forward(self, x):
        return torch.asinh(self.gain * x) / self.gain


def make() -> nn.Module:
    return AsinhStretch().eval()
