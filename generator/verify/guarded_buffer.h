#pragma once
// Buffers for simulated kernels between two inaccessible pages, aligned as Metal aligns them:
// MTLBuffers are page-aligned, and kernels rely on at least 16 bytes (a float4 load from a float
// buffer). Placed at the end of its pages, a buffer starts on a 16-byte boundary as close to the
// trailing page as that allows: an access past the end of the 16-byte-rounded size faults at once,
// and the few bytes of alignment slack in between hold canaries, checked after each run. Placed at
// the start, a buffer is page-aligned and one element before the start faults; its slack up to
// the trailing page holds canaries too. Runs of a case alternate the two, so both ends are exact
// to the element somewhere. A registry lets the crash handler name the buffer and element a fault
// hit.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace mtlgen::verify {

class GuardedBuffer {
 public:
  static constexpr size_t kAlignment = 16;  // Metal's minimum for any buffer binding

  GuardedBuffer(std::string name, size_t bytes, size_t element_size);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  enum class Placement { flush_end, flush_start };
  // Moves the buffer within its pages and fills the slack after it with canaries; the contents
  // are not kept.
  void place(Placement p);

  // A canary in the slack after the buffer that no longer holds its value (something wrote past
  // the end): the index of the first such element (counting on from the last one). Reads of the
  // slack see NaN canaries (f32, f16 and bf16 alike), which show in the outputs.
  std::optional<size_t> overwritten_canary() const;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  size_t elements() const { return bytes_ / element_size_; }
  size_t element_size() const { return element_size_; }
  const std::string& name() const { return name_; }
  // The bytes from the end of the buffer to its trailing guard page, which hold canaries.
  size_t slack_bytes() const;

 private:
  uint8_t canary(size_t offset_from_data) const;

  std::string name_;
  size_t bytes_ = 0, element_size_ = 1, mapped_ = 0, body_ = 0;
  char* map_ = nullptr;
  char* data_ = nullptr;
  uint8_t canary_id_ = 0;  // the payload of this buffer's canary NaN
  friend bool describe_fault(uintptr_t address, char* out, size_t out_size);
};

// Writes "element N of buffer `x` (which holds M elements)" for an address in a guard page of a
// live GuardedBuffer; false when the address belongs to none. Async-signal-safe enough for a
// crash handler in a child process that exits right after.
bool describe_fault(uintptr_t address, char* out, size_t out_size);

// ---- the source line of a fault ----
// The case's child remembers the kernel's code object before running it; its crash handler
// appends a marker naming the faulting instruction's offset in that object; the parent, which
// may start programs, turns the marker into the .metal line (addr2line on the object's line
// table, which exists where the module was compiled with -g1, as for --races exact).

void remember_kernel_code(const void* code);
// Where a thread stopped outside the kernel's code (in the simulator's runtime, e.g. the race
// detector's hooks) the kernel's instruction is the first return address into the object on its
// stack: that address minus one, or 0 when none of `words` stack words is one.
uintptr_t kernel_return_address(const uintptr_t* stack, size_t words);
// Writes " [pc 0x<offset> in <object>]" for a pc inside the remembered object; 0 bytes otherwise.
int describe_fault_pc(uintptr_t pc, char* out, size_t out_size);
// `message` with its markers replaced by "at line N" plus what `spec_line(N)` adds (e.g. the
// spec's line), N from the first marker the line table knows; dropped when it knows none.
std::string resolve_fault_pc(const std::string& message, std::string (*spec_line)(int, const void*),
                             const void* context);

}  // namespace mtlgen::verify
