#include "advisor/counters.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace mtlgen::advisor {

namespace {

using Json = nlohmann::json;

const Json& field(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw std::runtime_error(std::string("counters: `") + key + "` is missing");
  return j.at(key);
}

uint64_t count(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_number_unsigned()) throw std::runtime_error(std::string("counters: `") + key + "` is not a count");
  return v.get<uint64_t>();
}

int line(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_number_integer()) throw std::runtime_error(std::string("counters: `") + key + "` is not a line");
  return v.get<int>();
}

std::string text(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_string()) throw std::runtime_error(std::string("counters: `") + key + "` is not text");
  return v.get<std::string>();
}

void triple(const Json& j, const char* key, uint64_t (&out)[3]) {
  const Json& v = field(j, key);
  if (!v.is_array() || v.size() != 3) throw std::runtime_error(std::string("counters: `") + key + "` is not 3 counts");
  for (size_t i = 0; i < 3; ++i) {
    if (!v[i].is_number_unsigned()) throw std::runtime_error(std::string("counters: `") + key + "` is not 3 counts");
    out[i] = v[i].get<uint64_t>();
  }
}

BufferCounts buffer_from(const Json& j) {
  return {text(j, "name"), count(j, "bytes"), count(j, "loaded"), count(j, "stored"), count(j, "unique_loaded"),
          count(j, "unique_stored")};
}

SiteCounts site_from(const Json& j) {
  SiteCounts s;
  s.buffer = text(j, "buffer");
  const Json& store = field(j, "store");
  if (!store.is_boolean()) throw std::runtime_error("counters: `store` is not a boolean");
  s.store = store.get<bool>();
  s.line = line(j, "line");
  s.spec_line = line(j, "spec_line");
  if (j.contains("file")) s.file = text(j, "file");
  s.accesses = count(j, "accesses");
  s.bytes = count(j, "bytes");
  s.simd_accesses = count(j, "simd_accesses");
  s.lanes = count(j, "lanes");
  s.distinct_bytes = count(j, "distinct_bytes");
  s.segments32 = count(j, "segments32");
  s.segments64 = count(j, "segments64");
  s.segments128 = count(j, "segments128");
  s.ideal_segments32 = count(j, "ideal_segments32");
  s.sampled_bytes = count(j, "sampled_bytes");
  return s;
}

SimdFunctionCounts simd_from(const Json& j) {
  return {text(j, "function"), line(j, "line"), line(j, "spec_line"), count(j, "calls"), count(j, "active_lanes"),
          j.contains("file") ? text(j, "file") : std::string()};
}

const Json& list(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_array()) throw std::runtime_error(std::string("counters: `") + key + "` is not a list");
  return v;
}

}  // namespace

uint64_t Counters::unique_bytes() const {
  uint64_t total = 0;
  for (const auto& b : buffers) total += b.unique_loaded + b.unique_stored;
  return total;
}

double Counters::coalescing() const {
  double weighted = 0, bytes = 0;
  for (const auto& s : sites) {
    weighted += s.coalescing() * double(s.bytes);
    bytes += double(s.bytes);
  }
  return bytes > 0 ? weighted / bytes : 1;
}

double Counters::memory_loaded(const BufferCounts& b) const {
  double distinct = 0, requested = 0;
  for (const auto& s : sites) {
    if (s.buffer != b.name || s.store) continue;
    distinct += double(s.distinct_bytes);
    requested += double(s.sampled_bytes);
  }
  return requested > 0 ? double(b.loaded) * distinct / requested : double(b.loaded);
}

double Counters::barriers_per_thread() const {
  const uint64_t threads = threadgroup_count() * threads_per_group();
  return threads ? double(barriers) / double(threads) : 0;
}

double Counters::loaded_per_unique_byte() const {
  double moved = 0;
  for (const auto& b : buffers) moved += (b.unique_stored ? double(b.unique_loaded) : memory_loaded(b)) + double(b.unique_stored);
  const uint64_t unique = unique_bytes();
  return unique ? std::max(1.0, moved / double(unique)) : 1;
}

double Counters::widest_load_bytes() const {
  // Sites of one buffer at one line are one load as written: the simulator splits a vec<T, 4>
  // into its elements' loads, each a site of its own with the same count.
  std::map<std::pair<std::string, int>, std::pair<double, uint64_t>> lines;  // bytes, most accesses of a site
  for (const auto& s : sites) {
    if (s.store || !s.accesses) continue;
    auto& [bytes, accesses] = lines[{s.buffer, s.spec_line ? s.spec_line : -s.line}];
    bytes += double(s.bytes);
    accesses = std::max(accesses, s.accesses);
  }
  double widest = 0;
  for (const auto& [at, load] : lines) widest = std::max(widest, load.first / double(load.second));
  return widest;
}

Counters counters_from_json(const Json& j) {
  Counters c;
  triple(j, "threadgroups", c.threadgroups);
  triple(j, "threads_per_threadgroup", c.threads_per_threadgroup);
  c.threadgroup_memory_bytes = count(j, "threadgroup_memory_bytes");
  for (const auto& b : list(j, "buffers")) c.buffers.push_back(buffer_from(b));
  for (const auto& s : list(j, "sites")) c.sites.push_back(site_from(s));
  for (const auto& s : list(j, "simd")) c.simd.push_back(simd_from(s));
  c.barriers = count(j, "barriers");
  return c;
}

Json to_json(const Counters& c) {
  Json j = {{"threadgroups", c.threadgroups},
            {"threads_per_threadgroup", c.threads_per_threadgroup},
            {"threadgroup_memory_bytes", c.threadgroup_memory_bytes},
            {"barriers", c.barriers},
            {"barriers_per_thread", c.barriers_per_thread()},
            {"unique_bytes", c.unique_bytes()},
            {"coalescing", c.coalescing()},
            {"loaded_per_unique_byte", c.loaded_per_unique_byte()},
            {"widest_load_bytes", c.widest_load_bytes()}};
  j["buffers"] = Json::array();
  for (const auto& b : c.buffers) {
    j["buffers"].push_back({{"name", b.name}, {"bytes", b.bytes}, {"loaded", b.loaded}, {"stored", b.stored},
                            {"unique_loaded", b.unique_loaded}, {"unique_stored", b.unique_stored},
                            {"rereads", b.rereads()}, {"memory_loaded", c.memory_loaded(b)}});
  }
  j["sites"] = Json::array();
  for (const auto& s : c.sites) {
    j["sites"].push_back({{"buffer", s.buffer}, {"store", s.store}, {"line", s.line}, {"spec_line", s.spec_line},
                          {"accesses", s.accesses}, {"bytes", s.bytes}, {"mean_lanes", s.mean_lanes()},
                          {"segments32", s.segments32}, {"segments64", s.segments64}, {"segments128", s.segments128}, {"ideal_segments32", s.ideal_segments32}, {"sampled_bytes", s.sampled_bytes},
                          {"simd_accesses", s.simd_accesses}, {"coalescing", s.coalescing()}});
    if (!s.file.empty()) j["sites"].back()["file"] = s.file;
  }
  j["simd"] = Json::array();
  for (const auto& s : c.simd) {
    j["simd"].push_back({{"function", s.function}, {"line", s.line}, {"spec_line", s.spec_line}, {"calls", s.calls},
                         {"mean_active_lanes", s.mean_active_lanes()}});
    if (!s.file.empty()) j["simd"].back()["file"] = s.file;
  }
  return j;
}

}  // namespace mtlgen::advisor
