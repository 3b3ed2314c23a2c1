#include "verify/access_counts.h"

#include <fmt/format.h>
#include <poll.h>

#include <cstdio>
#include <regex>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "emit_msl/msl_emitter.h"
#include "msl/msl_unit.h"
#include "mtlsim/access_counter.h"
#include "mtlsim/exec.h"
#include "verify/case_runner.h"
#include "verify/guarded_buffer.h"

namespace mtlgen::verify {

namespace {

using Json = nlohmann::json;

Json buffer_counts(const CountedBuffer& b) {
  const mtlsim::AccessCounts c = mtlsim::take_access_counts(b.data);
  uint64_t loaded = 0, stored = 0, unique_loaded = 0, unique_stored = 0;
  for (size_t i = 0; i < c.loads.size(); ++i) {
    loaded += c.loads[i];
    stored += c.stores[i];
    unique_loaded += c.loads[i] != 0;
    unique_stored += c.stores[i] != 0;
  }
  return {{"name", b.name},          {"bytes", b.bytes},
          {"loaded", loaded},        {"stored", stored},
          {"unique_loaded", unique_loaded}, {"unique_stored", unique_stored}};
}

std::string buffer_named(const std::vector<CountedBuffer>& buffers, const void* base) {
  for (const auto& b : buffers) {
    if (b.data == base) return b.name;
  }
  return "";
}

Json site_counts(const mtlsim::SiteCounts& s, const std::vector<CountedBuffer>& buffers) {
  char where[1024] = "";
  describe_fault_pc(s.pc, where, sizeof where);
  return {{"where", where},
          {"buffer", buffer_named(buffers, s.range)},
          {"store", s.store},
          {"accesses", s.accesses},
          {"bytes", s.bytes},
          {"simd_accesses", s.simd_accesses},
          {"lanes", s.lanes},
          {"distinct_bytes", s.distinct_bytes},
          {"segments32", s.segments32},
          {"segments64", s.segments64},
          {"segments128", s.segments128},
          {"ideal_segments32", s.ideal_segments32},
          {"sampled_bytes", s.sampled_bytes}};
}

Json dispatch_shape(const mtlsim::HostDispatch& host) {
  uint64_t tg_memory = 0;
  for (int i = 0; i < host.threadgroup_arrays; ++i) tg_memory += (host.threadgroup_memory_bytes[i] + 15) / 16 * 16;
  return {{"threadgroups", {host.threadgroups[0], host.threadgroups[1], host.threadgroups[2]}},
          {"threads_per_threadgroup",
           {host.threads_per_threadgroup[0], host.threads_per_threadgroup[1], host.threads_per_threadgroup[2]}},
          {"threadgroup_memory_bytes", tg_memory}};
}

// The kernel's lines of addr2line's inline chain for the site marker " [pc 0x<offset> in <object>]",
// innermost first: the .metal's, and a local header's (numbered n * kHeaderLineStride + L in its
// copy, msl_unit.h); empty when the line table does not know the pc.
std::vector<int> inline_chain(const std::string& marker) {
  static const std::regex parts(R"( \[pc (0x[0-9a-f]+) in (/[^'\]]+)\])");
  std::smatch m;
  std::vector<int> lines;
  if (!std::regex_search(marker, m, parts)) return lines;
  const std::string command = "addr2line -i -e '" + m[2].str() + "' " + m[1].str() + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return lines;
  static const std::regex frame(R"(\.metal:([0-9]+)|:([0-9]{7,}))");
  char text[2048];
  while (std::fgets(text, sizeof text, pipe)) {
    std::cmatch f;
    if (!std::regex_search(text, f, frame)) continue;
    const int line = std::stoi(f[f[1].matched ? 1 : 2].str());
    if (f[1].matched || line > msl::kHeaderLineStride) lines.push_back(line);
  }
  ::pclose(pipe);
  return lines;
}

// The spec line of .metal line `line`: inside a spec block of a spec-body kernel, or the file's
// own line for a hand-written kernel; 0 otherwise (code mtlgen wrote, such as a helper).
int spec_line_of(const ir::Kernel& k, const std::string& msl, const std::vector<emit::EmbeddedBlock>& blocks, int line) {
  if (k.is_source() || line <= 0) return k.is_source() ? line : 0;
  auto at = emit::spec_location(msl, blocks, line);
  return at ? at->line : 0;
}

// A hand-written kernel's file and line for a reported line: a local header's own, else the file's.
std::pair<std::string, int> source_line_of(const ir::Kernel& k, const std::vector<std::string>& headers, int line) {
  if (auto in_header = msl::header_line_of(line, headers)) return {in_header->path, in_header->line};
  return {k.source->file, line};
}

// Each site's marker becomes its innermost .metal line and the spec line of the innermost frame
// inside the spec's code (a load inlined into a helper is the body's line that called it). A
// hand-written kernel's site also names its file: a local header's path, with the header's own
// line as spec_line.
void locate_sites(Json& counters, const ir::Kernel& k) {
  const std::string msl = k.is_source() ? std::string() : emit::msl_source(k);
  const auto blocks = k.is_source() ? std::vector<emit::EmbeddedBlock>() : emit::msl_blocks(k);
  std::vector<std::string> headers;
  if (k.is_source())
    for (const auto& [key, text] : k.source->simulator_headers) headers.push_back(text);
  for (auto& site : counters["sites"]) {
    const std::vector<int> chain = inline_chain(site["where"].get<std::string>());
    int spec_line = 0;
    for (size_t i = 0; i < chain.size() && spec_line == 0; ++i) spec_line = spec_line_of(k, msl, blocks, chain[i]);
    site.erase("where");
    site["line"] = chain.empty() ? 0 : chain.front();
    site["spec_line"] = spec_line;
    if (k.is_source() && spec_line > 0) std::tie(site["file"], site["spec_line"]) = source_line_of(k, headers, spec_line);
  }
  for (auto& simd : counters["simd"]) {
    simd["spec_line"] = spec_line_of(k, msl, blocks, simd["line"].get<int>());
    if (k.is_source() && simd["line"].get<int>() > 0)
      std::tie(simd["file"], simd["spec_line"]) = source_line_of(k, headers, simd["line"].get<int>());
  }
}

}  // namespace

void start_counting(const std::vector<CountedBuffer>& buffers) {
  for (const auto& b : buffers) mtlsim::watch_accesses(b.data, b.bytes);
  mtlsim::count_sites(kSampledThreadgroups);
}

Json finish_counting(const std::vector<CountedBuffer>& buffers, const mtlsim::HostDispatch& host) {
  const mtlsim::SiteReport report = mtlsim::take_site_report();
  Json j = dispatch_shape(host);
  j["buffers"] = Json::array();
  for (const auto& b : buffers) j["buffers"].push_back(buffer_counts(b));
  j["sites"] = Json::array();
  for (const auto& s : report.sites) j["sites"].push_back(site_counts(s, buffers));
  j["simd"] = Json::array();
  for (const auto& s : report.simd) {
    j["simd"].push_back({{"function", mtlsim::detail::op_name(mtlsim::detail::Op(s.op))},
                         {"line", s.line},
                         {"calls", s.calls},
                         {"active_lanes", s.active_lanes}});
  }
  j["barriers"] = report.barriers;
  return j;
}

Json count_case(const ir::Kernel& kernel, const ir::Variant& variant, const ir::TestCase& test, const SimModule& module,
                double timeout_seconds) {
  CaseRequest request;
  request.kernel = &kernel;
  request.variant = &variant;
  request.test = &test;
  request.module = &module;
  request.count_accesses = true;
  RunningCase running = start_case(request, timeout_seconds);
  CaseResult result;
  while (!poll_case(running, result, timeout_seconds)) {
    pollfd p{running.fd, POLLIN, 0};
    ::poll(&p, 1, 50);
  }
  if (result.status != CaseStatus::pass || result.counters.is_null()) {
    std::string why = result.problems.empty() ? to_string(result.status) : result.problems.front().message;
    throw std::runtime_error(fmt::format("{} ({}), case {}: {}; run `mtlgen verify` on it", variant.entry_point,
                                         kernel.spec_path, test.name, why));
  }
  Json counters = result.counters;
  locate_sites(counters, kernel);
  return counters;
}

}  // namespace mtlgen::verify
