// Exact data-race detection for one dispatch (DispatchOptions::detect_races): shadow state per
// element of tracked memory, checked against Metal's happens-before order (see "Data races" in
// mtlsim/runtime.h). Kernels compiled with g++ -fsanitize=thread call the __tsan_* entry points
// in race_tsan_abi.cpp, which hand accesses to tracked memory to the active detector.
//
// Runs on one worker: the shadow state is not locked, and threadgroups run one after another,
// so "the current threadgroup" is well defined and the shadow of threadgroup memory needs no
// reset (entries of earlier threadgroups are recognised as stale and ignored).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "mtlsim/exec.h"
#include "mtlsim/runtime.h"

namespace mtlsim::detail {

class RaceDetector;

// What the instrumentation entry points test before calling the detector: two address windows
// (device buffers; threadgroup memory), so that stack and runtime accesses cost two compares.
// All zero (no window) outside a race-detecting dispatch.
struct RaceHooks {
  uintptr_t device_lo = 0, device_span = 0;
  uintptr_t tg_lo = 0, tg_span = 0;
  RaceDetector* detector = nullptr;
};
extern RaceHooks race_hooks;

enum AccessKind : uint8_t { kRead = 0, kWrite = 1, kAtomic = 2 };

class RaceDetector {
 public:
  // kernel_code: any address in the kernel's object (its KernelThreadFn): recorded pcs are
  // 32-bit offsets into that object (pcs outside it are recorded as unknown).
  RaceDetector(const DispatchOptions& options, const void* kernel_code);
  ~RaceDetector();
  RaceDetector(const RaceDetector&) = delete;
  RaceDetector& operator=(const RaceDetector&) = delete;

  // Worker hooks. start() registers this worker's threadgroup arrays, puts the arena of its
  // threadgroup variables in the threadgroup window, and activates the hooks.
  void start(void* const* threadgroup_arrays, const void* variable_arena, size_t arena_bytes);
  // A threadgroup variable got its place in the arena (once per site and dispatch).
  void add_threadgroup_variable(const char* name, const void* data, size_t bytes, size_t element_size);
  void begin_threadgroup(uint64_t linear);
  // `line`: the barrier's source line (reports tell a race across loop iterations by it).
  void threadgroup_barrier(uint32_t flags, int line);
  void simdgroup_barrier(uint32_t simdgroup, uint32_t flags);
  // A simd function other than simdgroup_barrier completed in `simdgroup`: every active lane had
  // computed its argument, so a read that lane made before it has been consumed.
  void simd_function(uint32_t simdgroup);
  // Deactivates the hooks and moves the findings into `result`.
  void finish(DispatchResult& result);

  // From the instrumentation: [address, address + size) was accessed at `pc`.
  void access(uintptr_t address, size_t size, uint8_t kind, uintptr_t pc);
  // A function of the simulated thread was entered from `call_site` / returned. Kept per thread
  // so a report can name where an out-of-line helper was called from.
  void enter(uintptr_t call_site);
  void leave();

 private:
  enum Space : uint8_t { kDevice = 0, kThreadgroup = 1 };

  // One recorded access; tg == 0 means none.
  struct Access {
    uint32_t tg;           // linear threadgroup index + 1
    uint32_t pc;           // offset from code_base_
    uint32_t call_site;    // offset of the call into the function holding pc; 0: unknown
    uint32_t tg_barriers;  // threadgroup barriers its threadgroup had completed before it
    uint32_t sg_barriers;  // simdgroup barriers its simdgroup had completed before it
    uint32_t simd_functions;  // simd functions its simdgroup had completed before it
    uint16_t thread;       // linear index in the threadgroup
    uint8_t kind;          // AccessKind bits
    uint8_t unused;
  };
  // Shadow of one element: the last write, and up to two reads since it, chosen so that a
  // later access races with one of them whenever it races with any read since the write.
  struct Cell {
    Access write, read[2];
  };
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  struct Region {
    uintptr_t lo, hi;
    size_t element_size;
    Space space;
    bool variable;  // a threadgroup variable declared in the kernel body
    std::string name;
    std::unique_ptr<Cell[], FreeDeleter> shadow;
  };
  // Barrier history of the current threadgroup: cum[space][k] = how many of its first k
  // barriers ordered that space.
  struct BarrierLog {
    std::vector<uint32_t> cum[2];
    uint32_t count() const { return uint32_t(cum[0].size() - 1); }
    void reset();
    void add(uint32_t flags);
  };

  // A plain store racing only with an earlier plain store, judged once it has executed: one that
  // wrote the value the element already held is benign (DispatchOptions::report_same_value_stores).
  struct PendingStore {
    size_t region, element;
    Access earlier, now;
    unsigned char before[16];
  };
  bool defer_store(size_t region_index, size_t element, const Access& earlier, const Access& now);
  void settle_stores();
  static size_t element_bytes(const Region& r, size_t element);

  void add_region(std::string name, const void* data, size_t bytes, size_t element_size, Space space,
                  bool variable = false);
  // whole: the access covers the element (only such a store can be judged by the element's value).
  void on_element(Region& r, size_t region_index, size_t element, const Access& now, bool whole);
  void add_read(Cell& c, const Access& now, Space space) const;
  bool ordered(const Access& earlier, const Access& now, Space space) const;
  bool races(const Access& earlier, const Access& now, Space space) const;
  void report(size_t region_index, size_t element, const Access& earlier, const Access& now);
  // A read ordered before a later write by threadgroup barriers whose mem_flags leave this memory
  // out (mem_none), where the reading thread took part in a simd function after the read and
  // before the first of them: the read had completed before that barrier released any thread.
  bool read_consumed_before_barrier(const Access& earlier, const Access& now) const;
  RaceAccess describe_access(const Access& a) const;
  // DispatchResult::last_writes.
  std::vector<std::vector<RaceAccess>> last_writes() const;

  static constexpr uint32_t kCallDepth = 16;  // call sites kept per thread (kernels do not recurse)
  uint32_t offset_of(uintptr_t pc) const { return pc - code_base_ < code_bytes_ ? uint32_t(pc - code_base_) : 0; }
  uint32_t call_site_of(uint32_t thread) const;

  const DispatchOptions& opts_;
  uintptr_t code_base_ = 0, code_bytes_ = 0;  // the kernel's object: load address and extent
  std::vector<uint32_t> call_sites_;          // kCallDepth per thread of the threadgroup
  std::vector<uint32_t> call_depth_;          // per thread
  std::vector<Region> regions_;
  uint32_t current_tg_ = 0;  // linear index + 1 of the running threadgroup
  BarrierLog tg_log_;
  std::vector<BarrierLog> sg_logs_;  // per simdgroup of the running threadgroup
  std::vector<uint32_t> simd_functions_;  // per simdgroup of the running threadgroup: completed so far
  // Per threadgroup barrier of the running threadgroup: simd_functions_ when it completed, its line.
  std::vector<std::vector<uint32_t>> simd_functions_at_barrier_;
  std::vector<int> barrier_line_at_;
  std::vector<DataRace> races_;
  std::vector<PendingStore> pending_;
  std::set<int> barrier_lines_[2];  // per space: lines of completed threadgroup barriers ordering it
  // (region, pcs, read consumed before an execution-only barrier) -> races_ index
  std::map<std::tuple<size_t, uint32_t, uint32_t, bool>, size_t> seen_;
  uint64_t races_total_ = 0;
};

}  // namespace mtlsim::detail
