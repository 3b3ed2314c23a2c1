#pragma once
// Buffers for simulated kernels between two inaccessible pages. Placed flush against the trailing
// page, an access one element past the end faults at once; placed flush against the leading page,
// one element before the start does. Runs of a case alternate the two, so both ends are exact
// somewhere. A registry lets the crash handler name the buffer and element a fault hit.
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

  enum class Placement { flush_end, flush_start };
  // Moves the buffer within its pages; the contents are not kept.
  void place(Placement p);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  size_t bytes_ = 0, element_size_ = 1, mapped_ = 0, body_ = 0;
  char* map_ = nullptr;
  char* data_ = nullptr;
  friend bool describe_fault(uintptr_t address, char* out, size_t out_size);
};

// Writes "element N of buffer `x` (which holds M elements)" for an address in a guard page of a
// live GuardedBuffer; false when the address belongs to none. Async-signal-safe enough for a
// crash handler in a child process that exits right after.
bool describe_fault(uintptr_t address, char* out, size_t out_size);

}  // namespace mtlgen::verify
