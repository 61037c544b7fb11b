"""Use onnxtool's C++ ops in your own module and export it through both torch exporters."""

import torch
from torch import nn

import exporters.ops  # its wrappers load (and on first use build) the C++ library: torch.ops.onnxtool.*
from exporters import export
from graphsurgeon_tools import validate


class TinyUpscaler(nn.Module):
    """Bilinear upsampling by a runtime factor, then a learned correction added twice over."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 3, kernel_size=3, padding=1)

    def forward(self, x, scales):
        # unscaled_axes=(0, 1): batch and channels keep their size, which lets torch.export
        # (the dynamo exporter) keep them static; the output H, W depend on the scale values.
        up = exporters.ops.resize(
            x, scales, mode="linear", coordinate_transformation_mode="half_pixel", unscaled_axes=(0, 1)
        )
        return exporters.ops.my_add(self.conv(up), up)  # my_add(a, b) = 2 * a + b


model = TinyUpscaler().eval()
example = (torch.rand(1, 3, 16, 16), torch.tensor([1.0, 1.0, 2.0, 2.0]))
for exporter in ("torchscript", "dynamo"):
    path = f"tiny_{exporter}.onnx"
    result = export(model, example, path, exporter=exporter, input_names=["x", "scales"], output_names=["y"])
    print(f"{exporter:>11}: {path} opset {result.opset}, ops {result.op_types}")
    # the eager module is the reference; it takes scales as its second argument
    report = validate(path, model, factors=[1.5, 2, 3], scales_argument=True)
    print(f"{'':>11}  {report.summary_line()}")
    report.raise_if_failed()
