#pragma once
// The loop form of a kernel function (msl::Unit::loop_form, generator/msl/msl_loop_rewrite.cpp):
// a type of the IR because a hand-written kernel carries its file's forms from the spec's parse
// to the simulator (SourceKernel::loop_forms), which has no parse of its own for them.
#include <string>
#include <vector>

namespace mtlgen::ir {

struct LoopFormKernel {
  std::string function;       // the kernel's C++ function (template) name
  std::string loop_function;  // `mtlsim_loops_<function>`, same template parameters, the kernel's
                              // parameters plus `const mtlsim::detail::LoopRun&`; empty: refused
  std::string text;           // its definition, C++ for the simulator (#line-ed); empty: refused
  int after_line = 0;         // the line the kernel's definition ends on: `text` goes after it
  std::string header;         // the header the kernel is defined in, by the path a copy of the tree
                              // finds it under (msl::Unit::Header::key); "": the main file
  int line_base = 0;          // a header's: what its simulator copy adds to its lines
                              // (n * msl::kHeaderLineStride, after the copy's first `#line`)
  std::string refusal;        // why there is none, e.g. "a barrier or simd function inside a
                              // statement (a branch, a loop or an expression)"
  int refusal_line = 0;       // the line that decided it (0: none)
};

// `file` (the simulator's copy of the file the forms were made of: same lines) with each form
// inserted right after the line its kernel's definition ends on, where what the kernel names is
// still declared (ggml `#undef`s the macro a kernel's body uses right after it), then
// `#line` so that the lines after it keep their numbers in reports. Only the forms of kernels
// defined in `header` ("": the main file) go in; a header's copy starts with its own `#line`
// (msl::header_line_directive), one line above the header's line 1.
std::string with_loop_forms(std::string file, const std::vector<LoopFormKernel>& forms, const std::string& header = "");

}  // namespace mtlgen::ir
