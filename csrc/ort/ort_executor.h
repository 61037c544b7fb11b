// The shared kernel's Executor (resize_passes.h) on ONNX Runtime's intra-op
// thread pool (KernelContext_ParallelFor, ORT >= 1.17): the session's
// intra_op_num_threads decides, and a one-thread session runs inline.
#pragma once

#include <onnxruntime_c_api.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <thread>

#include "../resize_passes.h"

namespace onnxtool {
namespace ort_op {


class OrtExecutor final : public Executor {
 public:
  OrtExecutor(const OrtApi* api, OrtKernelContext* context) : api_(api), context_(context) {}

  // ORT does not tell a kernel its pool size; this only sizes work blocks.
  int64_t threads() const override {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int64_t>(n);
  }

  void for_chunks(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& f,
                  int64_t max_threads) const override {
    if (n <= 0) return;
    chunk = std::max<int64_t>(1, chunk);
    const int64_t chunks = (n + chunk - 1) / chunk;
    if (max_threads <= 1 || chunks <= 1) {
      f(0, n);
      return;
    }
    struct Job {
      const std::function<void(int64_t, int64_t)>* f;
      int64_t n, chunk;
    } job{&f, n, chunk};
    auto body = [](void* data, size_t c) {
      const Job* j = static_cast<const Job*>(data);
      const int64_t begin = static_cast<int64_t>(c) * j->chunk;
      (*j->f)(begin, std::min(j->n, begin + j->chunk));
    };
    // With a one-thread session ORT has no pool and runs the chunks inline.
    OrtStatus* status = api_->KernelContext_ParallelFor(context_, body, static_cast<size_t>(chunks), 0, &job);
    if (status != nullptr) {  // refused before running anything (no pool here): run inline
      api_->ReleaseStatus(status);
      f(0, n);
    }
  }

 private:
  const OrtApi* api_;
  OrtKernelContext* context_;
};

}  // namespace ort_op
}  // namespace onnxtool
