// CPU kernel of onnxtool::resize: ONNX Resize (opset 19) with runtime scales.
//
// The arithmetic and the passes are resize_kernel.h, shared with the ONNX
// Runtime custom op (ort/dynamic_trt_resize.cpp); this file only checks the
// tensors, allocates the output and maps torch's threads onto the kernel.
//
// Compiled with -O3 and no -march: only baseline x86-64 SSE2 is assumed,
// so a cached build stays valid if the checkout moves to another machine.
// Work is split by parallel.h's pool over torch's thread count; large
// outputs reuse freed buffers (output_cache.h). float16/bfloat16 are computed
// in float32 and rounded once at the end (as ONNX Runtime does); uint8/int8/int32 with
// ORT's integer arithmetic (resize_ort.h). Non-differentiable (see the end).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "output_cache.h"
#include "parallel.h"
#include "resize_kernel.h"

namespace onnxtool {
namespace {

// torch.set_num_threads' count, through the revocable pool (parallel.h says why).
class TorchExecutor final : public Executor {
 public:
  int64_t threads() const override { return at::get_num_threads(); }
  void for_chunks(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& f,
                  int64_t max_threads) const override {
    if (n <= 0) return;
    const int64_t threads = std::min<int64_t>(at::get_num_threads(), max_threads);
    if (threads <= 1 || at::in_parallel_region()) {
      f(0, n);
      return;
    }
    RevocablePool::instance().run(n, chunk, threads, f);
  }
};

at::Tensor resize_cpu(const at::Tensor& X, const at::Tensor& scales, c10::string_view mode,
                      c10::string_view coordinate_transformation_mode, double cubic_coeff_a,
                      bool exclude_outside, c10::string_view nearest_mode,
                      double extrapolation_value, const std::optional<at::Tensor>& roi,
                      bool antialias) {
  ResizeAttrs a;
  const std::string bad_attr = parse_attrs(
      std::string_view(mode.data(), mode.size()),
      std::string_view(coordinate_transformation_mode.data(), coordinate_transformation_mode.size()),
      std::string_view(nearest_mode.data(), nearest_mode.size()), cubic_coeff_a, exclude_outside,
      extrapolation_value, antialias, &a);
  TORCH_CHECK(bad_attr.empty(), bad_attr);

  const auto xt = X.scalar_type();
  const bool integer = xt == at::kByte || xt == at::kChar || xt == at::kInt;
  TORCH_CHECK(xt == at::kFloat || xt == at::kDouble || xt == at::kHalf || xt == at::kBFloat16 || integer,
              "X must be float32, float64, float16, bfloat16, uint8, int8 or int32, got ", xt);
  // ONNX Runtime cannot run these either, so there is no arithmetic to match.
  TORCH_CHECK(!(integer && a.mode == Mode::kCubic),
              "mode 'cubic' is not supported on integer X (", xt, "): ONNX Runtime's Resize cannot run it");
  TORCH_CHECK(!(integer && a.antialias), "antialias is not supported on integer X (", xt, ")");
  const int64_t rank = X.dim();
  TORCH_CHECK(rank >= 1, "X must have at least one dimension, got a 0-D tensor");
  TORCH_CHECK(at::isFloatingType(scales.scalar_type()),
              "scales must be a floating-point tensor (float32 as in ONNX), got ",
              scales.scalar_type());
  TORCH_CHECK(scales.dim() == 1, "scales must be a 1-D tensor, got ", scales.dim(), "-D");
  TORCH_CHECK(scales.numel() == rank, "scales must have one entry per input dimension (", rank,
              "), got ", scales.numel());
  const at::Tensor sc = scales.to(at::kCPU, at::kDouble).contiguous();

  at::Tensor roi_d;
  bool roi_single = true;
  if (a.coord == CoordMode::kTfCropAndResize) {
    TORCH_CHECK(roi.has_value() && roi->defined() && roi->numel() > 0,
                "roi is required when coordinate_transformation_mode is 'tf_crop_and_resize' "
                "(2 * rank = ",
                2 * rank, " entries: starts then ends)");
    TORCH_CHECK(at::isFloatingType(roi->scalar_type()),
                "roi must be a floating-point tensor, got ", roi->scalar_type());
    TORCH_CHECK(roi->dim() == 1 && roi->numel() == 2 * rank,
                "roi must be a 1-D tensor with 2 * rank (", 2 * rank,
                ") entries [starts..., ends...], got shape ", roi->sizes());
    roi_single = roi->scalar_type() != at::kDouble;
    roi_d = roi->to(at::kCPU, at::kDouble).contiguous();
  }

  ResizePlan plan;
  const std::string bad_plan =
      make_plan(X.sizes().vec(), sc.const_data_ptr<double>(),
                roi_d.defined() ? roi_d.const_data_ptr<double>() : nullptr, roi_single, a, &plan);
  TORCH_CHECK(bad_plan.empty(), bad_plan);

  if (X.numel() == 0 || plan.out_numel == 0) return at::empty(plan.out_shape, X.options());
  if (plan.identity) return X.clone(at::MemoryFormat::Contiguous);

  const bool reduced = xt == at::kHalf || xt == at::kBFloat16;
  const at::Tensor x = (reduced ? X.to(at::kFloat) : X).contiguous();
  at::Tensor y = empty_output(plan.out_shape, x.scalar_type());
  const TorchExecutor exec;
  switch (x.scalar_type()) {
    case at::kDouble:
      run_plan<double>(plan, x.const_data_ptr<double>(), y.mutable_data_ptr<double>(), exec);
      break;
    case at::kByte:
      run_plan<uint8_t>(plan, x.const_data_ptr<uint8_t>(), y.mutable_data_ptr<uint8_t>(), exec);
      break;
    case at::kChar:
      run_plan<int8_t>(plan, x.const_data_ptr<int8_t>(), y.mutable_data_ptr<int8_t>(), exec);
      break;
    case at::kInt:
      run_plan<int32_t>(plan, x.const_data_ptr<int32_t>(), y.mutable_data_ptr<int32_t>(), exec);
      break;
    default:
      // Half types: ORT's float expression, rounded once (exact blend, as ORT computes them).
      run_plan<float>(plan, x.const_data_ptr<float>(), y.mutable_data_ptr<float>(), exec, reduced);
  }
  return reduced ? y.to(xt) : y;
}

}  // namespace
}  // namespace onnxtool

TORCH_LIBRARY_IMPL(onnxtool, CPU, m) { m.impl("resize", &onnxtool::resize_cpu); }

// Declared non-differentiable, as PyTorch recommends for such ops: autograd
// passes straight through to the CPU kernel and the output does not require
// grad (instead of the deprecated "not implemented" fallback that warns).
TORCH_LIBRARY_IMPL(onnxtool, Autograd, m) {
  m.impl("resize", torch::CppFunction::makeFallthrough());
}
