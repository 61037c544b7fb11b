// Reuse of large output buffers between calls, like ONNX Runtime's arena.
//
// PyTorch's CPU allocator hands every large tensor fresh pages from the OS,
// and the first write to each page faults and zeroes it: for a 16 MB output
// that was ~0.7 ms of a ~1.3 ms nearest resize here. Recently freed buffers
// are therefore kept (at most kMaxBlocks of them, kMaxBytes in all, only
// buffers of 1 MiB or more) and handed back to the next request of the same
// rounded size. Tensors made this way are ordinary resizable CPU tensors;
// only where their memory comes from and goes to differs.
//
// Never blocks: if the cache's lock is taken (another thread, or a lock
// inherited through fork()), allocation and release bypass the cache.
#pragma once

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace onnxtool {

class OutputCacheAllocator final : public c10::Allocator {
 public:
  static OutputCacheAllocator& instance() {
    static OutputCacheAllocator* allocator = new OutputCacheAllocator();  // leaked on purpose
    return *allocator;
  }

  c10::DataPtr allocate(size_t n) override {
    if (n < kMinBytes) return c10::GetCPUAllocator()->allocate(n);
    const size_t rounded = round_up(n);
    void* data = take(rounded);
    if (data == nullptr) data = c10::alloc_cpu(rounded);
    auto* block = new Block{data, rounded};
    return {data, block, &release, c10::Device(c10::kCPU)};
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  static constexpr size_t kMinBytes = size_t{1} << 20;
  static constexpr size_t kMaxBytes = size_t{256} << 20;
  static constexpr size_t kMaxBlocks = 8;

  struct Block {
    void* data;
    size_t bytes;
  };

  static size_t round_up(size_t n) {
    constexpr size_t kGranule = size_t{64} << 10;
    return (n + kGranule - 1) / kGranule * kGranule;
  }

  void* take(size_t bytes) {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return nullptr;
    for (size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].bytes == bytes) {
        void* data = free_[i].data;
        cached_bytes_ -= bytes;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        return data;
      }
    }
    return nullptr;
  }

  static void release(void* ctx) {
    auto* block = static_cast<Block*>(ctx);
    instance().give_back(*block);
    delete block;
  }

  void give_back(const Block& block) {
    {
      std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
      if (lock.owns_lock() && block.bytes <= kMaxBytes) {
        // Evict the oldest until the newcomer fits: recent sizes are the
        // ones a loop over a model asks for again.
        while (!free_.empty() && (free_.size() >= kMaxBlocks || cached_bytes_ + block.bytes > kMaxBytes)) {
          c10::free_cpu(free_.front().data);
          cached_bytes_ -= free_.front().bytes;
          free_.erase(free_.begin());
        }
        free_.push_back(block);
        cached_bytes_ += block.bytes;
        return;
      }
    }
    c10::free_cpu(block.data);
  }

  std::mutex mutex_;
  std::vector<Block> free_;
  size_t cached_bytes_ = 0;
};

// at::empty for a contiguous CPU tensor whose memory may come from the cache.
inline at::Tensor empty_output(at::IntArrayRef sizes, at::ScalarType dtype) {
  return at::detail::empty_generic(sizes, &OutputCacheAllocator::instance(),
                                   c10::DispatchKeySet(c10::DispatchKey::CPU), dtype,
                                   c10::MemoryFormat::Contiguous);
}

}  // namespace onnxtool
