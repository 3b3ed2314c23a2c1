// Fiber stacks for one worker thread: one mmap'd region, carved into fixed-size stacks each
// below a PROT_NONE guard page, mapped once and reused by every threadgroup the worker runs.
#pragma once

#include <cstddef>

namespace mtlsim::detail {

class StackPool {
 public:
  StackPool(size_t count, size_t stack_bytes);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  // Highest address (exclusive) of stack i; stacks grow down.
  void* top(size_t i) const { return base_ + (i + 1) * stride_; }
  size_t stack_bytes() const { return stack_bytes_; }

 private:
  char* base_ = nullptr;
  size_t stride_ = 0, stack_bytes_ = 0, count_ = 0;
};

// An alternate signal stack for the calling OS thread, so a SIGSEGV handler can run after a
// fiber overflows into its guard page. Leaves a stack installed by someone else alone.
class AltStack {
 public:
  AltStack();
  ~AltStack();
  AltStack(const AltStack&) = delete;
  AltStack& operator=(const AltStack&) = delete;

 private:
  void* mem_ = nullptr;
};

}  // namespace mtlsim::detail
