// A tiny fork-join pool whose helpers can be *revoked*: the calling thread
// always works too, and when it runs out of chunks it withdraws the job from
// every helper that has not started yet instead of waiting for it.
//
// Why not at::parallel_for: with torch's OpenMP backend a parallel region
// ends in a barrier that waits for every thread of the team. On a shared,
// busy CPU (CI runners, a box that also runs ONNX Runtime) a helper that the
// OS has not scheduled yet holds the whole call for a scheduler tick (~4-8 ms
// measured here, against a 1-3 ms resize). ONNX Runtime's pool revokes
// unstarted work the same way; this keeps the op from being slower with 2
// threads than with 1 when the machine is loaded.
//
// Torch-free: the caller passes the thread count (the PyTorch op's executor
// in resize_cpu.cpp passes at::get_num_threads()). Helpers sleep in a futex
// wait (C++20 std::atomic::wait) while idle, so they cost nothing between
// calls. Safe after fork(): the child has no
// helpers, so every posted job is revoked and the caller does all the work.
// Concurrent callers (two Python threads) do not share helpers: whoever finds
// the pool busy runs its job alone. Kernels run by the pool must not throw.
#pragma once

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace onnxtool {

class RevocablePool {
 public:
  static RevocablePool& instance() {
    static RevocablePool* pool = new RevocablePool();  // leaked: helpers outlive static destruction
    return *pool;
  }

  // Calls f(begin, end) over [0, n) in chunks of `chunk`, on the calling
  // thread plus up to threads - 1 helpers.
  template <typename F>
  void run(int64_t n, int64_t chunk, int64_t threads, const F& f) {
    chunk = std::max<int64_t>(1, chunk);
    const int64_t chunks = (n + chunk - 1) / chunk;
    const int64_t helpers = std::min<int64_t>(threads, chunks) - 1;
    std::unique_lock<std::mutex> busy(mutex_, std::try_to_lock);
    if (helpers <= 0 || !busy.owns_lock()) {
      f(0, n);
      return;
    }
    ensure_helpers(static_cast<size_t>(helpers));
    Job job;
    job.chunks = chunks;
    job.body = [&](int64_t c) { f(c * chunk, std::min(n, (c + 1) * chunk)); };
    job.active.store(static_cast<int>(helpers), std::memory_order_relaxed);
    for (int64_t i = 0; i < helpers; ++i) {
      Slot& s = *slots_[i];
      s.job.store(&job, std::memory_order_release);
      s.seq.fetch_add(1, std::memory_order_release);
      s.seq.notify_one();
    }
    job.work();
    for (int64_t i = 0; i < helpers; ++i) {
      Job* expected = &job;
      if (slots_[i]->job.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel))
        job.active.fetch_sub(1, std::memory_order_acq_rel);  // revoked before it started
    }
    for (int a = job.active.load(std::memory_order_acquire); a != 0;
         a = job.active.load(std::memory_order_acquire))
      job.active.wait(a, std::memory_order_acquire);
  }

 private:
  struct Job {
    int64_t chunks = 0;
    std::atomic<int64_t> next{0};
    std::atomic<int> active{0};
    std::function<void(int64_t)> body;
    void work() {
      for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < chunks;
           c = next.fetch_add(1, std::memory_order_relaxed))
        body(c);
    }
  };
  struct Slot {
    std::atomic<uint32_t> seq{0};
    std::atomic<Job*> job{nullptr};
  };

  void ensure_helpers(size_t count) {
    while (slots_.size() < count) {
      slots_.push_back(std::make_unique<Slot>());
      Slot* slot = slots_.back().get();
      std::thread([slot] { helper_loop(slot); }).detach();
    }
  }

  static void helper_loop(Slot* slot) {
    uint32_t seen = 0;
    for (;;) {
      uint32_t s = slot->seq.load(std::memory_order_acquire);
      while (s == seen) {
        slot->seq.wait(s, std::memory_order_acquire);
        s = slot->seq.load(std::memory_order_acquire);
      }
      seen = s;
      Job* job = slot->job.exchange(nullptr, std::memory_order_acq_rel);
      if (job == nullptr) continue;  // the caller finished first and revoked it
      job->work();
      job->active.fetch_sub(1, std::memory_order_acq_rel);
      job->active.notify_one();
    }
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace onnxtool
