"""The 3-D, 1-D and run-time-sizes torch models of test_ndim_real_models.py, seeded (random weights).

Each callable returns the user's unmodified ``nn.Module`` in eval mode; validate reads them as
``python:tests/realmodels/ndim_nets.py:NAME`` (the module's interpolate calls routed through the
C++ op), and the test exports the same modules. Requires torch; the MONAI nets need monai.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

#: name -> (example input shape, dynamic axes of the input for the exporters)
EXAMPLES = {
    "segresnet3d": ((1, 1, 16, 16, 16), {}),
    "basicunet1d": ((1, 1, 32), {}),
    "recompute": ((1, 3, 12, 10), {2: "h", 3: "w"}),
}


def segresnet3d() -> torch.nn.Module:
    """MONAI SegResNet on (N, C, D, H, W): one trilinear Resize (upsample_mode="nontrainable")."""
    from monai.networks.nets import SegResNet

    torch.manual_seed(0)
    return SegResNet(
        spatial_dims=3,
        init_filters=4,
        in_channels=1,
        out_channels=2,
        blocks_down=(1, 1),
        blocks_up=(1,),
        upsample_mode="nontrainable",
        norm=("GROUP", {"num_groups": 2}),
    ).eval()


def basicunet1d() -> torch.nn.Module:
    """MONAI BasicUNet on (N, C, L): four linear align_corners Resizes (upsample="nontrainable")."""
    from monai.networks.nets import BasicUNet

    torch.manual_seed(0)
    return BasicUNet(
        spatial_dims=1, in_channels=1, out_channels=2, features=(4, 4, 4, 4, 4, 4), upsample="nontrainable"
    ).eval()


class Recompute(torch.nn.Module):
    """F.interpolate(scale_factor=2, recompute_scale_factor=True): run-time sizes floor(dim * 2) when
    exported with dynamic axes."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(
            self.conv(x), scale_factor=2.0, mode="bilinear", align_corners=False, recompute_scale_factor=True
        )


def recompute() -> torch.nn.Module:
    torch.manual_seed(0)
    return Recompute().eval()
