#include "verify/guarded_buffer.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

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
  for (int i = 0; i < kMaxBuffers; ++i) {
    if (!g_live[i]) {
      g_live[i] = this;
      canary_id_ = static_cast<uint8_t>(1 + i % 127);
      break;
    }
  }
  place(Placement::flush_end);
}

void GuardedBuffer::place(Placement p) {
  char* body = map_ + page_size();
  const size_t rounded = (bytes_ + kAlignment - 1) / kAlignment * kAlignment;
  data_ = p == Placement::flush_start ? body : body + body_ - rounded;
  for (size_t i = bytes_; i < bytes_ + slack_bytes(); ++i) data_[i] = static_cast<char>(canary(i));
}

size_t GuardedBuffer::slack_bytes() const {
  return static_cast<size_t>(map_ + page_size() + body_ - (data_ + bytes_));
}

// Bytes of 0x7F8k7F8k, laid out from the buffer's start: a NaN read as f32, f16 or bf16, with a
// payload k of its own per buffer, so that a kernel copying one buffer's slack into another's
// (a vector copy past the end) does not happen to restore the canary.
uint8_t GuardedBuffer::canary(size_t offset_from_data) const {
  return offset_from_data % 2 ? 0x7F : static_cast<uint8_t>(0x80 | canary_id_);
}

std::optional<size_t> GuardedBuffer::overwritten_canary() const {
  for (size_t i = bytes_; i < bytes_ + slack_bytes(); ++i) {
    if (static_cast<uint8_t>(data_[i]) != canary(i)) return i / element_size_;
  }
  return std::nullopt;
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

namespace {
uintptr_t g_code_base = 0, g_code_end = 0;
char g_code_path[1024] = "";
}  // namespace

void remember_kernel_code(const void* code) {
  Dl_info info{};
  if (!::dladdr(code, &info) || !info.dli_fbase || !info.dli_fname) return;
  g_code_base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  g_code_end = g_code_base;
  ::dl_iterate_phdr(  // the end of the object's last loaded segment
      [](dl_phdr_info* o, size_t, void*) {
        if (o->dlpi_addr != g_code_base) return 0;
        for (int i = 0; i < o->dlpi_phnum; ++i) {
          if (o->dlpi_phdr[i].p_type == PT_LOAD)
            g_code_end = std::max<uintptr_t>(g_code_end, o->dlpi_addr + o->dlpi_phdr[i].p_vaddr + o->dlpi_phdr[i].p_memsz);
        }
        return 1;
      },
      nullptr);
  std::snprintf(g_code_path, sizeof g_code_path, "%s", info.dli_fname);
}

uintptr_t kernel_return_address(const uintptr_t* stack, size_t words) {
  for (size_t i = 0; i < words; ++i) {
    if (stack[i] > g_code_base && stack[i] < g_code_end) return stack[i] - 1;  // inside the call instruction
  }
  return 0;
}

int describe_fault_pc(uintptr_t pc, char* out, size_t out_size) {
  if (g_code_base == 0 || pc < g_code_base || pc >= g_code_end || g_code_path[0] != '/') return 0;
  int n = std::snprintf(out, out_size, " [pc 0x%lx in %s]", static_cast<unsigned long>(pc - g_code_base), g_code_path);
  return n > 0 && static_cast<size_t>(n) < out_size ? n : 0;
}

namespace {

// Lines above it are a local header's (msl::kHeaderLineStride: its copy numbers its lines apart).
constexpr int kHeaderLineStride = 1000000;

// The innermost .metal (or local header) line of addr2line's inline chain for `offset` in
// `object`; 0 if none.
int metal_line(const std::string& object, const std::string& offset) {
  std::string command = "addr2line -i -e '" + object + "' " + offset + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return 0;
  int line = 0;
  char text[2048];
  while (line == 0 && std::fgets(text, sizeof text, pipe)) {
    std::string frame(text);
    frame = frame.substr(0, frame.find(" ("));
    size_t colon = frame.rfind(':');
    if (colon == std::string::npos) continue;
    const int at = std::atoi(frame.c_str() + colon + 1);
    if (at > kHeaderLineStride || (colon >= 6 && frame.compare(colon - 6, 6, ".metal") == 0)) line = at;
  }
  ::pclose(pipe);
  return line;
}

}  // namespace

std::string resolve_fault_pc(const std::string& message, std::string (*spec_line)(int, const void*),
                             const void* context) {
  // Several markers: candidates in order (a stub's pc, then the kernel's return address).
  std::string rest = message;
  size_t first = std::string::npos;
  int line = 0;
  for (size_t at; (at = rest.find(" [pc 0x", first == std::string::npos ? 0 : first)) != std::string::npos;) {
    size_t in = rest.find(" in /", at);
    size_t end = rest.find(']', in == std::string::npos ? at : in);
    if (in == std::string::npos || end == std::string::npos) break;
    const std::string offset = rest.substr(at + 5, in - at - 5), object = rest.substr(in + 4, end - in - 4);
    // The object path comes from the child: only a plain path is handed to the shell.
    bool plain = object.find_first_of("'\\\n") == std::string::npos &&
                 offset.find_first_not_of("0123456789abcdefx") == std::string::npos;
    if (line == 0 && plain) line = metal_line(object, offset);
    rest.erase(at, end + 1 - at);
    first = at;
  }
  if (first == std::string::npos) return message;
  // A header's line shows as its own; spec_line names the header.
  std::string where = line > 0 ? " at line " + std::to_string(line % kHeaderLineStride) + spec_line(line, context) : "";
  return rest.insert(first, where);
}

}  // namespace mtlgen::verify
