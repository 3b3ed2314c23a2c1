#pragma once
// The names the generated files derive from a spec's names, assigned once by the front end
// (spec/name_assigner.h), which reports every collision at the spec's line. Emitters read these
// and derive no names of their own; rules in docs/host-glue.md, "Names".
#include <string>
#include <vector>

namespace mtlgen::ir {

// How the Objective-C++ glue names one buffer.
struct BufferNames {
  std::string label;   // selector piece and parameter: x_offset -> xOffset
  std::string offset;  // its byte offset's selector piece and parameter: label + "Offset"
  std::string camel;   // inside method names: new<XOffset>BufferForDims
};

struct KernelNames {
  std::string camel;          // RmsNorm, Q8_0Matvec: the stem of the Objective-C and C++ type names
  std::string objc_class;     // MTGRmsNorm; with Dims, Scalars, Types, Tuning, FunctionConstants appended:
                              // the typedefs of its header
  std::string property;       // rmsNorm: MTGKernelLibrary's property, a family's initializer piece
  std::string facade_class;   // RmsNormKernel, in cpp_namespace
  std::string cpp_namespace;  // mtlgen::kernels::rms_norm
  std::string directory;      // rms_norm: where the kernel's files go (relative to the output)
  // File names under `directory`.
  std::string metal;             // rms_norm.metal
  std::string types_header;      // rms_norm_types.h
  std::string reference_header;  // rms_norm_reference.h
  std::string reference_source;  // rms_norm_reference.cpp
  std::string objc_header;       // MTGRmsNorm.h
  std::string objc_source;       // MTGRmsNorm.mm
  std::string facade_header;     // rms_norm.h
  std::string harness_header;    // rms_norm_harness.h
  std::string test_data_header;  // rms_norm_test_data.h
  std::string bench_source;      // bench_rms_norm.mm (and the CMake target bench_rms_norm)
  std::string autotune_source;   // autotune_rms_norm.mm (and the CMake target autotune_rms_norm)
  std::vector<BufferNames> buffers;  // per Kernel::buffers
  // Families: per dispatch, how the glue names it: the local `partial`, the struct PartialDispatch
  // made by MakePartialDispatch.
  std::vector<std::string> dispatch_locals;
  std::vector<std::string> dispatch_structs;

  // `directory/file`: where a file of this kernel goes.
  std::string path(const std::string& file) const { return directory + "/" + file; }
  // Every file name above, for checks across kernels.
  std::vector<std::string> files() const {
    return {metal, types_header, reference_header, reference_source, objc_header, objc_source, facade_header,
            harness_header, test_data_header, bench_source, autotune_source};
  }
};

}  // namespace mtlgen::ir
