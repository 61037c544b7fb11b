"""The SRCNN family from the PyTorch -> ONNX super-resolution tutorial.

All variants take N x 3 x H x W images (dynamic batch, height and width) and
upscale them before three convolutions.
"""

from __future__ import annotations

import torch
from torch import nn


class StaticSRCNN(nn.Module):
    """The model a user starts from: ``nn.Upsample(scale_factor=3, mode="bicubic")``.

    Exported normally, its scale factor is baked into the ONNX graph as a constant.
    """

    def __init__(self, upscale_factor: float = 3.0) -> None:
        super().__init__()
        self.upsample = nn.Upsample(scale_factor=upscale_factor, mode="bicubic", align_corners=False)
        self.conv1 = nn.Conv2d(3, 64, kernel_size=9, padding=4)
        self.conv2 = nn.Conv2d(64, 32, kernel_size=1, padding=0)
        self.conv3 = nn.Conv2d(32, 3, kernel_size=5, padding=2)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.upsample(x)
        out = self.relu(self.conv1(x))
        out = self.relu(self.conv2(out))
        return self.conv3(out)
