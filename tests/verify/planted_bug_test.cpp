// Every checker against a kernel with the bug it exists to catch (tests/verify/bugs/), and against
// a correct twin it must pass (tests/verify/twins/, same name). A bug's leading comment lines say
// what must happen:
//   # expect: <checker>              `mtlgen verify` reports <checker>
//   # expect: pass                   `mtlgen verify` passes (the bug is invisible to its checkers)
//   # expect --races exact: <checker> [at L1 L2 ...]
//                                    with --races exact it reports <checker>, in a message naming
//                                    spec lines L1, L2, ...
// Either mode may name lines; `L1|L2|L3` stands for any one of them (a hang names the line its
// stuck loop happened to be at).
// A twin must pass in every mode its bug names.
// Every bug and twin runs through both execution paths (docs/simulator.md, "Loops or fibers"), in
// one test: `--exec loops`, where the bugs in kRunAsLoops must have run as loops and the others
// fallen back to fibers, and `--exec fibers`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "spec/library.h"
#include "support/exit_code.h"
#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("tests/verify/bugs")) out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Expectation {
  bool exact_races = false;
  std::string checker;     // "pass": the run passes
  std::vector<std::vector<int>> lines;  // spec lines a message of `checker` names (one of each group)
};

std::vector<Expectation> expectations(const fs::path& spec) {
  std::vector<Expectation> out;
  std::ifstream in(spec);
  for (std::string line; std::getline(in, line) && line.rfind("# expect", 0) == 0;) {
    Expectation e;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const std::string mode = line.substr(8, colon - 8);
    if (mode == " --races exact") e.exact_races = true;
    else if (!mode.empty()) ADD_FAILURE() << spec << ": unknown mode in `" << line << "`";
    std::istringstream words(line.substr(colon + 1));
    words >> e.checker;
    std::string at;
    if (words >> at && at == "at") {
      for (std::string group; words >> group;) {
        std::vector<int> any;
        std::istringstream alternatives(group);
        for (std::string n; std::getline(alternatives, n, '|');) any.push_back(std::stoi(n));
        e.lines.push_back(any);
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

struct VerifyRun {
  int exit_code;
  nlohmann::json results;
  std::string printed;
};

// `tag` keeps the JSON files of tests that verify the same spec apart (ctest runs tests in parallel).
VerifyRun verify(const fs::path& spec, bool exact_races, const std::string& tag = "",
                 void (*adjust)(verify::VerifyOptions&) = nullptr, mtlsim::ExecPath exec = mtlsim::ExecPath::automatic) {
  verify::VerifyOptions o;
  o.exec = exec;
  o.inputs = {spec.string()};
  // The endless-loop bug must be cut off quickly (four runs of it); every other planted kernel runs
  // in milliseconds.
  o.timeout_seconds = 2;
  o.exact_races = exact_races;
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.result_cache = false;  // every case runs: these tests are about what running finds
  o.json_path = (fs::temp_directory_path() / ("mtlgen-verify-" + spec.parent_path().filename().string() + "-" +
                                              spec.stem().string() + (exact_races ? "-exact" : "") + tag +
                                              (exec == mtlsim::ExecPath::fibers ? "-fibers" : "") + ".json"))
                    .string();
  fs::remove(o.json_path);
  if (adjust) adjust(o);
  std::ostringstream out, err;
  int rc = verify::run_verify(o, out, err);
  std::ifstream json(o.json_path);
  nlohmann::json results = json ? nlohmann::json::parse(json) : nlohmann::json::array();
  return {rc, results, out.str() + err.str()};
}

// The bugs whose kernels the front end turns into loops; the others fall back to fibers (each
// for its reason: a barrier or simd function in a branch or loop, a `return` before a barrier).
const std::set<std::string> kRunAsLoops = {
    "block_cumsum", "body_threadgroup_missing_barrier", "clear_before_reduce", "cross_threadgroup_accumulate",
    "family_half_dispatch", "function_constant_branch", "grid_rounded_down", "mem_none_barrier_race", "missing_barrier",
    "poison_branch", "poison_index", "private_array_past_end", "run_time_threads", "same_value_store", "simd_rows_past_end",
    "simd_sum_only", "simdgroup_return_missing_barrier", "size_branch_missing_barrier", "store_into_slack", "uninitialised_private_array",
    "uninitialised_private_read", "uninitialised_threadgroup_read", "vector_load_odd_size"};

// Both execution paths in one test: they share the spec's modules, which the first path compiles
// (two tests would hold two CTest slots while one waits for the other's compile).
const mtlsim::ExecPath kPaths[] = {mtlsim::ExecPath::automatic, mtlsim::ExecPath::fibers};

std::string path_name(mtlsim::ExecPath exec) { return exec == mtlsim::ExecPath::fibers ? "--exec fibers" : "--exec loops"; }

class PlantedBug : public ::testing::TestWithParam<std::string> {
 protected:
  const std::string& name() const { return GetParam(); }
  // Which path the baseline runs took: loops only for kRunAsLoops under --exec loops.
  void expect_path(const VerifyRun& run, mtlsim::ExecPath exec, bool exact_races) const {
    const bool loops = exec == mtlsim::ExecPath::automatic && !exact_races && kRunAsLoops.count(name());
    for (const auto& c : run.results) {
      if (!c.contains("threadgroups_as_loops") || c.at("status") == "CRASH" || c.at("status") == "HANG") continue;
      EXPECT_EQ(c.at("threadgroups_as_loops").get<uint64_t>() > 0, loops) << name() << " " << c.dump();
    }
  }
};

void expect_pass(const VerifyRun& run) {
  EXPECT_EQ(run.exit_code, support::kOk) << run.printed;
  ASSERT_FALSE(run.results.empty());
  for (const auto& c : run.results) EXPECT_EQ(c.at("status"), "PASS") << run.printed;
}

// A message of the expected checker that names every expected spec line.
void expect_caught(const VerifyRun& run, const fs::path& spec, const Expectation& e) {
  EXPECT_EQ(run.exit_code, support::kVerifyFailed) << run.printed;
  bool caught = false;
  for (const auto& c : run.results) {
    for (const auto& p : c.at("problems")) {
      const std::string message = p.at("message");
      EXPECT_GT(message.size(), 40u) << "messages must say what happened and what to do";
      bool names_lines = true;
      for (const auto& any : e.lines) {
        names_lines = names_lines && std::any_of(any.begin(), any.end(), [&](int line) {
                        return message.find(spec.filename().string() + ":" + std::to_string(line) + ")") !=
                               std::string::npos;
                      });
      }
      caught = caught || (p.at("checker") == e.checker && names_lines);
    }
  }
  EXPECT_TRUE(caught) << "expected a `" << e.checker << "` report" << (e.lines.empty() ? "" : " naming the lines")
                      << (e.exact_races ? " with --races exact" : "") << ":\n"
                      << run.printed;
}

TEST_P(PlantedBug, IsCaughtByItsChecker) {
  fs::path spec = fs::path("tests/verify/bugs") / (name() + ".yaml");
  const std::vector<Expectation> all = expectations(spec);
  ASSERT_FALSE(all.empty()) << spec << " lacks `# expect: <checker>`";
  for (mtlsim::ExecPath exec : kPaths) {
    SCOPED_TRACE(path_name(exec));
    bool caught_somewhere = false;
    for (const Expectation& e : all) {
      VerifyRun run = verify(spec, e.exact_races, "", nullptr, exec);
      expect_path(run, exec, e.exact_races);
      if (e.checker == "pass") {
        expect_pass(run);
        continue;
      }
      expect_caught(run, spec, e);
      caught_somewhere = true;
    }
    EXPECT_TRUE(caught_somewhere) << spec << ": some mode must catch the bug";
  }
}

TEST_P(PlantedBug, CorrectTwinPasses) {
  fs::path spec = fs::path("tests/verify/twins") / (name() + ".yaml");
  const std::vector<Expectation> all = expectations(fs::path("tests/verify/bugs") / (name() + ".yaml"));
  const bool exact = std::any_of(all.begin(), all.end(), [](const Expectation& e) { return e.exact_races; });
  for (mtlsim::ExecPath exec : kPaths) {
    SCOPED_TRACE(path_name(exec));
    expect_pass(verify(spec, false, "", nullptr, exec));
    if (exact) {
      SCOPED_TRACE("--races exact");
      expect_pass(verify(spec, true, "", nullptr, exec));
    }
  }
}

// A bug in the branch a function constant's default does not take: the run at the default passes,
// and exactly the runs whose case sets use_bias: false fail.
TEST(FunctionConstantBug, IsCaughtOnlyWhereACaseSetsTheConstant) {
  VerifyRun run = verify("tests/verify/bugs/function_constant_branch.yaml", false, "-constants");
  ASSERT_EQ(run.results.size(), 6u) << run.printed;  // default_constants, no_bias, each_weight at 2 x 2 settings
  std::set<double> weights;
  for (const auto& c : run.results) {
    bool at_default = c.at("constants").at("use_bias").get<bool>();
    EXPECT_EQ(c.at("status"), at_default ? "PASS" : "FAIL") << c.dump();
    if (c.at("case") == "default_constants") {
      EXPECT_TRUE(at_default);
    }
    weights.insert(c.at("constants").at("bias_weight").get<double>());
  }
  EXPECT_EQ(weights, (std::set<double>{0.375, 1.0}));
}

// The twin of mem_none_barrier_race consumes its read in a simd function before the mem_none
// barrier: with --races exact it passes with a `memory_model` warning naming the read, the write
// and the barrier, in both execution paths (the detector runs on fibers).
TEST(MemNoneBarrier, ConsumedReadIsAMemoryModelWarning) {
  VerifyRun run = verify("tests/verify/twins/mem_none_barrier_race.yaml", true, "-warning");
  expect_pass(run);
  bool warned = false;
  for (const auto& c : run.results) {
    for (const auto& w : c.at("warnings")) {
      const std::string m = w.at("message");
      warned = warned || (w.at("checker") == "memory_model" && m.find("mem_none_barrier_race.yaml:28)") != std::string::npos &&
                          m.find("mem_none_barrier_race.yaml:30)") != std::string::npos &&
                          m.find("threadgroup_barrier at line 33 (tests/verify/twins/mem_none_barrier_race.yaml:29)") !=
                              std::string::npos &&
                          m.find("mem_flags::mem_threadgroup") != std::string::npos);
    }
  }
  EXPECT_TRUE(warned) << run.printed;
  EXPECT_NE(run.printed.find("warning: [memory_model]"), std::string::npos) << run.printed;
}

// Stores from one statement by several threads cannot be ordered by a barrier "between" them:
// the advice is to let one thread write.
TEST(SameStatementStores, AdviceIsToLetOneThreadWrite) {
  VerifyRun run = verify("tests/verify/bugs/same_value_store.yaml", true, "-advice");
  bool advised = false;
  for (const auto& c : run.results) {
    for (const auto& p : c.at("problems")) {
      const std::string m = p.at("message");
      if (p.at("checker") != "data_race") continue;
      EXPECT_EQ(m.find("between the write at line"), std::string::npos) << m;
      advised = advised || (m.find("Let one thread write it") != std::string::npos &&
                            m.find("simd_is_first()") != std::string::npos);
    }
  }
  EXPECT_TRUE(advised) << run.printed;
}

INSTANTIATE_TEST_SUITE_P(Checkers, PlantedBug, ::testing::ValuesIn(names()),
                         [](const auto& info) { return info.param; });

}  // namespace

namespace {

// The mismatch of a reduction done with simd_sum alone tells the user what to change; a body that
// synchronises its threadgroup has a threadgroup stage of its own and gets no such guess.
TEST(MismatchHint, SimdOnlyReductionIsToldToReduceAcrossSimdgroups) {
  VerifyRun run = verify("tests/verify/bugs/simd_sum_only.yaml", false, "-hint");
  ASSERT_FALSE(run.results.empty()) << run.printed;
  const auto& problem = run.results[0].at("problems").at(0);
  EXPECT_EQ(problem.at("checker"), "mismatch");
  EXPECT_NE(problem.at("message").get<std::string>().find("reduce across simdgroups"), std::string::npos)
      << problem.dump();
}

}  // namespace

namespace {

// All messages of one checker in a run.
std::vector<std::string> messages(const VerifyRun& run, const std::string& checker) {
  std::vector<std::string> out;
  for (const auto& c : run.results) {
    for (const auto& p : c.at("problems"))
      if (p.at("checker") == checker) out.push_back(p.at("message"));
  }
  return out;
}

bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  return std::any_of(texts.begin(), texts.end(), [&](const std::string& t) { return t.find(part) != std::string::npos; });
}

// A race across loop iterations (a barrier already sits between the two lines) is told to put a
// barrier at the end of the loop body, after the read, not "between" the two lines.
TEST(RaceAdvice, LoopIterationRaceSuggestsABarrierAtTheEndOfTheLoopBody) {
  VerifyRun run = verify("tests/verify/bugs/loop_tile_reuse.yaml", true, "-advice");
  const auto races = messages(run, "data_race");
  ASSERT_FALSE(races.empty()) << run.printed;
  EXPECT_TRUE(any_contains(races, "at the end of that loop's body, after the read at line")) << run.printed;
  EXPECT_FALSE(any_contains(races, "between the write")) << run.printed;
}

// Same-value store/store pairs are benign by default (the twin passes, see PlantedBug) and
// reported when asked for.
TEST(SameValueStores, AreReportedWhenAsked) {
  VerifyRun run = verify("tests/verify/twins/same_value_store.yaml", true, "-report-same",
                         [](verify::VerifyOptions& o) { o.report_same_value_stores = true; });
  EXPECT_EQ(run.exit_code, support::kVerifyFailed) << run.printed;
  EXPECT_TRUE(any_contains(messages(run, "data_race"), "same_value_store.yaml:37)")) << run.printed;
}

// Mismatch statistics cover finite pairs only: an output whose differing elements are all NaN
// does not read "max abs 0"; the tolerance reads "tolerance exact" for exact types.
TEST(MismatchText, NonFiniteDifferencesAndExactTolerance) {
  VerifyRun nan = verify("tests/verify/bugs/block_cumsum.yaml", false, "-text");
  const auto m = messages(nan, "mismatch");
  ASSERT_FALSE(m.empty()) << nan.printed;
  EXPECT_TRUE(any_contains(m, "with NaN or inf")) << nan.printed;
  EXPECT_FALSE(any_contains(m, "max abs 0,")) << nan.printed;
  VerifyRun exact = verify("tests/verify/bugs/same_value_store.yaml", false, "-text");
  EXPECT_TRUE(any_contains(messages(exact, "mismatch"), "tolerance exact)")) << exact.printed;
}

// Poison passing through a collective into results no lane uses is not reported (the twin passes);
// where the outputs depend on it, the report names the collective whose results carried it.
TEST(PoisonPolicy, ReportNamesTheCollectiveThatCarriedIt) {
  VerifyRun run = verify("tests/verify/bugs/block_cumsum.yaml", false, "-poison");
  const auto flows = messages(run, "poison_in_collective");
  EXPECT_TRUE(any_contains(flows, "simd_sum at line")) << run.printed;
  EXPECT_FALSE(any_contains(flows, "and no lane got")) << run.printed;  // a shuffle whose receivers were clean
}

// Poison that decides a comparison or becomes an integer is reported although every output is
// right: the report names the kernel variant, a thread and its threadgroup, and the line.
TEST(PoisonPolicy, UsesAreReportedWithThreadAndLineWhileOutputsMatch) {
  for (const char* name : {"poison_branch", "poison_index"}) {
    VerifyRun run = verify(fs::path("tests/verify/bugs") / (std::string(name) + ".yaml"), false, "-uses");
    ASSERT_EQ(run.results.size(), 1u) << run.printed;
    const auto& problems = run.results[0].at("problems");
    ASSERT_EQ(problems.size(), 1u) << run.printed;  // no mismatch, no uninitialised-threadgroup-memory
    const std::string message = problems[0].at("message");
    EXPECT_EQ(problems[0].at("checker"), name == std::string("poison_branch") ? "poison_in_branch" : "poison_in_index");
    EXPECT_NE(message.find("kernel '" + std::string(name) + "_tg256': thread "), std::string::npos) << message;
    EXPECT_NE(message.find(" of threadgroup (0,0,0) "), std::string::npos) << message;
    EXPECT_NE(message.find("(poison"), std::string::npos) << message;
  }
}

}  // namespace

namespace {

// A private array read where it was never written is its own finding: not a race, not
// uninitialised threadgroup memory (private variables hold the same bytes in every run).
TEST(PrivateMemory, UninitialisedPrivateArrayIsNeitherARaceNorThreadgroupMemory) {
  VerifyRun run = verify("tests/verify/bugs/uninitialised_private_array.yaml", false, "-private");
  EXPECT_FALSE(messages(run, "uninitialised-private-memory").empty()) << run.printed;
  EXPECT_TRUE(messages(run, "race").empty()) << run.printed;
  EXPECT_TRUE(messages(run, "uninitialised-threadgroup-memory").empty()) << run.printed;
}

// The element, array and thread of a write far past a threadgroup array (the line is asserted by
// the planted bug's expectation).
TEST(ThreadgroupBounds, FarWriteNamesArrayElementAndThread) {
  VerifyRun run = verify("tests/verify/bugs/threadgroup_far_write.yaml", false, "-bounds");
  EXPECT_TRUE(any_contains(messages(run, "crash"), "out-of-bounds write of element 100000 of threadgroup array "
                                                   "`partials`, which holds 32 elements, by thread 0 of threadgroup"))
      << run.printed;
}

}  // namespace
