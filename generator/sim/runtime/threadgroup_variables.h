// One worker's storage for threadgroup variables declared in kernel bodies (see "Threadgroup
// variables" in mtlsim/runtime.h). A site is placed in the arena the first time a threadgroup
// of this worker reaches it and keeps that place for the rest of the dispatch: Metal allocates
// every declared variable statically, so the places reached so far are what the 32 KiB limit
// is checked against, and the race detector sees one region per site.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mtlsim/exec.h"

namespace mtlsim::detail {

class ThreadgroupVariables {
 public:
  static constexpr size_t kMetalLimitBytes = 32 * 1024;  // arrays and variables together
  // What the worker reserves: kMetalLimitBytes of variables after aligning the arena to 64.
  static constexpr size_t kArenaBytes = kMetalLimitBytes + 64;

  // A new dispatch: variables go to `arena` (64-aligned, kMetalLimitBytes), after `array_bytes`
  // of arrays.
  void start_dispatch(unsigned char* arena, size_t array_bytes, bool zeroed);
  void start_threadgroup() { ++generation_; }

  // The running threadgroup's storage for site `id`, or null before its first thread got there.
  void* find(uint32_t id) const {
    return id < slots_.size() && slots_[id].generation == generation_ ? slots_[id].storage : nullptr;
  }

  struct Placement {
    void* storage;       // null: the site does not fit in kMetalLimitBytes
    bool new_place;      // first time in this dispatch (to register with the race detector)
    size_t total_bytes;  // threadgroup memory with this site placed
  };
  // For the first thread of a threadgroup to reach `site`: places it if needed and fills it.
  Placement enter(const ThreadgroupVariableSite& site);

 private:
  struct Slot {
    unsigned char* storage = nullptr;
    uint64_t generation = 0;  // threadgroup whose fill it holds
  };
  void fill(const ThreadgroupVariableSite& site, unsigned char* storage) const;

  std::vector<Slot> slots_;  // by site id
  unsigned char* arena_ = nullptr;
  size_t used_ = 0, array_bytes_ = 0;
  uint64_t generation_ = 1;
  bool zeroed_ = false;
};

}  // namespace mtlsim::detail
