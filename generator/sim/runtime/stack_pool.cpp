#include "stack_pool.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

// Tell valgrind where the fiber stacks are, so memcheck does not take every fiber switch for
// a wild stack-pointer jump. Free outside valgrind; skipped where the header is missing.
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MTLSIM_STACK_REGISTER(lo, hi) VALGRIND_STACK_REGISTER(lo, hi)
#else
#define MTLSIM_STACK_REGISTER(lo, hi) 0
#endif

namespace mtlsim::detail {

namespace {
constexpr size_t kAltStackBytes = 64 * 1024;

size_t page_size() { return size_t(sysconf(_SC_PAGESIZE)); }

void* map_or_throw(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mtlsim: mmap of fiber stacks");
  return p;
}
}  // namespace

StackPool::StackPool(size_t count, size_t stack_bytes)
    : stride_(stack_bytes + page_size()), stack_bytes_(stack_bytes), count_(count) {
  base_ = static_cast<char*>(map_or_throw(stride_ * count_));
  // The guard page sits at the low end of each stack slot, where an overflow runs into it.
  for (size_t i = 0; i < count_; ++i) {
    mprotect(base_ + i * stride_, page_size(), PROT_NONE);
    (void)MTLSIM_STACK_REGISTER(base_ + i * stride_ + page_size(), base_ + (i + 1) * stride_);
  }
}

StackPool::~StackPool() { munmap(base_, stride_ * count_); }

AltStack::AltStack() {
  stack_t old{};
  if (sigaltstack(nullptr, &old) == 0 && !(old.ss_flags & SS_DISABLE)) return;
  mem_ = map_or_throw(kAltStackBytes);
  stack_t ss{};
  ss.ss_sp = mem_;
  ss.ss_size = kAltStackBytes;
  if (sigaltstack(&ss, nullptr) != 0) {
    munmap(mem_, kAltStackBytes);
    mem_ = nullptr;
  }
}

AltStack::~AltStack() {
  if (!mem_) return;
  stack_t cur{};
  if (sigaltstack(nullptr, &cur) == 0 && cur.ss_sp == mem_) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
  }
  munmap(mem_, kAltStackBytes);
}

GuardedRegion::GuardedRegion(size_t bytes) {
  const size_t page = page_size();
  bytes_ = (bytes + page - 1) / page * page;
  mapped_ = bytes_ + 2 * kGuardBytes;
  void* p = mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mtlsim: mmap of threadgroup memory");
  map_ = static_cast<unsigned char*>(p);
  data_ = map_ + kGuardBytes;
  if (mprotect(data_, bytes_, PROT_READ | PROT_WRITE) != 0) {
    munmap(map_, mapped_);
    throw std::system_error(errno, std::generic_category(), "mtlsim: mprotect of threadgroup memory");
  }
}

GuardedRegion::~GuardedRegion() { munmap(map_, mapped_); }

}  // namespace mtlsim::detail
