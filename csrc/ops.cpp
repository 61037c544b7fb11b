// Schemas of the onnxtool C++ ops. Kernels live in one file per backend
// (resize_cpu.cpp, my_add_cpu.cpp) and register with TORCH_LIBRARY_IMPL.
//
// Keyword names and defaults of resize are those of the ONNX Resize
// attributes (opset 19), so that exporters can map them one to one. There
// is no `axes` / `sizes` / `keep_aspect_ratio_policy`: scales are full rank
// (one entry per input dimension), which is exactly what
// torch.nn.functional.interpolate cannot take as a runtime tensor.
// Autograd: resize is declared non-differentiable (an Autograd fallthrough in
// resize_cpu.cpp); my_add's exact backward is registered from Python
// (exporters/ops.py, torch.library.register_autograd).
#include <torch/library.h>

TORCH_LIBRARY(onnxtool, m) {
  m.def(
      "resize(Tensor X, Tensor scales, *, str mode=\"nearest\", "
      "str coordinate_transformation_mode=\"half_pixel\", float cubic_coeff_a=-0.75, "
      "bool exclude_outside=False, str nearest_mode=\"round_prefer_floor\", "
      "float extrapolation_value=0.0, Tensor? roi=None, bool antialias=False) -> Tensor");
  m.def("my_add(Tensor a, Tensor b) -> Tensor");
}
