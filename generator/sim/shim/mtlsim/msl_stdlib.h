// The whole shim standard library, behind every <metal_*> header (metal_stdlib, metal_math, ...),
// for running Metal Shading Language kernels as C++ on the CPU (g++ >= 12, -std=c++20,
// -Wno-attributes so [[buffer(0)]] and friends are ignored) and for the MSL front end's clang.
// Each <metal_*> header brings in all of it, so they work in any order and any subset; a name
// reachable here through a header Apple would not have included is harmless.
// Include it after every other header of the TU: it defines the MSL address-space words
// (device, constant, thread, threadgroup) and `kernel` as empty macros, which would break
// later headers that use those words as identifiers (std::thread, for one).
// Execution semantics (fibers, barriers, simd-groups): see mtlsim/runtime.h.
#pragma once
#pragma GCC system_header

#include <cfloat>
// No <cmath>: its global double overloads (::log1p(double)) make calls with half ambiguous
// against a kernel's own float overloads; Metal has no double. The shim uses __builtin_* math.
#include <cstddef>
#include <cstdint>

#include "mtlsim/msl_scalar.h"
#include "mtlsim/msl_traits.h"
#include "mtlsim/msl_vec.h"
#include "mtlsim/msl_math.h"
#include "mtlsim/msl_simd.h"
#include "mtlsim/msl_atomic.h"
#include "mtlsim/msl_launch.h"
#include "mtlsim/msl_threadgroup.h"
#include "mtlsim/msl_loops.h"
#include "mtlsim/msl_limits.h"
#include "mtlsim/msl_math_ext.h"
#include "mtlsim/msl_integer.h"
#include "mtlsim/msl_matrix.h"
#include "mtlsim/msl_simdgroup_matrix.h"
#include "mtlsim/msl_builtins.h"
#include "mtlsim/msl_designators.h"

// What Apple's compiler predefines. The MSL front end passes __METAL_VERSION__ (and
// __HAVE_BFLOAT__) for the file's MSL version; the simulator's g++ gets the default, 3.1.
#ifndef __METAL__
#define __METAL__ 1
#endif
#ifndef __METAL_VERSION__
#define __METAL_VERSION__ 310
#endif
#if __METAL_VERSION__ >= 310 && !defined(__HAVE_BFLOAT__)
#define __HAVE_BFLOAT__ 1
#endif
#ifndef __METAL_MACOS__
#define __METAL_MACOS__ 1
#endif

// Address spaces carry no meaning on the CPU. Threadgroup memory reaches kernels as
// [[threadgroup(n)]] parameters, or as variables declared in bodies, which the MSL front end
// rewrites to mtlsim::threadgroup_local (mtlsim/msl_threadgroup.h); the runtime allocates both
// per threadgroup.
#define device
#define constant
#define thread
#define threadgroup
#ifndef MTLSIM_NO_KERNEL_KEYWORD
#define kernel
#endif
