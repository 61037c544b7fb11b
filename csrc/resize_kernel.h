// ONNX Resize (opset 19) on plain contiguous buffers: the ONE kernel behind
// both the PyTorch op (resize_cpu.cpp) and the ONNX Runtime custom op
// (ort/dynamic_trt_resize.cpp). No torch, no ONNX Runtime in here.
//
//   ResizeAttrs + parse_attrs(strings)  -> attributes, or the reason they are wrong
//   make_plan(in_shape, scales, roi)    -> output shape + per-axis gather tables,
//                                          or the reason the scales/roi are wrong
//   run_plan<T>(plan, src, dst, exec)   -> fills dst (out_numel elements)
//
// Strategy: the output shape is floor(in * scale) per axis, as in the ONNX
// reference implementation; one gather table per resized axis (resize_plan.h);
// then as few passes (resize_passes.h) as possible. Axes whose scale is 1 (and whose roi is the
// identity) are skipped at no cost.
//
//   nearest        : one pass whatever the rank: each output row copies one
//                    input row gathered along the last axis (repeated rows
//                    are copied from the previous output row).
//   linear / cubic : separable filtering. The last two axes (H, W) are one
//                    fused pass over blocks of output rows with a small
//                    cache-resident buffer (W then H when rows grow, H then
//                    W when they shrink: the gather runs on the smaller
//                    side). Any other resized axis is its own pass, with the
//                    tensor viewed as [outer, axis, inner]: each output row
//                    is a weighted sum of `taps` contiguous input rows, a
//                    unit-stride loop the compiler vectorises (omp simd).
//
// Arithmetic: ONNX Runtime's by default (ResizeAttrs::ort, resize_ort.h): float32
// coordinates, ORT's tie rules and integer output lengths; nearest is ORT's bit for bit,
// linear too through run_plan's `exact` (and always for integer T). antialias keeps the
// ONNX reference's double arithmetic.
//
// Requires: T is float, double, uint8, int8 or int32; src holds prod(in_shape) elements, dst
// out_numel; the two do not overlap. Threads come from the caller's Executor
// (torch's thread count, or ONNX Runtime's intra-op pool), which must run
// every chunk it is given exactly once. Does NOT allocate the output, convert
// float16 (callers compute in float32), or throw: errors are returned strings.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "resize_ort.h"
#include "resize_passes.h"
#include "resize_plan.h"

namespace onnxtool {

// A sanity bound, not a memory estimate: 2^31 elements is 8 GiB of float32,
// far beyond any resize a model does; a larger request is a wrong scale.
constexpr double kMaxOutputElements = 2147483648.0;

namespace detail {

template <typename V>
std::string list_str(const V* v, size_t n) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < n; ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

}  // namespace detail

// The ONNX attribute strings and numbers -> ResizeAttrs. Returns "" or what is wrong.
inline std::string parse_attrs(std::string_view mode, std::string_view coord,
                               std::string_view nearest, double cubic_coeff_a,
                               bool exclude_outside, double extrapolation_value, bool antialias,
                               ResizeAttrs* a) {
  if (mode == "nearest") a->mode = Mode::kNearest;
  else if (mode == "linear") a->mode = Mode::kLinear;
  else if (mode == "cubic") a->mode = Mode::kCubic;
  else return "mode must be one of 'nearest', 'linear', 'cubic', got '" + std::string(mode) + "'";

  if (coord == "half_pixel") a->coord = CoordMode::kHalfPixel;
  else if (coord == "pytorch_half_pixel") a->coord = CoordMode::kPytorchHalfPixel;
  else if (coord == "align_corners") a->coord = CoordMode::kAlignCorners;
  else if (coord == "asymmetric") a->coord = CoordMode::kAsymmetric;
  else if (coord == "half_pixel_symmetric") a->coord = CoordMode::kHalfPixelSymmetric;
  else if (coord == "tf_crop_and_resize") a->coord = CoordMode::kTfCropAndResize;
  else
    return "coordinate_transformation_mode must be one of 'half_pixel', 'pytorch_half_pixel', "
           "'align_corners', 'asymmetric', 'half_pixel_symmetric', 'tf_crop_and_resize', got '" +
           std::string(coord) + "'";

  if (nearest == "round_prefer_floor") a->nearest_mode = NearestMode::kRoundPreferFloor;
  else if (nearest == "round_prefer_ceil") a->nearest_mode = NearestMode::kRoundPreferCeil;
  else if (nearest == "floor") a->nearest_mode = NearestMode::kFloor;
  else if (nearest == "ceil") a->nearest_mode = NearestMode::kCeil;
  else
    return "nearest_mode must be one of 'round_prefer_floor', 'round_prefer_ceil', 'floor', "
           "'ceil', got '" + std::string(nearest) + "'";

  if (antialias && a->mode == Mode::kNearest)
    return "antialias is only defined for mode 'linear' and 'cubic', got mode 'nearest'";
  if (!std::isfinite(cubic_coeff_a)) {
    std::ostringstream os;
    os << "cubic_coeff_a must be finite, got " << cubic_coeff_a;
    return os.str();
  }
  a->cubic_coeff_a = cubic_coeff_a;
  a->exclude_outside = exclude_outside;
  a->extrapolation_value = extrapolation_value;
  a->antialias = antialias;
  return "";
}

struct ResizePlan {
  std::vector<int64_t> in_shape, out_shape;
  int64_t out_numel = 0;
  std::vector<AxisTable> tables;   // one per axis; empty where the axis is kept
  std::vector<bool> resized;
  bool identity = false;           // no axis changes: the output is a copy
  bool all_copies = false;         // nearest, every table a pure gather: one pass
  std::vector<int64_t> order;      // linear/cubic passes; -1 = the last two axes fused
  // ORT's one-expression bilinear/trilinear (resize_ort.h) over the last blend.size() axes,
  // when ORT itself would blend this shape that way; empty otherwise.
  std::vector<AxisTable> blend;
  int64_t blend_outer = 1;
  ResizeAttrs attrs;
};

// Output shape and tables. `scales` has one entry per axis; `roi` (2 * rank:
// starts then ends) is read only for tf_crop_and_resize and may be null
// otherwise; `roi_single` says it came as float32 (see AxisRoi).
// Returns "" or what is wrong with the scales / roi.
inline std::string make_plan(const std::vector<int64_t>& in_shape, const double* s,
                             const double* roi, bool roi_single, const ResizeAttrs& a,
                             ResizePlan* plan, const int64_t* sizes = nullptr) {
  // ORT has no arithmetic for antialias here (its own filter) nor for exclude_outside
  // outside cubic (it refuses the node): those keep the ONNX reference's.
  const bool ort = a.ort && !a.antialias && !(a.exclude_outside && a.mode != Mode::kCubic);
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  plan->in_shape = in_shape;
  plan->attrs = a;
  std::vector<double> roi_v;
  if (a.coord == CoordMode::kTfCropAndResize) {
    if (roi == nullptr) {
      std::ostringstream os;
      os << "roi is required when coordinate_transformation_mode is 'tf_crop_and_resize' "
            "(2 * rank = " << 2 * rank << " entries: starts then ends)";
      return os.str();
    }
    roi_v.assign(roi, roi + 2 * rank);
    for (int64_t i = 0; i < 2 * rank; ++i) {
      if (!std::isfinite(roi_v[i])) {
        std::ostringstream os;
        os << "roi[" << i << "] must be finite, got " << roi_v[i];
        return os.str();
      }
    }
  }

  std::vector<int64_t>& out_shape = plan->out_shape;
  out_shape.assign(rank, 0);
  double total = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (!(std::isfinite(s[i]) && s[i] > 0)) {
      std::ostringstream os;
      os << "scales[" << i << "] must be a finite number > 0, got " << s[i];
      return os.str();
    }
    const double o = sizes ? static_cast<double>(sizes[i]) : std::floor(s[i] * static_cast<double>(in_shape[i]));
    if (o > kMaxOutputElements) {
      std::ostringstream os;
      os << "scales[" << i << "] = " << s[i] << " would make dimension " << i << " of size "
         << in_shape[i] << " into " << o << " elements, over the limit of 2^31; check the scales";
      return os.str();
    }
    out_shape[i] = static_cast<int64_t>(o);
    total *= o;
  }
  if (total > kMaxOutputElements) {
    std::ostringstream os;
    os << "output shape " << detail::list_str(out_shape.data(), out_shape.size()) << " (scales "
       << detail::list_str(s, static_cast<size_t>(rank)) << " applied to "
       << detail::list_str(in_shape.data(), in_shape.size()) << ") would have " << total
       << " elements, over the limit of 2^31; check the scales";
    return os.str();
  }
  plan->out_numel = static_cast<int64_t>(total);
  plan->tables.assign(rank, AxisTable{});
  plan->resized.assign(rank, false);
  if (plan->out_numel == 0) return "";
  for (int64_t d : in_shape)
    if (d == 0) return "";

  // Axes that are the identity: the reference skips them with the same test.
  std::vector<int64_t> todo;
  for (int64_t i = 0; i < rank; ++i) {
    const double r0 = roi_v.empty() ? 0.0 : roi_v[i];
    const double r1 = roi_v.empty() ? 1.0 : roi_v[i + rank];
    // ORT: a float scale of exactly 1 is the identity, whatever the roi.
    const bool identity = ort ? static_cast<float>(s[i]) == 1.0f && out_shape[i] == in_shape[i]
                              : std::fabs(s[i] - 1.0) <= 1e-9 && out_shape[i] == in_shape[i] &&
                                    std::fabs(r0) <= 1e-9 && std::fabs(r1 - 1.0) <= 1e-9;
    if (identity) continue;
    plan->tables[i] = ort ? make_ort_axis_table(in_shape[i], out_shape[i], static_cast<float>(s[i]),
                                                static_cast<float>(r0), static_cast<float>(r1), a)
                          : make_axis_table(in_shape[i], out_shape[i], s[i], AxisRoi{r0, r1, roi_single}, a);
    plan->resized[i] = true;
    todo.push_back(i);
  }
  // ORT copies an output of the input's shape, whatever the scales: callers that state ORT's
  // sizes (the ORT library) get that; without sizes (the torch op, which torch's interpolate
  // routing relies on) every axis keeps its own scale's mapping.
  plan->identity = todo.empty() || (ort && sizes != nullptr && out_shape == in_shape);
  if (plan->identity) return "";

  bool all_copies = a.mode == Mode::kNearest;
  for (int64_t d : todo) all_copies = all_copies && plan->tables[d].pure_copy;
  plan->all_copies = all_copies;
  if (all_copies) return "";

  if (ort && a.mode == Mode::kLinear) {
    // The shapes ORT blends in one expression: bilinear on rank 2 or [1, 1, h, w], trilinear
    // on rank 3 or [1, 1, d, h, w] (its kernel's own dispatch).
    const bool lead_one = rank >= 4 && static_cast<float>(s[0]) == 1.0f && static_cast<float>(s[1]) == 1.0f;
    const int64_t window = rank == 2 || (rank == 4 && lead_one) ? 2 : rank == 3 || (rank == 5 && lead_one) ? 3 : 0;
    if (window) {
      for (int64_t d = 0; d < rank - window; ++d) plan->blend_outer *= in_shape[d];
      for (int64_t d = rank - window; d < rank; ++d) {
        const double r0 = roi_v.empty() ? 0.0 : roi_v[d];
        const double r1 = roi_v.empty() ? 1.0 : roi_v[d + rank];
        plan->blend.push_back(make_ort_axis_table(in_shape[d], out_shape[d], static_cast<float>(s[d]),
                                                  static_cast<float>(r0), static_cast<float>(r1), a));
      }
    }
  }

  // Passes: the last two axes fused when both change (entry -1), any other
  // axis on its own. Order: shrink first, grow last, so the intermediate
  // buffers stay small; among equal factors the later axis goes first.
  struct Pass {
    int64_t id;
    double growth;
  };
  std::vector<Pass> passes;
  const bool fuse = rank >= 2 && plan->resized[rank - 1] && plan->resized[rank - 2];
  for (int64_t d : todo) {
    if (fuse && d >= rank - 2) continue;
    passes.push_back({d, static_cast<double>(out_shape[d]) / static_cast<double>(in_shape[d])});
  }
  if (fuse) {
    passes.push_back({-1, static_cast<double>(out_shape[rank - 1]) * out_shape[rank - 2] /
                              (static_cast<double>(in_shape[rank - 1]) * in_shape[rank - 2])});
  }
  std::stable_sort(passes.begin(), passes.end(), [&](const Pass& p, const Pass& q) {
    if (p.growth != q.growth) return p.growth < q.growth;
    const int64_t pi = p.id < 0 ? rank : p.id, qi = q.id < 0 ? rank : q.id;
    return pi > qi;
  });
  for (const Pass& p : passes) plan->order.push_back(p.id);
  return "";
}

namespace detail {

template <typename T>
void run_nearest(const ResizePlan& plan, const T* src, T* dst, const Executor& exec) {
  const std::vector<int64_t>& in_shape = plan.in_shape;
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  std::vector<const AxisTable*> ptrs(rank, nullptr);
  for (int64_t d = 0; d < rank; ++d)
    if (plan.resized[d]) ptrs[d] = &plan.tables[d];
  if constexpr (std::is_same_v<T, float>) {
    bool only_last_two_x2 = rank >= 2;
    for (int64_t d = 0; d < rank && only_last_two_x2; ++d) {
      const bool last_two = d >= rank - 2;
      only_last_two_x2 = last_two ? (plan.resized[d] && plan.tables[d].repeat == 2) : !plan.resized[d];
    }
    // Below ~8 MiB the output can stay in cache for the next layer, which
    // streaming stores would forgo.
    const bool big = plan.out_numel * static_cast<int64_t>(sizeof(float)) >= (int64_t{8} << 20);
    if (only_last_two_x2 && big) {
      const int64_t in_h = in_shape[rank - 2], in_w = in_shape[rank - 1];
      int64_t planes = 1;
      for (int64_t d = 0; d + 2 < rank; ++d) planes *= in_shape[d];
      if (nearest_2x2_stream(src, dst, planes, in_h, in_w, exec)) return;
    }
  }
  nearest_nd<T>(src, dst, in_shape, plan.out_shape, ptrs,
                static_cast<T>(plan.attrs.extrapolation_value), exec);
}

template <typename T>
std::vector<T> cast_weights(const AxisTable& t) {
  return std::vector<T>(t.weight.begin(), t.weight.end());
}

}  // namespace detail

// Fills dst with the resized src. Precondition: make_plan returned "" for
// this plan; src and dst as in the file comment.
// `exact`: where the plan has ORT's one-expression blend, use it (bit-exact ORT) instead of
// the faster separable passes (a few float ulps from it). Integer types always take it
// where it exists, and elsewhere blend in float32 and truncate, as ORT casts.
template <typename T>
void run_plan(const ResizePlan& plan, const T* src, T* dst, const Executor& exec, bool exact = false) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, uint8_t> ||
                    std::is_same_v<T, int8_t> || std::is_same_v<T, int32_t>,
                "float, double, uint8, int8 or int32");
  if (plan.out_numel == 0) return;
  if (plan.identity) {
    std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(plan.out_numel));
    return;
  }
  if (plan.all_copies) return detail::run_nearest<T>(plan, src, dst, exec);
  if (!plan.blend.empty() && (exact || !std::is_floating_point_v<T>)) {
    return detail::blend_ort<T>(src, dst, plan.blend_outer, plan.blend,
                                static_cast<T>(plan.attrs.extrapolation_value), exec);
  }
  if constexpr (!std::is_floating_point_v<T>) {
    int64_t in_numel = 1;
    for (int64_t d : plan.in_shape) in_numel *= d;
    std::vector<float> xf(src, src + in_numel), yf(static_cast<size_t>(plan.out_numel));
    run_plan<float>(plan, xf.data(), yf.data(), exec);
    for (int64_t i = 0; i < plan.out_numel; ++i) dst[i] = detail::ort_cast<T>(yf[i]);
    return;
  } else {

  const int64_t rank = static_cast<int64_t>(plan.in_shape.size());
  const T ev = static_cast<T>(plan.attrs.extrapolation_value);
  std::vector<int64_t> shape = plan.in_shape;
  // Intermediates between passes; the last pass writes dst. new T[] leaves
  // them uninitialised (every element is written before it is read).
  std::unique_ptr<T[]> held;
  const T* cur = src;
  for (size_t p = 0; p < plan.order.size(); ++p) {
    const int64_t axis = plan.order[p];
    int64_t outer = 1, inner = 1, numel = 1;
    if (axis == -1) {
      for (int64_t d = 0; d < rank - 2; ++d) outer *= shape[d];
      shape[rank - 2] = plan.tables[rank - 2].out_size;
      shape[rank - 1] = plan.tables[rank - 1].out_size;
    } else {
      for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
      for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
      shape[axis] = plan.tables[axis].out_size;
    }
    for (int64_t d : shape) numel *= d;
    const bool last = p + 1 == plan.order.size();
    std::unique_ptr<T[]> next;
    T* out = dst;
    if (!last) {
      next.reset(new T[static_cast<size_t>(numel)]);
      out = next.get();
    }
    if (axis == -1) {
      const AxisTable& th = plan.tables[rank - 2];
      const AxisTable& tw = plan.tables[rank - 1];
      detail::resize_last_two<T>(cur, out, outer, th, tw, detail::cast_weights<T>(th),
                                 detail::cast_weights<T>(tw), ev, exec);
    } else {
      const AxisTable& t = plan.tables[axis];
      detail::resize_axis<T>(cur, out, outer, inner, t, detail::cast_weights<T>(t), ev, exec);
    }
    held = std::move(next);
    cur = held.get();
  }
  }
}

}  // namespace onnxtool
