// Per-axis gather tables for ONNX Resize (opset 19), free of any torch dependency.
//
// ONNX Resize is separable: resizing an N-D tensor is a 1-D resize along each
// axis in turn. For one axis, every output position j reads `taps` input
// positions with fixed weights, so the whole coordinate/coefficient logic is
// computed once per axis per call (O(out_size * taps)) and the kernels only
// run multiply-adds over those tables.
//
// The arithmetic deliberately mirrors onnx/reference/ops/op_resize.py
// (`_compute_x_ori`, `_interpolate_1d_along_axis`, the `_*_coeffs` helpers)
// operation for operation, in double precision, so that index choices at
// exact ties (x.5 for nearest, integer source coordinates) agree with the
// reference bit for bit. This header does NOT validate its inputs: the caller
// (resize_cpu.cpp) checks sizes, scales and roi first.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace onnxtool {

enum class Mode { kNearest, kLinear, kCubic };
enum class CoordMode {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kHalfPixelSymmetric,
  kTfCropAndResize,
};
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeAttrs {
  Mode mode = Mode::kNearest;
  CoordMode coord = CoordMode::kHalfPixel;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  NearestMode nearest_mode = NearestMode::kRoundPreferFloor;
  double extrapolation_value = 0.0;
  bool antialias = false;
  // ONNX Runtime's arithmetic (resize_ort.h): float32 coordinates from the float32 scale and
  // the integer output length. Off: the ONNX reference's double arithmetic, which is also
  // what antialias always uses (ORT's antialias filter is its own).
  bool ort = true;
};

// Output j of one axis = sum_k weight[j*taps+k] * input[index[j*taps+k]],
// or extrapolation_value where extrapolate[j] is set (tf_crop_and_resize).
// Indices are already clamped into [0, in_size), which is what the
// reference's edge padding amounts to.
struct AxisTable {
  int64_t in_size = 0;
  int64_t out_size = 0;
  int64_t taps = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> extrapolate;  // empty unless some position extrapolates
  // nearest mode only: every output copies exactly one input (weight 1).
  bool pure_copy = false;
  // pure_copy with index[j] == j / repeat for every j (an integer upscale
  // whose copies line up with the input): kernels may fill runs instead of
  // gathering. 0 when the pattern does not hold.
  int64_t repeat = 0;
};

// The tf_crop_and_resize terms of one axis. ONNX roi is float32, and the
// reference evaluates (end - start) and start * (in - 1) in float32 before
// widening; `single` reproduces that (it moves results by ~1e-6 relative).
struct AxisRoi {
  double start = 0.0;
  double end = 1.0;
  bool single = true;
};

namespace detail {

inline double source_coordinate(CoordMode mode, double y, double scale, int64_t in_size,
                                double out_width, int64_t out_int, const AxisRoi& roi,
                                bool* extrapolated) {
  const double in_w = static_cast<double>(in_size);
  *extrapolated = false;
  switch (mode) {
    case CoordMode::kAlignCorners:
      // The reference divides by the *fractional* output width (scale * in),
      // not the integer one; keep that, it matters for non-integral products.
      return out_width == 1 ? 0.0 : y * (in_w - 1) / (out_width - 1);
    case CoordMode::kAsymmetric:
      return y / scale;
    case CoordMode::kTfCropAndResize: {
      double span, offset, middle;
      if (roi.single) {
        const float span_f = static_cast<float>(roi.end) - static_cast<float>(roi.start);
        span = span_f;
        offset = static_cast<float>(roi.start) * static_cast<float>(in_size - 1);
        middle = span_f * static_cast<float>(in_size - 1) / 2.0f;
      } else {
        span = roi.end - roi.start;
        offset = roi.start * (in_w - 1);
        middle = span * (in_w - 1) / 2;
      }
      double x = out_width == 1 ? middle : y * span * (in_w - 1) / (out_width - 1);
      x = x + offset;
      *extrapolated = x < 0 || x > in_w - 1;
      return x;
    }
    case CoordMode::kPytorchHalfPixel:
      return out_width == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    case CoordMode::kHalfPixel:
      return (y + 0.5) / scale - 0.5;
    case CoordMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out_int) / out_width;
      const double center = in_w / 2;
      const double offset = center * (1 - adjustment);
      return offset + (y + 0.5) / scale - 0.5;
    }
  }
  return 0.0;
}

// Number of taps per output position; fixed per axis (the reference relies
// on the same fact).
inline int64_t tap_count(const ResizeAttrs& a, double scale) {
  if (a.mode == Mode::kNearest) return 2;
  if (!a.antialias) return a.mode == Mode::kLinear ? 2 : 4;
  const double s = std::min(scale, 1.0);
  if (a.mode == Mode::kLinear) {
    const int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
    return 2 - 2 * start;
  }
  const int64_t i_start = static_cast<int64_t>(std::floor(-2 / s) + 1);
  return 2 - 2 * i_start;
}

inline double cubic_kernel(double x, double A) {
  x = std::fabs(x);
  const double x2 = x * x;
  const double x3 = x * x2;
  if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
  if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
  return 0.0;
}

// Coefficients for a ratio in (0, 1] (1 when the source coordinate is an
// integer), as in the reference's _nearest/_linear/_cubic(_antialias)_coeffs.
inline void coefficients(const ResizeAttrs& a, double ratio, double scale, int64_t n,
                         double* c) {
  switch (a.mode) {
    case Mode::kNearest: {
      bool take_ceil;
      if (ratio == 1.0) {
        take_ceil = true;  // integer coordinate: [0, 1] selects the point itself
      } else {
        switch (a.nearest_mode) {
          case NearestMode::kRoundPreferFloor: take_ceil = ratio > 0.5; break;
          case NearestMode::kRoundPreferCeil: take_ceil = ratio >= 0.5; break;
          case NearestMode::kFloor: take_ceil = false; break;
          default: take_ceil = true; break;
        }
      }
      c[0] = take_ceil ? 0.0 : 1.0;
      c[1] = take_ceil ? 1.0 : 0.0;
      return;
    }
    case Mode::kLinear: {
      if (!a.antialias) {
        c[0] = 1 - ratio;
        c[1] = ratio;
        return;
      }
      const double s = std::min(scale, 1.0);
      const int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double arg = (static_cast<double>(start + k) - ratio) * s;
        c[k] = std::min(std::max(1 - std::fabs(arg), 0.0), 1.0);
        sum += c[k];
      }
      for (int64_t k = 0; k < n; ++k) c[k] /= sum;
      return;
    }
    case Mode::kCubic: {
      const double A = a.cubic_coeff_a;
      if (!a.antialias) {
        const double r = ratio;
        c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
        c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
        c[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
        c[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
        return;
      }
      const double s = std::min(scale, 1.0);
      const int64_t i_start = static_cast<int64_t>(std::floor(-2 / s) + 1);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        c[k] = cubic_kernel(s * (static_cast<double>(i_start + k) - ratio), A);
        sum += c[k];
      }
      for (int64_t k = 0; k < n; ++k) c[k] /= sum;
      return;
    }
  }
}

}  // namespace detail

// Builds the table of one axis. `scale` is the ONNX scale of that axis (as
// double), `out_size` = floor(in_size * scale); `roi` is only read for
// tf_crop_and_resize. Precondition: in_size > 0, out_size > 0.
inline AxisTable make_axis_table(int64_t in_size, int64_t out_size, double scale,
                                 const AxisRoi& roi, const ResizeAttrs& a) {
  AxisTable t;
  t.in_size = in_size;
  t.out_size = out_size;
  const int64_t n = detail::tap_count(a, scale);
  const int64_t pad = (n + 1) / 2;
  const double out_width = scale * static_cast<double>(in_size);
  std::vector<double> coeff(static_cast<size_t>(n));
  std::vector<int64_t> nb(static_cast<size_t>(n));
  std::vector<int64_t> index(static_cast<size_t>(out_size * n));
  std::vector<double> weight(static_cast<size_t>(out_size * n));
  std::vector<uint8_t> extrapolate(static_cast<size_t>(out_size), 0);
  bool any_extrapolate = false;

  for (int64_t j = 0; j < out_size; ++j) {
    bool extrap = false;
    const double x = detail::source_coordinate(a.coord, static_cast<double>(j), scale, in_size,
                                               out_width, out_size, roi, &extrap);
    const double x_int = std::floor(x);
    const double ratio = (x == x_int) ? 1.0 : x - x_int;
    detail::coefficients(a, ratio, scale, n, coeff.data());

    // The n neighbours closest to x, ties to the smaller index, computed the
    // way the reference does it (in edge-padded coordinates).
    const double x_padded = x + static_cast<double>(pad);
    const double p = std::floor(x_padded);
    const double frac = x_padded - p;
    int64_t offset;
    if (n % 2 == 0) {
      offset = frac == 0 ? -(n / 2) : -(n / 2) + 1;
    } else {
      const int64_t base = -((n - 1) / 2);
      offset = frac <= 0.5 ? base : base + 1;
    }
    const int64_t start = static_cast<int64_t>(p) + offset - pad;
    for (int64_t k = 0; k < n; ++k) nb[k] = start + k;

    if (a.exclude_outside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (nb[k] < 0 || nb[k] >= in_size) coeff[k] = 0;
        sum += coeff[k];
      }
      if (sum == 0) sum = 1;
      for (int64_t k = 0; k < n; ++k) coeff[k] /= sum;
    }
    for (int64_t k = 0; k < n; ++k) {
      index[j * n + k] = std::min(std::max<int64_t>(nb[k], 0), in_size - 1);
      weight[j * n + k] = coeff[k];
    }
    if (extrap) {
      extrapolate[j] = 1;
      any_extrapolate = true;
    }
  }

  if (a.mode == Mode::kNearest) {
    // Nearest coefficients are one-hot: keep only the selected tap, so the
    // kernel is a gather (or a row copy) instead of a multiply-add.
    t.taps = 1;
    t.index.resize(out_size);
    t.weight.resize(out_size);
    t.pure_copy = true;
    for (int64_t j = 0; j < out_size; ++j) {
      const int64_t k = weight[j * n + 1] != 0 ? 1 : 0;
      t.index[j] = index[j * n + k];
      t.weight[j] = weight[j * n + k];
      // exclude_outside can zero the only tap; then the output is 0, not a copy.
      if (t.weight[j] != 1.0) t.pure_copy = false;
    }
  } else {
    t.taps = n;
    t.index = std::move(index);
    t.weight = std::move(weight);
  }
  if (any_extrapolate) t.extrapolate = std::move(extrapolate);
  if (t.pure_copy && !any_extrapolate && out_size % in_size == 0) {
    const int64_t k = out_size / in_size;
    bool runs = true;
    for (int64_t j = 0; j < out_size && runs; ++j) runs = t.index[j] == j / k;
    if (runs) t.repeat = k;
  }
  return t;
}

}  // namespace onnxtool
