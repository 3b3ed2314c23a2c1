// MSL source as the simulator compiles it.
//
// The shim defines `threadgroup` as an empty macro (an address space means nothing on the
// CPU), which also turns the parameter attribute [[threadgroup(0)]] into `[[(0)]]`, a syntax
// error; no macro can keep both spellings valid. So the simulator compiles a copy of each
// .metal file in which that one attribute is respelled with a name of the same length:
//   threadgroup float* p [[threadgroup(0)]]  ->  threadgroup float* p [[mtlsim_tgrp(0)]]
// Nothing else changes: lines and columns stay put, so compiler messages and the simulator's
// line numbers refer to the original file. From CMake use mtlsim_prepare_msl() (defined in
// generator/sim/CMakeLists.txt), which does the same rewrite at build time.
#pragma once

#include <string>
#include <string_view>

namespace mtlsim {

std::string prepare_msl_for_sim(std::string_view msl);

}  // namespace mtlsim
