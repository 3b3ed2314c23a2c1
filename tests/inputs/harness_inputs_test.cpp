// `mtlgen verify` and the Mac harness generate byte-identical inputs for every shipped case: the
// harness's input code (<kernel>_test_data.h over support/mtlgen_testdata.h, plain C++) is generated
// for every shipped spec, families and packed blocks included, compiled on Linux by each compiler
// at hand (the fill code at -O2, the case tables at -O0), also with fused multiply-add allowed as
// Apple clang and GCC allow it, and its bytes for every case, variant verify runs and input buffer
// are compared with verify's own fill.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "expr/expr.h"
#include "golden.h"
#include "verify/inputs.h"

namespace mtlgen::testing {
namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

// Runs `command`; its exit status and everything it printed.
std::pair<int, std::string> run(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  char chunk[4096];
  for (size_t n; (n = fread(chunk, 1, sizeof chunk, pipe)) > 0;) output.append(chunk, n);
  return {pclose(pipe), output};
}

// One line per case, running variant and host-filled buffer, as the driver prints it, from verify.
std::vector<std::string> verify_lines(const ir::Kernel& k, std::string& runs) {
  std::vector<std::string> lines;
  for (const auto& c : k.tests.cases) {
    if (c.benchmark) continue;  // verify does not run it: nothing to match (and fills of 100s of MB)
    const uint64_t seed = c.seed.value_or(k.tests.seed);
    std::map<std::string, std::string> seen;  // "buffer type elements" -> "bytes hash": drawn once
    for (size_t v = 0; v < k.variants.size(); ++v) {
      if (!k.variant_violation(c.dims, k.variants[v]).empty()) continue;  // verify skips it
      runs += fmt::format("{} {} {}\n", k.name, c.name, v);
      const expr::Env env = ir::Kernel::env_for(c.dims, k.variants[v]);
      for (const auto& b : k.buffers) {
        if (!b.is_host_input()) continue;
        const ir::ScalarType type = b.type.resolve(k.variants[v].types);
        size_t elements = 1;
        for (const auto& axis : b.shape) elements *= static_cast<size_t>(std::max<int64_t>(expr::evaluate(axis, env), 0));
        std::string& drawn = seen[fmt::format("{} {} {}", b.name, ir::info(type).spec_name, elements)];
        if (drawn.empty()) {
          std::vector<uint8_t> bytes(elements * ir::info(type).size);
          verify::fill_input(k.input_fill(c, b.name), type, bytes.data(), elements, verify::buffer_seed(seed, b.name),
                             k.block_of(b));
          drawn = fmt::format("{} {:016x}", bytes.size(), fnv1a64(bytes));
        }
        lines.push_back(fmt::format("{} {} {} {} {}", k.name, c.name, v, b.name, drawn));
      }
    }
  }
  return lines;
}

// The shipped specs' generated types and test data, kernels.inc for the driver, and verify's lines.
// CTest runs these tests as parallel processes: each writes and builds in a directory of its own.
struct Shipped {
  fs::path dir = fs::path(MTLGEN_HARNESS_INPUTS_DIR) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::vector<std::string> expected;
  size_t kernels = 0, families = 0, block_buffers = 0;
};

const Shipped& shipped() {
  static const Shipped s = [] {
    Shipped s;
    const std::vector<ir::Kernel> ks = load({"specs"});
    fs::remove_all(s.dir);
    for (const char* emitter : {"types", "harness"}) {
      const support::OutputSet files = run_emitter(emitter, ks);
      for (const auto& [path, text] : files.files()) write(s.dir / path, text);
    }
    std::string includes, list = "#define MTLGEN_KERNELS(X)", runs;
    for (const auto& k : ks) {
      includes += fmt::format("#include \"{0}/{0}_test_data.h\"\n", k.name);
      list += fmt::format(" X({})", k.name);
      for (std::string& line : verify_lines(k, runs)) s.expected.push_back(std::move(line));
      ++s.kernels;
      s.families += k.is_family() ? 1 : 0;
      for (const auto& b : k.buffers) s.block_buffers += k.block_of(b) ? 1 : 0;
    }
    write(s.dir / "kernels.inc", includes + list + "\n");
    write(s.dir / "runs.txt", runs);
    std::sort(s.expected.begin(), s.expected.end());
    return s;
  }();
  return s;
}

// The driver's case tables (-O0), compiled once per compiler: most of a build of the harness.
fs::path driver_object(const std::string& common, const std::string& tag) {
  const fs::path object = shipped().dir / ("driver_" + tag + ".o");
  auto [built, diagnostics] = run(fmt::format("{} -O0 -c {} -o {}", common, MTLGEN_HARNESS_INPUTS_DRIVER, object.string()));
  EXPECT_EQ(built, 0) << diagnostics;
  return object;
}

// The driver built by `compiler`, its fill code at -O2 with each of `flag_sets`, run; its lines
// sorted, one list per flag set.
std::vector<std::vector<std::string>> harness_lines(const std::string& compiler, const std::string& tag,
                                                    const std::vector<std::string>& flag_sets) {
  const Shipped& s = shipped();
  const std::string common = fmt::format("{} -std=c++17 -Wall -Wextra -Werror -I{}", compiler, s.dir.string());
  const fs::path driver = driver_object(common, tag);
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < flag_sets.size(); ++i) {
    const fs::path exe = s.dir / fmt::format("driver_{}_{}", tag, i), fill = s.dir / fmt::format("fill_{}_{}.o", tag, i);
    auto [built, diagnostics] =
        run(fmt::format("{} -O2 {} -c {} -o {}", common, flag_sets[i], MTLGEN_HARNESS_INPUTS_FILL, fill.string()));
    EXPECT_EQ(built, 0) << diagnostics;
    // The fill object first: its copies of the header's inline functions are the ones linked.
    std::tie(built, diagnostics) = run(fmt::format("{} {} {} -o {}", compiler, fill.string(), driver.string(), exe.string()));
    EXPECT_EQ(built, 0) << diagnostics;
    auto [status, output] = run(exe.string() + " " + (s.dir / "runs.txt").string());
    EXPECT_EQ(status, 0) << output.substr(0, 2000);
    std::vector<std::string> lines;
    for (size_t at = 0, end; (end = output.find('\n', at)) != std::string::npos; at = end + 1) lines.push_back(output.substr(at, end - at));
    std::sort(lines.begin(), lines.end());
    out.push_back(std::move(lines));
  }
  return out;
}

// Every line of one side missing from the other, the first few of each.
std::string differences(const std::vector<std::string>& verify, const std::vector<std::string>& harness) {
  std::vector<std::string> only_verify, only_harness;
  std::set_difference(verify.begin(), verify.end(), harness.begin(), harness.end(), std::back_inserter(only_verify));
  std::set_difference(harness.begin(), harness.end(), verify.begin(), verify.end(), std::back_inserter(only_harness));
  std::string text = fmt::format("{} lines only from verify, {} only from the harness\n", only_verify.size(), only_harness.size());
  for (size_t i = 0; i < std::min<size_t>(5, only_verify.size()); ++i) text += "verify:  " + only_verify[i] + "\n";
  for (size_t i = 0; i < std::min<size_t>(5, only_harness.size()); ++i) text += "harness: " + only_harness[i] + "\n";
  return text;
}

bool cpu_has_fma() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// Built as is and, where the CPU has FMA instructions, with fused multiply-add allowed as Apple
// clang (within a statement, -ffp-contract=on) or GCC (across statements, fast) allow it: the
// header turns contraction off, so FMA hardware changes nothing.
void expect_same_bytes(const std::string& compiler, const std::string& tag, const std::string& fma_flags) {
  const Shipped& s = shipped();
  ASSERT_GT(s.families, 0u) << "the shipped specs include families";
  ASSERT_GT(s.block_buffers, 0u) << "the shipped specs include buffers of blocks";
  ASSERT_GT(s.expected.size(), s.kernels);
  std::vector<std::string> flag_sets = {""};
  if (cpu_has_fma()) flag_sets.push_back("-mfma " + fma_flags);
  else std::printf("this CPU has no FMA instructions: the harness is built without them only\n");
  const auto harness = harness_lines(compiler, tag, flag_sets);
  for (size_t i = 0; i < harness.size(); ++i)
    EXPECT_TRUE(harness[i] == s.expected) << "flags `" << flag_sets[i] << "`: " << differences(s.expected, harness[i]);
}

TEST(HarnessInputs, GxxBuildsOfTheHarnessDrawVerifysBytesForEveryShippedCase) {
  expect_same_bytes(MTLGEN_GXX, "gxx", "-ffp-contract=fast");
}

TEST(HarnessInputs, ClangBuildsOfTheHarnessDrawVerifysBytesForEveryShippedCase) {
  if (std::string(MTLGEN_CLANGXX).empty()) GTEST_SKIP() << "no clang++";
  expect_same_bytes(MTLGEN_CLANGXX, "clang", "-ffp-contract=on");
}

}  // namespace
}  // namespace mtlgen::testing
