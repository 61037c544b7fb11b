"""Export a model using aten::asinh at opset 9, where ONNX has Asinh but the exporter has no symbolic.

1. The plain export fails and says why.
2. A symbolic function tells the TorchScript exporter how to write asinh with opset-9 ops.
3. The export then works; ONNX Runtime matches PyTorch, also for large negative inputs.
"""

import warnings

import numpy as np
import onnxruntime as ort
import torch
from asinh_model import make

warnings.filterwarnings("ignore", category=DeprecationWarning)  # the TorchScript exporter is deprecated
OPSET = 9
model = make()
x = torch.linspace(-3, 3, 48).reshape(1, 1, 6, 8)


def export(path):
    torch.onnx.export(
        model,
        (x,),
        path,
        dynamo=False,
        opset_version=OPSET,
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {2: "h", 3: "w"}, "y": {2: "h", 3: "w"}},
    )


try:
    export("never.onnx")  # torch's C++ side also prints its IR graph to stdout: expected
    raise SystemExit("expected the export to fail without a symbolic")
except torch.onnx.errors.UnsupportedOperatorError as exc:
    print(f"without a symbolic: {str(exc).splitlines()[0]}")


def asinh_symbolic(g, x):
    # asinh(x) = sign(x) * log(|x| + sqrt(x^2 + 1)). The textbook log(x + sqrt(x^2 + 1))
    # cancels catastrophically for large negative x (float32: -1e4 + 1e4 = 0, log(0) = -inf);
    # the odd-symmetric form never subtracts.
    one = g.op("Constant", value_t=torch.tensor(1.0))
    root = g.op("Sqrt", g.op("Add", g.op("Mul", x, x), one))
    return g.op("Mul", g.op("Sign", x), g.op("Log", g.op("Add", g.op("Abs", x), root)))


# "::asinh" is aten::asinh; the symbolic applies from opset 9 up (the exporter picks the
# newest registration not above the export opset). exporters.symbolic.register_asinh_symbolic()
# is this same function, packaged.
torch.onnx.register_custom_op_symbolic("::asinh", asinh_symbolic, OPSET)
export("asinh_opset9.onnx")
print("with the symbolic: wrote asinh_opset9.onnx")

# Inputs worth testing: small values and the far tails, where a careless formula breaks.
wide = np.concatenate([np.linspace(-1e4, 1e4, 400), np.linspace(-1, 1, 400)]).astype(np.float32)
np.save("wide_range.npy", wide.reshape(1, 1, 20, 40))
session = ort.InferenceSession("asinh_opset9.onnx", providers=["CPUExecutionProvider"])
(y,) = session.run(None, {"x": np.load("wide_range.npy")})
with torch.no_grad():
    expected = model(torch.from_numpy(np.load("wide_range.npy"))).numpy()
print(f"ONNX Runtime vs PyTorch on [-1e4, 1e4]: max |diff| {np.abs(y - expected).max():.2g}")
assert np.allclose(y, expected, rtol=1e-5, atol=1e-6)
