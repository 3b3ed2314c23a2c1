// The loop form of a kernel (issue 17 item 2): a threadgroup runs as one call of the group
// function the MSL front end wrote (msl_loop_rewrite.cpp), whose barrier-free regions are loops
// over the threads in lane order (mtlsim/msl_loops.h). Barriers and simd functions then only
// arrive (worker.cpp: no switch); the last arrival completes them with the fiber path's code, so
// poison, divergence and race bookkeeping stay the same. The call runs on a runner stack like a
// fiber, so a report that abandons the threadgroup switches back to the worker as it does there
// (Worker::run_threadgroup_loops in worker.cpp, beside the switches it uses). Here: the
// per-thread storage of the values the loop form keeps across regions.
#include <algorithm>
#include <cstring>

#include "worker.h"

namespace mtlsim::detail {

void* Worker::loop_frame(size_t bytes, size_t align, int fill) {
  const size_t need = bytes * size_ + align;
  if (frame_block_ < frame_blocks_.size() && frame_used_ + need > frame_block_bytes_[frame_block_]) {
    ++frame_block_;
    frame_used_ = 0;
  }
  if (frame_block_ == frame_blocks_.size()) {
    const size_t block = std::max<size_t>(need, 1 << 20);
    frame_blocks_.push_back(std::make_unique<unsigned char[]>(block));
    frame_block_bytes_.push_back(block);
  }
  unsigned char* base = frame_blocks_[frame_block_].get();
  uintptr_t at = (reinterpret_cast<uintptr_t>(base) + frame_used_ + align - 1) & ~uintptr_t(align - 1);
  frame_used_ = at + bytes * size_ - reinterpret_cast<uintptr_t>(base);
  void* p = reinterpret_cast<void*>(at);
  if (fill >= 0) std::memset(p, fill, bytes * size_);
  return p;
}

void* loop_frame(size_t bytes, size_t align, int fill) {
  return this_thread_worker().loop_frame(bytes, align, fill);
}

}  // namespace mtlsim::detail
