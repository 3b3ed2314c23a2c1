#pragma once
// The CUDA backend of `--gpu cuda`: what verify and bench compile with nvcc to run a kernel's
// shipped MSL on an NVIDIA GPU. Per kernel, under cuda/<kernel>/: the MSL front end's CUDA
// flavour of the kernel's .metal (msl::Unit::cuda_source, same lines, so nvcc's and
// compute-sanitizer's line numbers are the .metal file's), a launcher with one __global__
// wrapper per variant, generated from the same binding table as the simulator's launcher, and
// host.cpp, the simulator's bridge (host description) under a name of the kernel's own. A kernel
// family gets these for each of its kernels, which run in order over the family's buffers in one
// program; modules.cu lists the kernels a program dispatches and the references it judges by.
// The program links the runner (shim/mtlcu/runner.cu) and the reference. Never shipped.
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::emit {

// Throws std::runtime_error when the front end cannot read a kernel's MSL (a spec that passed
// `mtlgen check` always can). Expects the "types", "reference" and "sim" emitters' files of the
// kernel (and of a family's kernels) beside it.
void emit_cuda(const ir::Kernel& kernel, support::OutputSet& out);

// The files of the program nvcc compiles and links, relative to the module's root.
std::vector<std::string> cuda_compile_units(const ir::Kernel& kernel);

std::string cuda_dir(const ir::Kernel& kernel);            // "cuda/<kernel>/"
std::string cuda_launcher_path(const ir::Kernel& kernel);  // "cuda/<kernel>/launcher.cu"

// The CUDA shim's spelling of an MSL type name: vector types are `mtl_float4` (CUDA's own
// float4 is global), anything else unchanged.
std::string cuda_type_name(const std::string& msl);

}  // namespace mtlgen::emit
