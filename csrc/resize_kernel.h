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
// then as few passes as possible. Axes whose scale is 1 (and whose roi is the
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
// Requires: T is float or double; src holds prod(in_shape) elements, dst
// out_numel; the two do not overlap. Threads come from the caller's Executor
// (torch's thread count, or ONNX Runtime's intra-op pool), which must run
// every chunk it is given exactly once. Does NOT allocate the output, convert
// float16 (callers compute in float32), or throw: errors are returned strings.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "resize_plan.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace onnxtool {

// How a backend spreads loops over its threads.
class Executor {
 public:
  virtual ~Executor() = default;
  // Threads the backend may use (>= 1); only sizes work blocks.
  virtual int64_t threads() const = 0;
  // f(begin, end) over [0, n) in chunks of `chunk`, on at most max_threads
  // threads (the caller's among them). f must not throw.
  virtual void for_chunks(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& f,
                          int64_t max_threads) const = 0;
};

// Runs everything on the calling thread.
class SerialExecutor final : public Executor {
 public:
  int64_t threads() const override { return 1; }
  void for_chunks(int64_t n, int64_t, const std::function<void(int64_t, int64_t)>& f,
                  int64_t) const override {
    if (n > 0) f(0, n);
  }
};

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
  ResizeAttrs attrs;
};

// Output shape and tables. `scales` has one entry per axis; `roi` (2 * rank:
// starts then ends) is read only for tf_crop_and_resize and may be null
// otherwise; `roi_single` says it came as float32 (see AxisRoi).
// Returns "" or what is wrong with the scales / roi.
inline std::string make_plan(const std::vector<int64_t>& in_shape, const double* s,
                             const double* roi, bool roi_single, const ResizeAttrs& a,
                             ResizePlan* plan) {
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
    const double o = std::floor(s[i] * static_cast<double>(in_shape[i]));
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
    const bool identity = std::fabs(s[i] - 1.0) <= 1e-9 && out_shape[i] == in_shape[i] &&
                          std::fabs(r0) <= 1e-9 && std::fabs(r1 - 1.0) <= 1e-9;
    if (identity) continue;
    plan->tables[i] = make_axis_table(in_shape[i], out_shape[i], s[i], AxisRoi{r0, r1, roi_single}, a);
    plan->resized[i] = true;
    todo.push_back(i);
  }
  plan->identity = todo.empty();
  if (plan->identity) return "";

  bool all_copies = a.mode == Mode::kNearest;
  for (int64_t d : todo) all_copies = all_copies && plan->tables[d].pure_copy;
  plan->all_copies = all_copies;
  if (all_copies) return "";

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

// Rows of `inner` contiguous elements: dst = sum_k w[k] * src_k.
template <typename T, int K>
inline void weighted_rows_fixed(T* __restrict__ dst, const T* const* rows, const T* w,
                                int64_t inner) {
  if constexpr (K == 2) {
    const T* __restrict__ s0 = rows[0];
    const T* __restrict__ s1 = rows[1];
    const T w0 = w[0], w1 = w[1];
#pragma omp simd
    for (int64_t i = 0; i < inner; ++i) dst[i] = w0 * s0[i] + w1 * s1[i];
  } else if constexpr (K == 4) {
    const T* __restrict__ s0 = rows[0];
    const T* __restrict__ s1 = rows[1];
    const T* __restrict__ s2 = rows[2];
    const T* __restrict__ s3 = rows[3];
    const T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
#pragma omp simd
    for (int64_t i = 0; i < inner; ++i)
      dst[i] = w0 * s0[i] + w1 * s1[i] + w2 * s2[i] + w3 * s3[i];
  }
}

template <typename T>
inline void weighted_rows(T* __restrict__ dst, const T* const* rows, const T* w, int64_t taps,
                          int64_t inner) {
  if (taps == 2) return weighted_rows_fixed<T, 2>(dst, rows, w, inner);
  if (taps == 4) return weighted_rows_fixed<T, 4>(dst, rows, w, inner);
  {
    const T* __restrict__ s0 = rows[0];
    const T w0 = w[0];
#pragma omp simd
    for (int64_t i = 0; i < inner; ++i) dst[i] = w0 * s0[i];
  }
  for (int64_t k = 1; k < taps; ++k) {
    const T* __restrict__ sk = rows[k];
    const T wk = w[k];
#pragma omp simd
    for (int64_t i = 0; i < inner; ++i) dst[i] += wk * sk[i];
  }
}

// One row along the last axis: d[j] = sum_k w[j,k] * s[idx[j,k]].
template <typename T>
inline void resize_row(const T* __restrict__ s, T* __restrict__ d, const AxisTable& t, const T* wt,
                       T extrapolation_value) {
  const int64_t out = t.out_size, taps = t.taps;
  const int64_t* idx = t.index.data();
  if (t.repeat == 2) {
    const int64_t in = t.in_size;
    int64_t i = 0;
#if defined(__SSE2__)
    if constexpr (std::is_same_v<T, float>) {
      // Each loaded lane is stored twice: interleave the vector with itself.
      for (; i + 4 <= in; i += 4) {
        const __m128 v = _mm_loadu_ps(s + i);
        _mm_storeu_ps(d + 2 * i, _mm_unpacklo_ps(v, v));
        _mm_storeu_ps(d + 2 * i + 4, _mm_unpackhi_ps(v, v));
      }
    }
#endif
    for (; i < in; ++i) d[2 * i] = d[2 * i + 1] = s[i];
  } else if (t.repeat == 3) {
    const int64_t in = t.in_size;
    for (int64_t i = 0; i < in; ++i) d[3 * i] = d[3 * i + 1] = d[3 * i + 2] = s[i];
  } else if (t.repeat == 4) {
    const int64_t in = t.in_size;
    for (int64_t i = 0; i < in; ++i) d[4 * i] = d[4 * i + 1] = d[4 * i + 2] = d[4 * i + 3] = s[i];
  } else if (t.pure_copy) {
    for (int64_t j = 0; j < out; ++j) d[j] = s[idx[j]];
  } else if (taps == 2) {
    for (int64_t j = 0; j < out; ++j) {
      const int64_t* ix = idx + 2 * j;
      const T* ww = wt + 2 * j;
      d[j] = ww[0] * s[ix[0]] + ww[1] * s[ix[1]];
    }
  } else if (taps == 4) {
    for (int64_t j = 0; j < out; ++j) {
      const int64_t* ix = idx + 4 * j;
      const T* ww = wt + 4 * j;
      d[j] = ww[0] * s[ix[0]] + ww[1] * s[ix[1]] + ww[2] * s[ix[2]] + ww[3] * s[ix[3]];
    }
  } else {
    for (int64_t j = 0; j < out; ++j) {
      const int64_t* ix = idx + taps * j;
      const T* ww = wt + taps * j;
      T acc = 0;
      for (int64_t k = 0; k < taps; ++k) acc += ww[k] * s[ix[k]];
      d[j] = acc;
    }
  }
  if (!t.extrapolate.empty()) {
    const uint8_t* ex = t.extrapolate.data();
    for (int64_t j = 0; j < out; ++j)
      if (ex[j]) d[j] = extrapolation_value;
  }
}

// One axis, tensor viewed as [outer, in, inner] -> [outer, out, inner].
template <typename T>
void resize_axis(const T* src, T* dst, int64_t outer, int64_t inner, const AxisTable& t,
                 const std::vector<T>& w, T extrapolation_value, const Executor& exec) {
  const int64_t in = t.in_size, out = t.out_size, taps = t.taps;
  const int64_t* idx = t.index.data();
  const T* wt = w.data();
  const uint8_t* ex = t.extrapolate.empty() ? nullptr : t.extrapolate.data();

  if (inner > 1) {
    // ~64K multiply-adds per chunk keeps scheduling overhead negligible.
    const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, inner * taps));
    exec.for_chunks(outer * out, grain, [&](int64_t begin, int64_t end) {
      std::vector<const T*> rp(static_cast<size_t>(taps));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / out;
        const int64_t j = r - o * out;
        T* d = dst + r * inner;
        if (ex && ex[j]) {
          std::fill(d, d + inner, extrapolation_value);
          continue;
        }
        const T* base = src + o * in * inner;
        if (t.pure_copy) {
          std::memcpy(d, base + idx[j] * inner, sizeof(T) * inner);
          continue;
        }
        for (int64_t k = 0; k < taps; ++k) rp[k] = base + idx[j * taps + k] * inner;
        weighted_rows<T>(d, rp.data(), wt + j * taps, taps, inner);
      }
    }, INT64_MAX);
    return;
  }

  // Last axis: gathers. Rows are independent; split them across threads.
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, out * taps));
  exec.for_chunks(outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o)
      resize_row<T>(src + o * in, dst + o * out, t, wt, extrapolation_value);
  }, INT64_MAX);
}

// The last two axes at once, tensor viewed as [outer, H, W] -> [outer, H', W'].
// Each task owns a block of output rows of one plane: it resizes just the
// input rows that block reads along W into a small buffer (it stays in cache),
// then blends buffer rows along H. This saves the full-size intermediate
// tensor that two separate passes would write and read back.
template <typename T>
void resize_last_two(const T* src, T* dst, int64_t outer, const AxisTable& th, const AxisTable& tw,
                     const std::vector<T>& wh, const std::vector<T>& ww, T extrapolation_value,
                     const Executor& exec) {
  const int64_t in_h = th.in_size, in_w = tw.in_size, out_h = th.out_size, out_w = tw.out_size;
  const int64_t taps = th.taps;
  const int64_t threads = exec.threads();
  // Blocks big enough that re-resizing the few rows shared by neighbouring
  // blocks costs little, small enough that every thread gets several.
  int64_t block = (outer * out_h) / std::max<int64_t>(1, 8 * threads);
  block = std::min<int64_t>(std::max<int64_t>(block, 8), 128);
  block = std::min(block, out_h);
  const int64_t blocks_per_plane = (out_h + block - 1) / block;
  const int64_t* idx = th.index.data();
  const uint8_t* ex = th.extrapolate.empty() ? nullptr : th.extrapolate.data();

  if (out_h < in_h) {
    // Shrinking rows: blend along H first (unit-stride, vectorised) into one
    // row of input width, then gather along W, so the slow gather runs on
    // out_h rows instead of the in_h rows a W-first order would need.
    exec.for_chunks(outer * blocks_per_plane, 1, [&](int64_t begin, int64_t end) {
      std::vector<T> tmp(static_cast<size_t>(in_w));
      std::vector<const T*> rows(taps);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t o = task / blocks_per_plane;
        const int64_t j0 = (task - o * blocks_per_plane) * block;
        const int64_t j1 = std::min(out_h, j0 + block);
        const T* plane = src + o * in_h * in_w;
        for (int64_t j = j0; j < j1; ++j) {
          T* d = dst + (o * out_h + j) * out_w;
          if (ex && ex[j]) {
            std::fill(d, d + out_w, extrapolation_value);
            continue;
          }
          for (int64_t k = 0; k < taps; ++k) rows[k] = plane + idx[j * taps + k] * in_w;
          const T* row = rows[0];
          if (!th.pure_copy) {
            weighted_rows<T>(tmp.data(), rows.data(), wh.data() + j * taps, taps, in_w);
            row = tmp.data();
          }
          resize_row<T>(row, d, tw, ww.data(), extrapolation_value);
        }
      }
    }, INT64_MAX);
    return;
  }

  exec.for_chunks(outer * blocks_per_plane, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> buf;
    std::vector<const T*> rows(taps);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / blocks_per_plane;
      const int64_t j0 = (task - o * blocks_per_plane) * block;
      const int64_t j1 = std::min(out_h, j0 + block);
      int64_t lo = in_h, hi = -1;
      for (int64_t j = j0; j < j1; ++j) {
        if (ex && ex[j]) continue;
        for (int64_t k = 0; k < taps; ++k) {
          lo = std::min(lo, idx[j * taps + k]);
          hi = std::max(hi, idx[j * taps + k]);
        }
      }
      const T* plane = src + o * in_h * in_w;
      T* out_plane = dst + o * out_h * out_w;
      if (hi >= lo) {
        buf.resize(static_cast<size_t>((hi - lo + 1) * out_w));
        for (int64_t r = lo; r <= hi; ++r)
          resize_row<T>(plane + r * in_w, buf.data() + (r - lo) * out_w, tw, ww.data(),
                        extrapolation_value);
      }
      for (int64_t j = j0; j < j1; ++j) {
        T* d = out_plane + j * out_w;
        if (ex && ex[j]) {
          std::fill(d, d + out_w, extrapolation_value);
          continue;
        }
        for (int64_t k = 0; k < taps; ++k) rows[k] = buf.data() + (idx[j * taps + k] - lo) * out_w;
        if (th.pure_copy) {
          std::memcpy(d, rows[0], sizeof(T) * out_w);
        } else {
          weighted_rows<T>(d, rows.data(), wh.data() + j * taps, taps, out_w);
        }
      }
    }
  }, INT64_MAX);
}

// Nearest over any set of axes in one pass: every output row (all axes but
// the last) is a copy of one input row, gathered along the last axis. Rows
// repeated by upsampling are copied from the previous output row, which is
// still in cache. Precondition: every table is pure_copy (or absent = axis
// kept).
template <typename T>
void nearest_nd(const T* src, T* dst, const std::vector<int64_t>& in_shape,
                const std::vector<int64_t>& out_shape, const std::vector<const AxisTable*>& tables,
                T extrapolation_value, const Executor& exec) {
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  std::vector<int64_t> in_stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * in_shape[d + 1];
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) rows *= out_shape[d];
  const int64_t in_last = in_shape[rank - 1], out_last = out_shape[rank - 1];
  const AxisTable* last = tables[rank - 1];
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, out_last));
  // Copies are bound by memory bandwidth: a second thread bought ~10% on a
  // 16 MB output here when the machine was idle and cost several ms whenever
  // a busy machine preempted the helper mid-chunk. Threads only pay off for
  // outputs well beyond the last-level cache.
  const int64_t out_bytes = rows * out_last * static_cast<int64_t>(sizeof(T));
  const int64_t max_threads = out_bytes >= (int64_t{64} << 20) ? INT64_MAX : 1;

  // Source offset contributed by each output index of each row axis.
  std::vector<std::vector<int64_t>> axis_offset(rank > 1 ? rank - 1 : 0);
  for (int64_t d = 0; d + 1 < rank; ++d) {
    axis_offset[d].resize(out_shape[d]);
    for (int64_t i = 0; i < out_shape[d]; ++i)
      axis_offset[d][i] = (tables[d] ? tables[d]->index[i] : i) * in_stride[d];
  }

  exec.for_chunks(rows, grain, [&](int64_t begin, int64_t end) {
    // Multi-index of row `begin`, then advanced like an odometer.
    std::vector<int64_t> pos(rank > 1 ? rank - 1 : 0);
    for (int64_t d = rank - 2, rem = begin; d >= 0; --d) {
      pos[d] = rem % out_shape[d];
      rem /= out_shape[d];
    }
    int64_t prev_offset = -1;
    for (int64_t r = begin; r < end; ++r) {
      int64_t offset = 0;
      bool extrapolated = false;
      for (int64_t d = 0; d + 1 < rank; ++d) {
        offset += axis_offset[d][pos[d]];
        const AxisTable* t = tables[d];
        if (t && !t->extrapolate.empty() && t->extrapolate[pos[d]]) extrapolated = true;
      }
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++pos[d] < out_shape[d]) break;
        pos[d] = 0;
      }
      T* d_row = dst + r * out_last;
      if (extrapolated) {
        std::fill(d_row, d_row + out_last, extrapolation_value);
        prev_offset = -1;
        continue;
      }
      if (offset == prev_offset) {
        std::memcpy(d_row, d_row - out_last, sizeof(T) * out_last);
        continue;
      }
      const T* s_row = src + offset;
      if (last) {
        resize_row<T>(s_row, d_row, *last, nullptr, extrapolation_value);
      } else {
        std::memcpy(d_row, s_row, sizeof(T) * in_last);
      }
      prev_offset = offset;
    }
  }, max_threads);
}

// Nearest x2 on the last two axes (the FPN / YOLO upsample): each input
// row becomes two identical output rows written straight from registers
// with streaming (non-temporal) stores, so a large output is written once
// and never read for ownership: ~0.75 ms instead of ~1.1 ms for 16 MB here.
// Both rows must come from registers: reading back a streamed row to copy
// it was measured 10x slower.
inline bool nearest_2x2_stream(const float* src, float* dst, int64_t planes, int64_t in_h,
                               int64_t in_w, const Executor& exec) {
#if defined(__SSE2__)
  const int64_t out_w = 2 * in_w;
  if (in_w % 4 != 0 || reinterpret_cast<uintptr_t>(dst) % 16 != 0) return false;
  exec.for_chunks(planes * in_h, std::max<int64_t>(1, 16384 / in_w), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* s = src + r * in_w;
      float* d0 = dst + 2 * r * out_w;
      float* d1 = d0 + out_w;
      for (int64_t i = 0; i < in_w; i += 4) {
        const __m128 v = _mm_loadu_ps(s + i);
        const __m128 lo = _mm_unpacklo_ps(v, v);
        const __m128 hi = _mm_unpackhi_ps(v, v);
        _mm_stream_ps(d0 + 2 * i, lo);
        _mm_stream_ps(d0 + 2 * i + 4, hi);
        _mm_stream_ps(d1 + 2 * i, lo);
        _mm_stream_ps(d1 + 2 * i + 4, hi);
      }
    }
    _mm_sfence();
  }, 1);
  return true;
#else
  (void)src, (void)dst, (void)planes, (void)in_h, (void)in_w, (void)exec;
  return false;
#endif
}

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
template <typename T>
void run_plan(const ResizePlan& plan, const T* src, T* dst, const Executor& exec) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double only");
  if (plan.out_numel == 0) return;
  if (plan.identity) {
    std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(plan.out_numel));
    return;
  }
  if (plan.all_copies) return detail::run_nearest<T>(plan, src, dst, exec);

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

}  // namespace onnxtool
