#pragma once
// What a kernel's generated host description (<kernel>_types.h, the code the Objective-C++ glue
// runs on the Mac) computes for one dispatch. A simulator module fills it through
// mtlsim_host_dispatch (emitted into its reference bridge), and verify dispatches exactly that:
// a wrong grid, threadgroup size, threadgroup-memory length or parameter struct in the glue's
// code is then a wrong dispatch on Linux too.
#include <cstddef>
#include <cstdint>

namespace mtlsim {

struct HostDispatch {
  static constexpr int kMaxThreadgroupArrays = 31;
  static constexpr int kMaxBuffers = 64;
  static constexpr size_t kMaxParamsBytes = 4096;

  uint64_t threadgroups[3] = {1, 1, 1};             // threadgroups(dims, tuning, types)
  uint64_t threads_per_threadgroup[3] = {1, 1, 1};  // threads_per_threadgroup(dims, tuning)
  uint64_t max_threads_per_threadgroup[3] = {1, 1, 1};
  int threadgroup_arrays = 0;
  uint64_t threadgroup_memory_bytes[kMaxThreadgroupArrays] = {};  // threadgroup_memory_bytes(i, tuning, types)
  int buffers = 0;
  int64_t buffer_elements[kMaxBuffers] = {};  // <buffer>_elements(dims, tuning, types), in spec order
  size_t params_size = 0;
  alignas(16) unsigned char params[kMaxParamsBytes] = {};  // make_params(dims, scalars)
  char entry_point[256] = "";                              // entry_point(types, tuning)
  char error[1024] = "";                                   // what check_dims(dims, tuning, types) threw
};

}  // namespace mtlsim

// `variant`: index into the kernel's variants (each a Tuning and Types); `dims`: the Dims fields in
// spec order; `scalars`: the Scalars fields in spec order. Returns 0, or 1 with `out->error` set
// when check_dims rejects the problem.
using MtlsimHostDispatchFn = int (*)(int variant, const uint64_t* dims, const double* scalars, mtlsim::HostDispatch* out);
