// Counters of simd-group functions and threadgroup barriers for the performance advisor
// (`mtlgen report`): how many lanes are active at each simd function, how many barriers each
// thread passes. The shim's barrier and collective code call these macros; they expand to
// nothing unless the TU is compiled with -DMTLSIM_COUNTERS (verify's access-counted modules,
// ModuleOptions::access_counted), so ordinary simulator modules pay nothing.
#pragma once

#include <cstdint>

#if defined(MTLSIM_COUNTERS)
// Defined by the runtime (runtime/access_counter.cpp); recorded while access counting is on.
extern "C" void mtlsim_count_barrier(int line);
extern "C" void mtlsim_count_simd(uint8_t op, int line, uint32_t active_lanes);
#define MTLSIM_COUNT_BARRIER(line) mtlsim_count_barrier(line)
#define MTLSIM_COUNT_SIMD(op, line, lanes) mtlsim_count_simd(uint8_t(op), line, lanes)
#else
#define MTLSIM_COUNT_BARRIER(line) ((void)0)
#define MTLSIM_COUNT_SIMD(op, line, lanes) ((void)0)
#endif
