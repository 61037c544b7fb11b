// CPU kernel of onnxtool::my_add: 2 * a + b (the tutorial's first C++ op).
// Broadcasting and type promotion are those of ATen's mul/add.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace onnxtool {
namespace {

at::Tensor my_add_cpu(const at::Tensor& a, const at::Tensor& b) {
  return at::add(at::mul(a, 2), b);
}

}  // namespace
}  // namespace onnxtool

TORCH_LIBRARY_IMPL(onnxtool, CPU, m) { m.impl("my_add", &onnxtool::my_add_cpu); }
