#include "threadgroup_variables.h"

#include <atomic>
#include <cstring>

#include "mtlsim/runtime.h"

namespace mtlsim::detail {

uint32_t new_threadgroup_variable_id() {
  static std::atomic<uint32_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void ThreadgroupVariables::start_dispatch(unsigned char* arena, size_t array_bytes, bool zeroed) {
  for (Slot& s : slots_) s = Slot{};
  arena_ = arena;
  array_bytes_ = array_bytes;
  used_ = 0;
  zeroed_ = zeroed;
}

ThreadgroupVariables::Placement ThreadgroupVariables::enter(const ThreadgroupVariableSite& site) {
  if (site.id >= slots_.size()) slots_.resize(site.id + 1);
  Slot& slot = slots_[site.id];
  const bool new_place = slot.storage == nullptr;
  if (new_place) {
    // Aligned as an address, so over-aligned types work whatever the arena's alignment.
    const uintptr_t next = reinterpret_cast<uintptr_t>(arena_) + used_;
    const uintptr_t at = (next + site.alignment - 1) & ~uintptr_t(site.alignment - 1);
    const size_t used = at - reinterpret_cast<uintptr_t>(arena_) + site.bytes;
    if (array_bytes_ + used > kMetalLimitBytes) return {nullptr, false, array_bytes_ + used};
    slot.storage = reinterpret_cast<unsigned char*>(at);
    used_ = used;
  }
  slot.generation = generation_;
  fill(site, slot.storage);
  return {slot.storage, new_place, array_bytes_ + used_};
}

void ThreadgroupVariables::fill(const ThreadgroupVariableSite& site, unsigned char* storage) const {
  if (zeroed_) {
    std::memset(storage, 0, site.bytes);
    return;
  }
  const uint32_t half_bits = site.poison == PoisonKind::f16 ? poison_bits_f16() : poison_bits_bf16();
  const uint32_t word = site.poison == PoisonKind::f32 ? poison_bits_f32() : half_bits | half_bits << 16;
  size_t i = 0;
  for (; i + 4 <= site.bytes; i += 4) std::memcpy(storage + i, &word, 4);  // little-endian, as Metal
  for (; i < site.bytes; ++i) storage[i] = uint8_t(word >> (8 * (i % 4)));
}

}  // namespace mtlsim::detail
