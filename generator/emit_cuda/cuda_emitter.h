#pragma once
// The CUDA backend of `--gpu cuda`: what verify and bench compile with nvcc to run a kernel's
// shipped MSL on an NVIDIA GPU. Per kernel, under cuda/<kernel>/: the MSL front end's CUDA
// flavour of the kernel's .metal (msl::Unit::cuda_source, same lines, so nvcc's and
// compute-sanitizer's line numbers are the .metal file's) and a launcher with one __global__
// wrapper per variant, generated from the same binding table as the simulator's launcher. The
// module links the simulator's reference bridge (host description and reference) and the runner
// (shim/mtlcu/runner.cu). Never shipped.
#include <string>

#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::emit {

// Throws std::runtime_error when the front end cannot read the kernel's MSL (a spec that passed
// `mtlgen check` always can) and std::invalid_argument for a kernel family (not supported).
void emit_cuda(const ir::Kernel& kernel, support::OutputSet& out);

std::string cuda_dir(const ir::Kernel& kernel);            // "cuda/<kernel>/"
std::string cuda_launcher_path(const ir::Kernel& kernel);  // "cuda/<kernel>/launcher.cu"

// The CUDA shim's spelling of an MSL type name: vector types are `mtl_float4` (CUDA's own
// float4 is global), anything else unchanged.
std::string cuda_type_name(const std::string& msl);

}  // namespace mtlgen::emit
