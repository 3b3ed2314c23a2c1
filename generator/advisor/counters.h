#pragma once
// The simulator's counters of one case (verify/access_counts.h writes them as JSON) as typed
// values, and what the advisor derives from them: re-reads per buffer, coalescing per site.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtlgen::advisor {

struct BufferCounts {
  std::string name;
  uint64_t bytes = 0;  // the buffer's size
  uint64_t loaded = 0, stored = 0;                // bytes, every access counted
  uint64_t unique_loaded = 0, unique_stored = 0;  // bytes touched at least once
  double rereads() const { return unique_loaded ? double(loaded) / double(unique_loaded) : 0; }
};

struct SiteCounts {
  std::string buffer;
  bool store = false;
  int line = 0;       // of the .metal the simulator ran; 0: unknown
  int spec_line = 0;  // of the spec (or hand-written .metal); 0: outside the spec's code
  std::string file;   // the local header of a hand-written kernel spec_line is in; empty: the kernel's file
  uint64_t accesses = 0, bytes = 0;
  uint64_t simd_accesses = 0, lanes = 0, distinct_bytes = 0, segments32 = 0, segments64 = 0, segments128 = 0;
  uint64_t ideal_segments32 = 0;  // the fewest 32-byte segments that hold the distinct bytes
  uint64_t sampled_bytes = 0;     // bytes the lanes requested in the sampled simdgroup accesses
  // The 32-byte segments a simdgroup's access touches per segment its bytes need (1: perfectly
  // coalesced, a broadcast included; 8: each lane's float in a segment of its own). 1 when
  // nothing was sampled.
  double coalescing() const { return ideal_segments32 ? double(segments32) / double(ideal_segments32) : 1; }
  double mean_lanes() const { return simd_accesses ? double(lanes) / double(simd_accesses) : 0; }
};

struct SimdFunctionCounts {
  std::string function;
  int line = 0, spec_line = 0;
  uint64_t calls = 0, active_lanes = 0;
  std::string file;  // as SiteCounts::file
  double mean_active_lanes() const { return calls ? double(active_lanes) / double(calls) : 0; }
};

struct Counters {
  uint64_t threadgroups[3] = {1, 1, 1};
  uint64_t threads_per_threadgroup[3] = {1, 1, 1};
  uint64_t threadgroup_memory_bytes = 0;
  std::vector<BufferCounts> buffers;
  std::vector<SiteCounts> sites;
  std::vector<SimdFunctionCounts> simd;
  uint64_t barriers = 0;  // threadgroup_barrier calls over all threads

  uint64_t threadgroup_count() const { return threadgroups[0] * threadgroups[1] * threadgroups[2]; }
  uint64_t threads_per_group() const {
    return threads_per_threadgroup[0] * threads_per_threadgroup[1] * threads_per_threadgroup[2];
  }
  uint64_t unique_bytes() const;
  // Bytes-weighted mean of the sites' coalescing factors (1 without sites).
  double coalescing() const;
  double barriers_per_thread() const;
  // Bytes the loads move as the memory sees them (memory_loaded, every input) plus the bytes
  // stored, per unique byte; 1 when nothing was counted.
  double loaded_per_unique_byte() const;
  // The widest load's bytes per access (4 for a float, 16 for a float4), the sites of one buffer
  // at one line taken together; 0 without loads.
  double widest_load_bytes() const;
  // Loads of buffer `b` as the memory sees them: lanes of a simdgroup access that load the same
  // bytes (a broadcast) count once, at the share the sampled load sites measured.
  double memory_loaded(const BufferCounts& b) const;
};

// Throws std::runtime_error naming the first missing or mistyped field (the JSON came from a
// sandboxed child that ran spec code).
Counters counters_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Counters& c);

}  // namespace mtlgen::advisor
