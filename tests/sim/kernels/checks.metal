// Kernels with the bugs the simulator must report. Lines the tests expect in reports carry a
// `MARK:` comment.
#include <metal_stdlib>
using namespace metal;

[[kernel]] void early_exit(device float* out [[buffer(0)]],
                           constant uint& n [[buffer(1)]],
                           threadgroup float* tmp [[threadgroup(0)]],
                           uint tid [[thread_position_in_threadgroup]]) {
  if (tid >= n) return;
  tmp[tid] = float(tid);
  threadgroup_barrier(mem_flags::mem_threadgroup);  // MARK:early_exit_barrier
  out[tid] = tmp[(tid + 1) % n];
}

[[kernel]] void divergent_barriers(device float* out [[buffer(0)]],
                                   uint tid [[thread_position_in_threadgroup]]) {
  if (tid < 64) {
    out[tid] = 1.0f;
    threadgroup_barrier(mem_flags::mem_device);  // MARK:barrier_a
  } else {
    out[tid] = 2.0f;
    threadgroup_barrier(mem_flags::mem_device);  // MARK:barrier_b
  }
}

[[kernel]] void divergent_simd(device float* out [[buffer(0)]],
                               uint tid [[thread_position_in_threadgroup]],
                               uint lane [[thread_index_in_simdgroup]]) {
  float v = float(tid);
  if (lane < 16) {
    v = simd_sum(v);  // MARK:simd_a
  } else {
    v = simd_max(v);  // MARK:simd_b
  }
  out[tid] = v;
}

[[kernel]] void simd_vs_barrier(device float* out [[buffer(0)]],
                                uint tid [[thread_position_in_threadgroup]],
                                uint lane [[thread_index_in_simdgroup]]) {
  float v = float(tid);
  if (lane < 8) v = simd_sum(v);  // MARK:simd_partial
  threadgroup_barrier(mem_flags::mem_none);  // MARK:after_partial
  out[tid] = v;
}

template <typename T>
[[kernel]] void uninit_read(device float* out [[buffer(0)]],
                            threadgroup T* tmp [[threadgroup(0)]],
                            uint tid [[thread_position_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]]) {
  T v = tmp[lane] * T(2) + T(1);  // nobody wrote tmp
  v = simd_sum(v);  // MARK:uninit_sum
  out[tid] = float(v);
}
// Lanes 8-31 pass never-written slots into three collectives: the poison must reach exactly the
// lanes whose results depend on it.
[[kernel]] void poison_lanes(device float* out [[buffer(0)]],
                             threadgroup float* tmp [[threadgroup(0)]],
                             uint lane [[thread_index_in_simdgroup]]) {
  if (lane < 8) tmp[lane] = float(lane);
  simdgroup_barrier(mem_flags::mem_threadgroup);
  out[lane] = simd_prefix_exclusive_sum(tmp[lane]);  // MARK:poison_prefix
  out[32 + lane] = simd_max(tmp[lane]);  // MARK:poison_max
  out[64 + lane] = simd_shuffle(tmp[lane], ushort(lane % 8));  // MARK:poison_shuffle
}

template [[host_name("uninit_read_f32")]] [[kernel]] void uninit_read<float>(
    device float*, threadgroup float*, uint, uint);
template [[host_name("uninit_read_f16")]] [[kernel]] void uninit_read<half>(
    device float*, threadgroup half*, uint, uint);

// Only threadgroup `bad_group` has a thread that skips the barrier.
[[kernel]] void one_bad_group(device float* out [[buffer(0)]],
                              constant uint& bad_group [[buffer(1)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_position_in_threadgroup]],
                              uint gid [[thread_position_in_grid]]) {
  if (group == bad_group && tid == 3) return;
  threadgroup_barrier(mem_flags::mem_none);  // MARK:bad_group_barrier
  out[gid] = 1.0f;
}

// A tree reduction with a barrier inside a loop: correct, many barriers on one line.
[[kernel]] void tree_sum(device const float* x [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         threadgroup float* tmp [[threadgroup(0)]],
                         uint group [[threadgroup_position_in_grid]],
                         uint tid [[thread_position_in_threadgroup]],
                         uint gid [[thread_position_in_grid]],
                         uint tg_size [[threads_per_threadgroup]]) {
  tmp[tid] = x[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint s = tg_size / 2; s > 0; s >>= 1) {
    if (tid < s) tmp[tid] += tmp[tid + s];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (tid == 0) out[group] = tmp[0];
}

// Builtins of a 3D dispatch, as uint3 / ushort / uint parameters.
[[kernel]] void builtins_3d(device uint* out [[buffer(0)]],
                            uint3 gpos [[thread_position_in_grid]],
                            ushort3 tpos [[thread_position_in_threadgroup]],
                            uint3 group [[threadgroup_position_in_grid]],
                            uint3 grid [[threads_per_grid]],
                            ushort index [[thread_index_in_threadgroup]],
                            uint sg [[simdgroup_index_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]]) {
  const uint linear = gpos.x + grid.x * (gpos.y + grid.y * gpos.z);
  device uint* o = out + linear * 6;
  o[0] = gpos.x | (gpos.y << 8) | (gpos.z << 16);
  o[1] = uint(tpos.x) | (uint(tpos.y) << 8) | (uint(tpos.z) << 16);
  o[2] = group.x | (group.y << 8) | (group.z << 16);
  o[3] = index;
  o[4] = sg;
  o[5] = lane;
}

// Records which thread the runtime says is running, as a crash handler would ask.
[[kernel]] void who_am_i(device uint* out [[buffer(0)]],
                         uint gid [[thread_position_in_grid]]) {
  simdgroup_barrier(mem_flags::mem_none);
  out[gid] = gid;
}
