// Fiber stacks for one worker thread: one mmap'd region, carved into fixed-size stacks each
// below a PROT_NONE guard page, mapped once and reused by every threadgroup the worker runs.
#pragma once

#include <cstddef>
#include <cstdint>

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

// A worker's threadgroup memory: `bytes` read-write between two PROT_NONE reservations of
// kGuardBytes each, so that an index far past (or before) a threadgroup array, `t[100000]`,
// faults instead of silently writing whatever lies there; the crash handler names it
// (describe_threadgroup_address in mtlsim/runtime.h).
class GuardedRegion {
 public:
  static constexpr size_t kGuardBytes = size_t(16) << 20;  // reserved address space, never touched

  explicit GuardedRegion(size_t bytes);
  ~GuardedRegion();
  GuardedRegion(const GuardedRegion&) = delete;
  GuardedRegion& operator=(const GuardedRegion&) = delete;

  unsigned char* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  // Inside the region or its guards.
  bool covers(uintptr_t address) const {
    return address >= reinterpret_cast<uintptr_t>(map_) && address < reinterpret_cast<uintptr_t>(map_) + mapped_;
  }

 private:
  unsigned char* map_ = nullptr;
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0, mapped_ = 0;
};

}  // namespace mtlsim::detail
