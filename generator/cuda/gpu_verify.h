#pragma once
// `verify --gpu cuda`: the kernel's shipped MSL, rewritten by the MSL front end into CUDA C++
// (cuda_emitter.h), compiled with nvcc beside the generated host description and reference, and
// run on an NVIDIA GPU. Every selected variant x test case is compared with the reference (inputs
// and comparison as in the simulator path; a kernel family's kernels run in order over one set of
// device buffers, as its glue dispatches them, and the family's reference judges its outputs);
// `--sanitize` also runs each case under compute-sanitizer's memcheck, racecheck, synccheck and
// initcheck and names the .metal and spec lines of what they report. What this can and cannot say
// about Apple GPUs: docs/gpu.md.
#include "verify/verify.h"

namespace mtlgen::cuda {

// What the CLI hands verify as VerifyOptions::gpu_backend for `--gpu cuda`.
const verify::GpuBackend& gpu_backend();

}  // namespace mtlgen::cuda
