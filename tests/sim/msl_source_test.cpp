// The source rewrite that lets [[threadgroup(n)]] survive the shim's `threadgroup` macro.
#include <gtest/gtest.h>

#include "mtlsim/msl_source.h"

namespace {

TEST(MslSource, RespellsOnlyTheThreadgroupAttribute) {
  const std::string msl =
      "kernel void k(threadgroup float* a [[threadgroup(0)]],\n"
      "              threadgroup uint* b [[ threadgroup (1) ]],\n"
      "              uint i [[thread_position_in_threadgroup]]) {\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "}\n";
  const std::string sim = mtlsim::prepare_msl_for_sim(msl);
  EXPECT_EQ(sim,
            "kernel void k(threadgroup float* a [[mtlsim_tgrp(0)]],\n"
            "              threadgroup uint* b [[ mtlsim_tgrp (1) ]],\n"
            "              uint i [[thread_position_in_threadgroup]]) {\n"
            "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
            "}\n");
  EXPECT_EQ(sim.size(), msl.size());  // columns stay put
}

TEST(MslSource, LeavesOtherTextAlone) {
  const std::string msl = "a[[i]] = b[[threadgroup_imageblock]]; // [[threadgroup";
  EXPECT_EQ(mtlsim::prepare_msl_for_sim(msl), msl);
}

}  // namespace
