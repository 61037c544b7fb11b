// ONNX Runtime's Resize arithmetic (its CPU kernel, upsample*.{h,cc}), for the shared kernel.
//
// ORT computes every source coordinate in float32 from the float32 scale and the INTEGER
// output length, then picks pixels and weights from that float:
//   nearest : get_nearest_pixel(x) (std::round is half away from zero; round_prefer_floor
//             tests x == trunc(x) + 0.5f), clamped into [0, in - 1]
//   linear  : x clamped into [0, in - 1]; x1 = trunc(x), x2 = min(x1 + 1, in - 1);
//             weights |x - x2|, |x - x1| (0.5 each where x1 == x2)
//   cubic   : Keys coefficients of x - floor(x) in float, neighbours floor(x) - 1 .. + 2
// and an axis whose float scale is exactly 1 is the identity (no coordinate transform, even
// with tf_crop_and_resize); an output of the input's shape is a copy of the input, whatever
// the scales (ORT 1.32: scale 1.1 on a length of 6 alone copies, beside a resized axis not;
// make_plan applies this where the caller states ORT's sizes). Computing these in double instead (as the ONNX reference
// does) moves exact ties: 20 -> 6 with half_pixel + round_prefer_ceil has x = 4.5f in
// float but 4.4999998 in double, so the double path picks pixel 4 where ORT picks 5.
//
// Linear blends: ORT's bilinear (rank 2, or rank 4 with scales [1, 1, h, w]) and trilinear
// (rank 3, or rank 5 with [1, 1, d, h, w]) compute ONE float expression per output,
//   dx2*dy2*X11 + dx1*dy2*X21 + dx2*dy1*X12 + dx1*dy1*X22   (trilinear: 8 terms, same order)
// and cast it to T (integers: truncation toward zero). blend_ort<T> evaluates exactly
// that expression, so integer, float16 and bfloat16 outputs are ORT's bit for bit.
//
// Requires: the build must not reassociate or contract float arithmetic (no -ffast-math;
// baseline x86-64 has no FMA to contract into). Does NOT implement ORT's antialias filter
// or its NHWC ([1, h, w, 1]) integer path; the kernel keeps its own arithmetic there.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "resize_passes.h"
#include "resize_plan.h"

namespace onnxtool {
namespace detail {

// ORT's get_original_coordinate, operation for operation (float unless ORT uses double).
inline float ort_coordinate(CoordMode mode, float x, float scale, float len_resized, float len_original,
                            float roi_start, float roi_end) {
  switch (mode) {
    case CoordMode::kAsymmetric:
      return x / scale;
    case CoordMode::kPytorchHalfPixel:
      return len_resized > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case CoordMode::kAlignCorners:
      return len_resized == 1 ? 0.0f : x * (len_original - 1) / (len_resized - 1);
    case CoordMode::kTfCropAndResize: {
      // The one-pixel branch is double in ORT (0.5 is a double literal).
      const double orig = len_resized > 1
                              ? static_cast<double>(roi_start * (len_original - 1) +
                                                    (x * (roi_end - roi_start) * (len_original - 1)) / (len_resized - 1))
                              : 0.5 * (roi_start + roi_end) * (len_original - 1);
      return static_cast<float>(orig);
    }
    case CoordMode::kHalfPixelSymmetric: {
      const float output_width = scale * len_original;
      const float adjustment = len_resized / output_width;
      const float center = len_original / 2;
      const float offset = center * (1 - adjustment);
      // (x + 0.5) / scale - 0.5 is double in ORT (double literals), then narrowed.
      const double orig = offset + (x + 0.5) / scale - 0.5;
      return static_cast<float>(orig);
    }
    case CoordMode::kHalfPixel:
      break;
  }
  return ((x + 0.5f) / scale) - 0.5f;
}

// ORT's get_nearest_pixel. The two rounding modes treat a coordinate within 1e-6 of a
// half as the tie itself (ORT >= 1.2x: float coordinates miss exact ties by an ulp, e.g.
// 14.499999f for 14.5); floor and ceil take the float as it is. Measured against ORT 1.32
// on 4000 random (size, scale, mode) cases: no difference.
constexpr float kOrtTieTolerance = 1e-6f;

inline int64_t ort_nearest_pixel(NearestMode mode, float x) {
  switch (mode) {
    case NearestMode::kFloor:
      return static_cast<int64_t>(std::floor(x));
    case NearestMode::kCeil:
      return static_cast<int64_t>(std::ceil(x));
    case NearestMode::kRoundPreferCeil:
    case NearestMode::kRoundPreferFloor:
      break;
  }
  const float frac = x - std::floor(x);
  if (std::fabs(frac - 0.5f) <= kOrtTieTolerance)
    return static_cast<int64_t>(mode == NearestMode::kRoundPreferCeil ? std::ceil(x) : std::floor(x));
  return static_cast<int64_t>(std::round(x));
}

// ORT's GetCubicCoeffs, in float.
inline void ort_cubic_coeffs(float s, float a, float* c) {
  const float t = std::fabs(s);
  c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

}  // namespace detail

// The table of one axis with ORT's arithmetic (antialias excluded). `scale` is ORT's
// float32 scale of the axis; out_size ORT's output length. An axis whose scale is 1 gets
// the identity coordinate (ORT's rule), which the blend kernels need for their window.
inline AxisTable make_ort_axis_table(int64_t in_size, int64_t out_size, float scale, float roi_start,
                                     float roi_end, const ResizeAttrs& a) {
  AxisTable t;
  t.in_size = in_size;
  t.out_size = out_size;
  const float len_in = static_cast<float>(in_size), len_out = static_cast<float>(out_size);
  const float last = static_cast<float>(in_size - 1);
  const bool crop = a.coord == CoordMode::kTfCropAndResize;
  t.taps = a.mode == Mode::kNearest ? 1 : a.mode == Mode::kLinear ? 2 : 4;
  t.index.resize(static_cast<size_t>(out_size * t.taps));
  t.weight.resize(static_cast<size_t>(out_size * t.taps));
  std::vector<uint8_t> extrapolate(static_cast<size_t>(out_size), 0);
  bool any_extrapolate = false;
  const float ca = static_cast<float>(a.cubic_coeff_a);
  for (int64_t j = 0; j < out_size; ++j) {
    const float y = static_cast<float>(j);
    const bool unit = scale == 1.0f;
    const float x = unit ? y : detail::ort_coordinate(a.coord, y, scale, len_out, len_in, roi_start, roi_end);
    if (crop && !unit && (x < 0 || x > last)) {
      extrapolate[j] = 1;
      any_extrapolate = true;
    }
    int64_t* ix = t.index.data() + j * t.taps;
    double* w = t.weight.data() + j * t.taps;
    if (a.mode == Mode::kNearest) {
      ix[0] = std::min(std::max<int64_t>(detail::ort_nearest_pixel(a.nearest_mode, x), 0), in_size - 1);
      w[0] = 1.0;
    } else if (a.mode == Mode::kLinear) {
      const float xc = std::max(0.0f, std::min(x, last));
      const int64_t x1 = std::min(static_cast<int64_t>(xc), in_size - 1);
      const int64_t x2 = std::min(x1 + 1, in_size - 1);
      float d1 = std::fabs(xc - static_cast<float>(x1)), d2 = std::fabs(xc - static_cast<float>(x2));
      if (x1 == x2) d1 = d2 = 0.5f;
      ix[0] = x1;
      ix[1] = x2;
      w[0] = d2;
      w[1] = d1;
    } else {
      const float xf = std::floor(x);
      const int64_t xi = static_cast<int64_t>(xf);
      float c[4];
      detail::ort_cubic_coeffs(x - xf, ca, c);
      float sum = 1;
      if (a.exclude_outside) {
        sum = 0;
        for (int k = 0; k < 4; ++k) {
          const int64_t n = xi - 1 + k;
          if (n < 0 || n >= in_size) c[k] = 0;
          sum += c[k];
        }
      }
      for (int k = 0; k < 4; ++k) {
        ix[k] = std::min(std::max<int64_t>(xi - 1 + k, 0), in_size - 1);
        w[k] = c[k] / sum;
      }
    }
  }
  t.pure_copy = a.mode == Mode::kNearest;
  if (any_extrapolate) t.extrapolate = std::move(extrapolate);
  if (t.pure_copy && !any_extrapolate && out_size % in_size == 0) {
    const int64_t k = out_size / in_size;
    bool runs = true;
    for (int64_t j = 0; j < out_size && runs; ++j) runs = t.index[j] == j / k;
    if (runs) t.repeat = k;
  }
  return t;
}

namespace detail {

template <typename T>
inline T ort_cast(float v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);  // truncation toward zero, as ORT's static_cast<T>
  }
}

// ORT's bilinear / trilinear expression over the last `tables.size()` (2 or 3) axes,
// tensor viewed as [outer, (D,) H, W]. Tables are ORT linear tables (taps 2: index
// x1, x2; weight d2, d1) of every window axis, identity ones included.
template <typename T>
void blend_ort(const T* src, T* dst, int64_t outer, const std::vector<AxisTable>& tables, T extrapolation_value,
               const Executor& exec) {
  const bool tri = tables.size() == 3;
  const AxisTable* tz = tri ? &tables[0] : nullptr;
  const AxisTable& ty = tables[tables.size() - 2];
  const AxisTable& tx = tables[tables.size() - 1];
  const int64_t in_d = tri ? tz->in_size : 1, out_d = tri ? tz->out_size : 1;
  const int64_t in_h = ty.in_size, in_w = tx.in_size, out_h = ty.out_size, out_w = tx.out_size;
  const int64_t in_plane = in_d * in_h * in_w, out_plane = out_d * out_h * out_w;
  auto flag = [](const AxisTable& t, int64_t j) { return !t.extrapolate.empty() && t.extrapolate[j]; };
  // Per-axis weights as ORT holds them (float).
  auto weights = [](const AxisTable& t) {
    std::vector<float> w(t.weight.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(t.weight[i]);
    return w;
  };
  const std::vector<float> wy = weights(ty), wx = weights(tx);
  const std::vector<float> wz = tri ? weights(*tz) : std::vector<float>{0.0f, 1.0f};
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, out_plane));
  exec.for_chunks(outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const T* X = src + o * in_plane;
      T* Y = dst + o * out_plane;
      for (int64_t z = 0; z < out_d; ++z) {
        const bool ez = tri && flag(*tz, z);
        const int64_t z1 = tri ? tz->index[2 * z] * in_h * in_w : 0, z2 = tri ? tz->index[2 * z + 1] * in_h * in_w : 0;
        const float dz2 = wz[tri ? 2 * z : 0], dz1 = wz[tri ? 2 * z + 1 : 1];
        for (int64_t y = 0; y < out_h; ++y) {
          const bool ey = ez || flag(ty, y);
          const int64_t y1 = ty.index[2 * y] * in_w, y2 = ty.index[2 * y + 1] * in_w;
          const float dy2 = wy[2 * y], dy1 = wy[2 * y + 1];
          T* row = Y + (z * out_h + y) * out_w;
          for (int64_t x = 0; x < out_w; ++x) {
            if (ey || flag(tx, x)) {
              row[x] = extrapolation_value;
              continue;
            }
            const int64_t x1 = tx.index[2 * x], x2 = tx.index[2 * x + 1];
            const float dx2 = wx[2 * x], dx1 = wx[2 * x + 1];
            float v;
            if (!tri) {
              const float X11 = static_cast<float>(X[y1 + x1]), X21 = static_cast<float>(X[y1 + x2]);
              const float X12 = static_cast<float>(X[y2 + x1]), X22 = static_cast<float>(X[y2 + x2]);
              v = dx2 * dy2 * X11 + dx1 * dy2 * X21 + dx2 * dy1 * X12 + dx1 * dy1 * X22;
            } else {
              const float X111 = static_cast<float>(X[z1 + y1 + x1]), X211 = static_cast<float>(X[z1 + y1 + x2]);
              const float X121 = static_cast<float>(X[z1 + y2 + x1]), X221 = static_cast<float>(X[z1 + y2 + x2]);
              const float X112 = static_cast<float>(X[z2 + y1 + x1]), X212 = static_cast<float>(X[z2 + y1 + x2]);
              const float X122 = static_cast<float>(X[z2 + y2 + x1]), X222 = static_cast<float>(X[z2 + y2 + x2]);
              v = dx2 * dy2 * dz2 * X111 + dx1 * dy2 * dz2 * X211 + dx2 * dy1 * dz2 * X121 + dx1 * dy1 * dz2 * X221 +
                  dx2 * dy2 * dz1 * X112 + dx1 * dy2 * dz1 * X212 + dx2 * dy1 * dz1 * X122 + dx1 * dy1 * dz1 * X222;
            }
            row[x] = ort_cast<T>(v);
          }
        }
      }
    }
  }, INT64_MAX);
}

}  // namespace detail
}  // namespace onnxtool
