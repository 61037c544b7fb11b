// The passes of the shared ONNX Resize kernel (resize_kernel.h) and the
// Executor that spreads them over a backend's threads. Torch-free and
// ONNX-Runtime-free; included only through resize_kernel.h.
//
//   weighted_rows / resize_row : one row, along H (unit stride, omp simd) or
//                                along W (a gather through the axis table)
//   resize_axis                : any one axis, tensor viewed as [outer, axis, inner]
//   resize_last_two            : H and W fused over cache-sized blocks of rows
//   nearest_nd                 : nearest over any set of axes in one gather pass
//   nearest_2x2_stream         : nearest x2 on H, W with streaming stores
//
// Requires: the AxisTables of resize_plan.h, inputs and outputs that do not
// overlap, kernels (f) that do not throw. Does NOT validate anything.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
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

}  // namespace detail
}  // namespace onnxtool
