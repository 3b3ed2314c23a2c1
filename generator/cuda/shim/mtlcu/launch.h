// What a generated __global__ wrapper (cuda/<kernel>/launcher.cu) needs: the binding table's
// slots, threadgroup memory carved from dynamic shared memory, and the position builtins from
// CUDA's indices. Simdgroups are warps: 32 consecutive linear thread indices, as on Apple GPUs.
#pragma once

#include <cuda_runtime.h>

#include "mtlcu/vec.h"

namespace mtlsim {
struct HostDispatch;
}

namespace mtlcu {

inline constexpr int kMaxSlots = 96;
inline constexpr int kMaxThreadgroupArrays = 31;

// Passed by value to every wrapper: device pointers in binding-table order (buffers, the
// parameter struct, then a hand-written kernel's argument blobs) and each threadgroup array's
// offset in the dynamic shared memory.
struct Slots {
  void* slot[kMaxSlots];
  unsigned threadgroup_offset[kMaxThreadgroupArrays];
};

extern __shared__ unsigned char threadgroup_memory[];

__device__ inline void* threadgroup_array(const Slots& s, int i) { return threadgroup_memory + s.threadgroup_offset[i]; }

struct Dim3 {
  unsigned x, y, z;
};

__device__ inline Dim3 thread_position_in_grid() {
  return {blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, blockIdx.z * blockDim.z + threadIdx.z};
}
__device__ inline Dim3 thread_position_in_threadgroup() { return {threadIdx.x, threadIdx.y, threadIdx.z}; }
__device__ inline Dim3 threadgroup_position_in_grid() { return {blockIdx.x, blockIdx.y, blockIdx.z}; }
__device__ inline Dim3 threads_per_grid() {
  return {gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z};
}
__device__ inline Dim3 threads_per_threadgroup() { return {blockDim.x, blockDim.y, blockDim.z}; }
__device__ inline Dim3 threadgroups_per_grid() { return {gridDim.x, gridDim.y, gridDim.z}; }
__device__ inline unsigned thread_index_in_threadgroup() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ inline unsigned thread_index_in_simdgroup() { return thread_index_in_threadgroup() % 32u; }
__device__ inline unsigned simdgroup_index_in_threadgroup() { return thread_index_in_threadgroup() / 32u; }
__device__ inline unsigned simdgroups_per_threadgroup() { return (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u; }
__device__ inline unsigned threads_per_simdgroup() { return 32u; }
__device__ inline unsigned thread_execution_width() { return 32u; }

// A builtin as the kernel declares it: `uint` takes x, `uint2` x and y, `ushort3` all three.
template <class T>
__device__ inline T as_builtin(Dim3 d) {
  if constexpr (metal::is_vec<T>::value) {
    using E = typename T::value_type;
    const unsigned xyz[3] = {d.x, d.y, d.z};
    T r;
    for (int i = 0; i < T::size; ++i) r[i] = E(xyz[i]);
    return r;
  } else {
    return T(d.x);
  }
}
template <class T>
__device__ inline T as_builtin(unsigned v) {
  return T(v);
}

// A bound slot becomes whatever pointer or reference type a hand-written kernel declares.
struct AnyPointer {
  void* p;
  template <class T>
  __device__ operator T*() const {
    return static_cast<T*>(p);
  }
};
struct AnyReference {
  void* p;
  template <class T>
  __device__ operator T&() const {
    return *static_cast<T*>(p);
  }
};

// One entry point of a kernel: its host name, and a host function that launches it.
using LaunchFn = cudaError_t (*)(dim3 grid, dim3 block, size_t shared_bytes, const Slots& slots);
struct EntryPoint {
  const char* name;
  LaunchFn launch;
};

// One kernel's launchers (cuda/<kernel>/launcher.cu): its entry points, its function constants
// and the glue's dispatch (the generated host description, as mtlsim_host_dispatch of the
// simulator's bridge, renamed per kernel so that a family's kernels link into one program).
using HostDispatchFn = int (*)(int variant, const uint64_t* dims, const double* scalars, mtlsim::HostDispatch* out);
struct Module {
  const char* kernel;
  const EntryPoint* entry_points;
  int entry_point_count;
  void (*set_function_constants)(const double* values);
  HostDispatchFn host_dispatch;
};

}  // namespace mtlcu
