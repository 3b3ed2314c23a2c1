#include "verify/guarded_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <new>

namespace mtlgen::verify {

namespace {

// Fixed-size registry: the crash handler must not allocate or lock.
constexpr int kMaxBuffers = 64;
GuardedBuffer* g_live[kMaxBuffers] = {};

size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

}  // namespace

GuardedBuffer::GuardedBuffer(std::string name, size_t bytes, size_t element_size)
    : name_(std::move(name)), bytes_(bytes), element_size_(element_size ? element_size : 1) {
  size_t page = page_size();
  body_ = (bytes + page - 1) / page * page;
  mapped_ = body_ + 2 * page;  // guard page, body, guard page
  void* m = ::mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  map_ = static_cast<char*>(m);
  if (body_ && ::mprotect(map_ + page, body_, PROT_READ | PROT_WRITE) != 0) throw std::bad_alloc();
  place(Placement::flush_end);
  for (auto& slot : g_live) {
    if (!slot) {
      slot = this;
      break;
    }
  }
}

void GuardedBuffer::place(Placement p) {
  char* body = map_ + page_size();
  data_ = p == Placement::flush_start ? body : body + body_ - bytes_;
}

GuardedBuffer::~GuardedBuffer() {
  for (auto& slot : g_live) {
    if (slot == this) slot = nullptr;
  }
  ::munmap(map_, mapped_);
}

bool describe_fault(uintptr_t address, char* out, size_t out_size) {
  for (const GuardedBuffer* b : g_live) {
    if (!b) continue;
    auto begin = reinterpret_cast<uintptr_t>(b->map_), end = begin + b->mapped_;
    if (address < begin || address >= end) continue;
    auto data = reinterpret_cast<intptr_t>(b->data_);
    long long element = (static_cast<intptr_t>(address) - data) / static_cast<intptr_t>(b->element_size_);
    if (static_cast<intptr_t>(address) < data) element = -1 - (data - static_cast<intptr_t>(address) - 1) / static_cast<intptr_t>(b->element_size_);
    std::snprintf(out, out_size, "element %lld of buffer `%s`, which holds %zu elements%s", element, b->name_.c_str(),
                  b->bytes_ / b->element_size_, element < 0 ? " (before its start)" : "");
    return true;
  }
  return false;
}

}  // namespace mtlgen::verify
