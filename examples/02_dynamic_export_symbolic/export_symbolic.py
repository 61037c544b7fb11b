"""The tutorial's dynamic export, written out: an autograd.Function whose symbolic emits Resize."""

import warnings

import torch
import torch.nn.functional as F
from torch import nn

from exporters.models import WEIGHTS  # the shipped SRCNN x3 weights (conv1, conv2, conv3)
from graphsurgeon_tools import validate

# The symbolic route exists only in the (deprecated) TorchScript exporter, which also warns
# that `tolist()` becomes a trace constant: true for `forward`, irrelevant since `symbolic`
# writes the node.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)


class NewInterpolate(torch.autograd.Function):
    @staticmethod
    def symbolic(g, x, scales):
        # Resize(X, roi, scales) with PyTorch's bicubic spelled as ONNX attributes.
        empty_roi = g.op("Constant", value_t=torch.tensor([], dtype=torch.float32))
        return g.op(
            "Resize",
            x,
            empty_roi,
            scales,
            mode_s="cubic",
            coordinate_transformation_mode_s="pytorch_half_pixel",
            cubic_coeff_a_f=-0.75,
            nearest_mode_s="floor",
        )

    @staticmethod
    def forward(ctx, x, scales):
        # Eager mode only: the exporter uses `symbolic` and never runs this.
        factors = [float(s) for s in scales.tolist()[-2:]]
        return F.interpolate(x, scale_factor=factors, mode="bicubic", align_corners=False)


class SRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=9, padding=4)
        self.conv2 = nn.Conv2d(64, 32, kernel_size=1, padding=0)
        self.conv3 = nn.Conv2d(32, 3, kernel_size=5, padding=2)
        self.relu = nn.ReLU()

    def forward(self, x, scales):
        x = NewInterpolate.apply(x, scales)
        return self.conv3(self.relu(self.conv2(self.relu(self.conv1(x)))))


model = SRCNN()
model.load_state_dict(torch.load(WEIGHTS, map_location="cpu", weights_only=True))
model.eval()

x = torch.rand(1, 3, 32, 32)
scales = torch.tensor([1.0, 1.0, 3.0, 3.0])
torch.onnx.export(
    model,
    (x, scales),
    "srcnn_symbolic.onnx",
    dynamo=False,
    opset_version=17,
    input_names=["input", "scales"],
    output_names=["output"],
    dynamic_axes={
        "input": {0: "batch", 2: "height", 3: "width"},
        "output": {0: "batch", 2: "out_height", 3: "out_width"},
    },
)
print("wrote srcnn_symbolic.onnx")

# The eager model is the reference: validate calls model(x, scales) at each factor.
# This module is written as model(x, scales): say so (a plain module would be routed instead).
report = validate("srcnn_symbolic.onnx", model, factors=[2, 3, 4], scales_argument=True)
for point in report.factors:
    out = point.outputs[0]
    print(f"x{point.factor:g}: {out.candidate_shape} max |diff| {out.max_abs_error:.2g} -> {point.status}")
print(report.summary_line())
report.raise_if_failed()  # CheckFailedError (exit code 1 in onnxtool) on a mismatch
