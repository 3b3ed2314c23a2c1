// Threadgroup variables declared in kernel bodies, written the way the MSL front end emits
// them: `threadgroup float sums[64];` becomes
//   auto& sums = ::mtlsim::threadgroup_local<float[64]>([]{}, "sums");
// The original declaration is kept in a comment on each line. Lines the tests expect in reports
// carry a `MARK:` comment.
#include <metal_stdlib>
using namespace metal;

// 2-D threadgroups of 16x4. Every thread writes its slot of a 1-D array and of a 2-D tile; thread
// 0 also writes a scalar and records what the scalar held before (fresh poison, or zero).
// After a barrier each thread reads another thread's slots: out[gid] = sums[mirror] +
// 1000 * tile[3 - y][15 - x], and the scalar goes to tag[gid].
[[kernel]] void share_within_threadgroup(device float* out [[buffer(0)]],
                                         device uint* tag [[buffer(1)]],
                                         device uint* before [[buffer(2)]],
                                         uint2 tid [[thread_position_in_threadgroup]],
                                         uint2 tg [[threadgroup_position_in_grid]],
                                         uint2 tgs [[threadgroups_per_grid]],
                                         uint i [[thread_index_in_threadgroup]]) {
  auto& sums = ::mtlsim::threadgroup_local<float[64]>([]{}, "sums");           // threadgroup float sums[64];
  auto& tile = ::mtlsim::threadgroup_local<float[4][16 + 1]>([]{}, "tile");    // threadgroup float tile[4][16 + 1];
  auto& owner = ::mtlsim::threadgroup_local<uint>([]{}, "owner");              // threadgroup uint owner;
  const uint tg_linear = tg.y * tgs.x + tg.x;
  const uint gid = tg_linear * 64 + i;
  sums[i] = float(gid);
  tile[tid.y][tid.x] = float(tg_linear);
  if (i == 0) {
    before[tg_linear] = owner;
    owner = tg_linear;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = sums[63 - i] + 1000.0f * tile[3 - tid.y][15 - tid.x];
  tag[gid] = owner;
}

// Counts the threads of the threadgroup with an atomic variable (needs zeroed variables).
[[kernel]] void count_threads(device uint* out [[buffer(0)]],
                              uint i [[thread_index_in_threadgroup]],
                              uint tg [[threadgroup_position_in_grid]]) {
  auto& count = ::mtlsim::threadgroup_local<atomic_uint>([]{}, "count");  // threadgroup atomic_uint count;
  atomic_fetch_add_explicit(&count, 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (i == 0) out[tg] = atomic_load_explicit(&count, memory_order_relaxed);
}

// A helper template declaring its own scratch: one site per instantiation, shared by every call
// of that instantiation.
template <typename T, int N>
T threadgroup_total(T v, uint i) {
  auto& partial = ::mtlsim::threadgroup_local<T[N]>([]{}, "partial");  // threadgroup T partial[N];
  partial[i] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  T total = T(0);
  for (int k = 0; k < N; ++k) total += partial[k];
  threadgroup_barrier(mem_flags::mem_threadgroup);  // before a later call overwrites partial
  return total;
}

// The address of a helper's own variable, to compare sites.
template <typename T>
threadgroup T* scratch() {
  auto& slots = ::mtlsim::threadgroup_local<T[4]>([]{}, "slots");  // threadgroup T slots[4];
  return &slots[0];
}

// out[4 * tg + 0..3]: float total of i, int total of 2i, float total of i*i, and 1 when
// instantiations have separate storage and one instantiation has the same at every call.
[[kernel]] void template_helper(device float* out [[buffer(0)]],
                                uint i [[thread_index_in_threadgroup]],
                                uint tg [[threadgroup_position_in_grid]]) {
  const float a = threadgroup_total<float, 32>(float(i), i);
  const int b = threadgroup_total<int, 32>(int(2 * i), i);
  const float c = threadgroup_total<float, 32>(float(i * i), i);
  threadgroup void* f1 = scratch<float>();
  threadgroup void* f2 = scratch<float>();
  threadgroup void* n = scratch<int>();
  if (i == 0) {
    out[4 * tg + 0] = a;
    out[4 * tg + 1] = float(b);
    out[4 * tg + 2] = c;
    out[4 * tg + 3] = f1 == f2 && f1 != n ? 1.0f : 0.0f;
  }
}

// Even threads write their slot; every thread then sums its own slot over the simdgroup, so the
// odd threads hand the variable's poison to simd_sum.
template <typename T>
[[kernel]] void half_written(device float* out [[buffer(0)]],
                             uint i [[thread_index_in_threadgroup]]) {
  auto& vals = ::mtlsim::threadgroup_local<T[64]>([]{}, "vals");  // threadgroup T vals[64];
  if (i % 2 == 0) vals[i] = T(i);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const T total = simd_sum(vals[i]);  // MARK:half_written_sum
  out[i] = float(total);
}
// (Instantiated by the test's launchers: clang, which checks that the shim parses these kernels,
// rejects [[host_name]] on explicit instantiations.)

// A struct variable: its poison is the f32 pattern, even in its integer field.
struct Stats {
  float sum;
  uint count;
};
[[kernel]] void struct_variable(device uint* out [[buffer(0)]],
                                uint i [[thread_index_in_threadgroup]]) {
  auto& stats = ::mtlsim::threadgroup_local<Stats>([]{}, "stats");  // threadgroup Stats stats;
  if (i == 0) out[0] = stats.count;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (i == 1) stats.count = 7;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[1 + i] = stats.count;
}

// 8192 floats are exactly Metal's 32 KiB; `extra` (mode 1) goes past it.
[[kernel]] void big_tile(device float* out [[buffer(0)]],
                         constant uint& mode [[buffer(1)]],
                         uint i [[thread_index_in_threadgroup]]) {
  auto& big = ::mtlsim::threadgroup_local<float[8192]>([]{}, "big");  // threadgroup float big[8192];
  big[i] = float(i);
  if (mode == 1) {
    auto& extra = ::mtlsim::threadgroup_local<float[4]>([]{}, "extra");  // MARK:extra
    extra[0] = 1.0f;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = big[i];
}
