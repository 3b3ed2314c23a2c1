#pragma once
// Buffers for simulated kernels whose last byte sits right before an inaccessible page, so an
// access one element past the end faults at once (exact, not page-granular, for overruns), plus
// a registry the crash handler uses to name the buffer and element a fault hit.
#include <cstddef>
#include <cstdint>
#include <string>

namespace mtlgen::verify {

class GuardedBuffer {
 public:
  GuardedBuffer(std::string name, size_t bytes, size_t element_size);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  size_t bytes_ = 0, element_size_ = 1, mapped_ = 0;
  char* map_ = nullptr;
  char* data_ = nullptr;
  friend bool describe_fault(uintptr_t address, char* out, size_t out_size);
};

// Writes "element N of buffer `x` (which holds M elements)" for an address in a guard page of a
// live GuardedBuffer; false when the address belongs to none. Async-signal-safe enough for a
// crash handler in a child process that exits right after.
bool describe_fault(uintptr_t address, char* out, size_t out_size);

}  // namespace mtlgen::verify
