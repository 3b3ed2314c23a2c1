// Spec code is code: every hostile spec under tests/verify/hostile/ must end as a reported,
// correctly named failure, never as a crashed, hung or fooled mtlgen, and must leave nothing
// behind. A spec's first line says what must happen:
//   # expect: CRASH|ERROR|HANG <text>   every case has that status and a message containing <text>
//   # expect: REFUSED <text>            verify rejects the spec before compiling it (exit 1), saying <text>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "spec/library.h"
#include "support/exit_code.h"
#include "verify/case_runner.h"
#include "support/include_policy.h"
#include "verify/sandbox.h"
#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

// Files the hostile specs try to create, each in its own way.
const char* kLeftovers[] = {"/tmp/mtlgen-hostile-system", "/tmp/mtlgen-hostile-execve", "/tmp/mtlgen-hostile-written"};

std::vector<std::string> hostile_specs() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("tests/verify/hostile")) {
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());  // kernels/ holds .metal files
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Expectation {
  std::string status, text;
};

Expectation expectation(const fs::path& spec) {
  std::ifstream in(spec);
  std::string line;
  std::getline(in, line);
  const std::string prefix = "# expect: ";
  if (line.rfind(prefix, 0) != 0) return {};
  std::string rest = line.substr(prefix.size());
  size_t space = rest.find(' ');
  return {rest.substr(0, space), space == std::string::npos ? "" : rest.substr(space + 1)};
}

struct VerifyRun {
  int exit_code;
  nlohmann::json results;
  std::string printed;
  double seconds;
};

VerifyRun verify(const fs::path& spec, bool exact_races = false, double timeout = 3) {
  verify::VerifyOptions o;
  o.inputs = {spec.string()};
  o.timeout_seconds = timeout;
  o.exact_races = exact_races;
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.result_cache = false;  // every case runs: these tests are about what running finds
  o.json_path = (fs::temp_directory_path() / ("mtlgen-sandbox-" + spec.stem().string() + (exact_races ? "-exact" : "") +
                                              ".json"))
                    .string();
  fs::remove(o.json_path);
  std::ostringstream out, err;
  auto start = std::chrono::steady_clock::now();
  int rc = verify::run_verify(o, out, err);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ifstream json(o.json_path);
  nlohmann::json results = json ? nlohmann::json::parse(json) : nlohmann::json::array();
  return {rc, results, out.str() + err.str(), seconds};
}

class HostileSpec : public ::testing::TestWithParam<std::string> {};

TEST_P(HostileSpec, IsAReportedNamedFailure) {
  const fs::path spec = fs::path("tests/verify/hostile") / (GetParam() + ".yaml");
  const Expectation e = expectation(spec);
  ASSERT_FALSE(e.status.empty()) << spec << " lacks `# expect: STATUS text`";
  for (const char* f : kLeftovers) fs::remove(f);
  VerifyRun run = verify(spec);
  EXPECT_LT(run.seconds, 120) << run.printed;
  for (const char* f : kLeftovers) EXPECT_FALSE(fs::exists(f)) << f << " was created by spec code";
  if (e.status == "REFUSED") {
    EXPECT_EQ(run.exit_code, support::kSpecErrors) << run.printed;
    EXPECT_TRUE(run.results.empty()) << run.printed;
    EXPECT_NE(run.printed.find(e.text), std::string::npos) << "expected `" << e.text << "` in:\n" << run.printed;
    EXPECT_EQ(run.printed.find("root:"), std::string::npos) << "host file contents leaked:\n" << run.printed;
    return;
  }
  EXPECT_EQ(run.exit_code, support::kVerifyFailed) << run.printed;
  ASSERT_FALSE(run.results.empty()) << run.printed;
  for (const auto& c : run.results) {
    EXPECT_EQ(c.at("status"), e.status) << run.printed;
    bool said = false;
    for (const auto& p : c.at("problems")) said = said || p.at("message").get<std::string>().find(e.text) != std::string::npos;
    EXPECT_TRUE(said) << "expected `" << e.text << "` in:\n" << run.printed;
  }
}

INSTANTIATE_TEST_SUITE_P(Sandbox, HostileSpec, ::testing::ValuesIn(hostile_specs()),
                         [](const auto& info) { return info.param; });

// The watchdog kills the case's whole process group: with --races exact a case has a helper
// process beside it (sandbox.h), and nothing of the case may outlive it. Orphans are re-parented
// to this test (a subreaper), so any process left behind shows up as a child still running.
TEST(ProcessGroup, NothingOutlivesAHungCase) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  VerifyRun run = verify("tests/verify/hostile/constructor_hangs.yaml", true, 2);
  ASSERT_EQ(run.results.size(), 1u) << run.printed;
  EXPECT_EQ(run.results[0].at("status"), "HANG") << run.printed;
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    gone = ::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  EXPECT_TRUE(gone) << "a process of the case outlived it";
}

// Race reports keep their source lines inside the sandbox (addr2line runs in the line helper).
TEST(ProcessGroup, RaceLinesResolveInsideTheSandbox) {
  VerifyRun run = verify("tests/verify/bugs/missing_barrier.yaml", true, 30);
  EXPECT_NE(run.printed.find("missing_barrier.yaml:26)"), std::string::npos) << run.printed;
}

// ---- the compile step ----

// A compiler that never finishes (and leaves a process of its own running) is killed, with its
// process group, after the compile timeout, and that is what the error says.
TEST(CompileStep, TimesOutAndKillsTheCompilersProcessGroup) {
  const fs::path dir = fs::temp_directory_path() / ("mtlgen-slow-compiler-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path compiler = dir / "slow-c++";
  std::ofstream(compiler) << "#!/bin/sh\nsleep 60 &\necho $! > '" << (dir / "pid").string() << "'\nwait\n";
  fs::permissions(compiler, fs::perms::owner_all);
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // the compiler's orphans come back to be reaped
  support::Diagnostics diags;
  auto kernels = spec::load_library({"tests/verify/twins/null_pointer.yaml"}, diags);
  ASSERT_EQ(kernels.size(), 1u) << diags.format_all();
  verify::ModuleOptions o;
  o.cache_dir = dir / "cache";
  o.compiler = compiler.string();
  o.compile_timeout_seconds = 1;
  auto start = std::chrono::steady_clock::now();
  try {
    verify::SimModule module(kernels[0], o);
    ADD_FAILURE() << "the compile cannot have succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("was killed after 1 s (the compile timeout)"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30);
  pid_t left = 0;
  std::ifstream(dir / "pid") >> left;
  ASSERT_GT(left, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    int status = 0;
    gone = ::waitpid(left, &status, WNOHANG) == left && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  EXPECT_TRUE(gone) << "the compiler's background process survived";
  fs::remove_all(dir);
}

// ---- the sandbox itself, in a forked child ----

// Runs `body` in a sandboxed child; returns its wait status.
template <typename F>
int sandboxed(F body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGSYS, SIG_DFL);
    if (!verify::sandbox::enter(verify::sandbox::limits_for(10, 2)).empty()) ::_exit(99);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

bool killed_by_sigsys(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS; }

TEST(Sandbox, KeepsWhatTheSimulatorNeeds) {
  int status = sandboxed([] {
    int worked = 0;
    std::thread t([&] { worked = 1; });  // clone with CLONE_THREAD
    t.join();
    void* p = ::mmap(nullptr, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);  // guard pages
    bool memory = p != MAP_FAILED && ::mprotect(p, 4096, PROT_READ | PROT_WRITE) == 0;
    int fd = ::open("/proc/self/status", O_RDONLY);  // reading stays possible (dlopen reads the module)
    stack_t ss{};
    static char stack[65536];
    ss.ss_sp = stack, ss.ss_size = sizeof stack;
    bool altstack = ::sigaltstack(&ss, nullptr) == 0;
    return worked == 1 && memory && fd >= 0 && altstack ? 0 : 1;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(Sandbox, StopsWritesProcessesNetworkAndSignalsToOthers) {
  const std::string path = (fs::temp_directory_path() / "mtlgen-sandbox-write-test").string();
  fs::remove(path);
  EXPECT_TRUE(killed_by_sigsys(sandboxed([&] { return ::open(path.c_str(), O_WRONLY | O_CREAT, 0644) >= 0 ? 0 : 1; })));
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(killed_by_sigsys(sandboxed([] { return ::open("/proc/self/status", O_RDONLY | O_TRUNC) >= 0 ? 0 : 1; })));
  EXPECT_TRUE(killed_by_sigsys(sandboxed([] { return ::fork() >= 0 ? 0 : 1; })));
  EXPECT_TRUE(killed_by_sigsys(sandboxed([] {
    char* argv[] = {const_cast<char*>("true"), nullptr};
    return ::execv("/bin/true", argv);
  })));
  EXPECT_TRUE(killed_by_sigsys(sandboxed([] { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1; })));
  EXPECT_TRUE(killed_by_sigsys(sandboxed([] { return ::kill(::getppid(), 0); })));
  EXPECT_TRUE(killed_by_sigsys(sandboxed([] { return ::setpgid(0, 0); })));
  EXPECT_TRUE(killed_by_sigsys(sandboxed([] { return ::unlink("/tmp/anything"); })));
}

TEST(Sandbox, NoCoreFilesAndNoFileGrowth) {
  int status = sandboxed([] {
    rlimit core{}, size{};
    ::getrlimit(RLIMIT_CORE, &core);
    ::getrlimit(RLIMIT_FSIZE, &size);
    return core.rlim_max == 0 && size.rlim_max == 0 ? 0 : 1;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// ---- the report is untrusted data ----

nlohmann::json good_report() {
  return nlohmann::json::parse(R"({"status":"FAIL","problems":[{"checker":"mismatch","message":"m"}],
    "outputs":[{"buffer":"out","elements":4,"max_abs":null,"max_rel":0.5,"nmse":0,"mismatches":1,
    "nonfinite_mismatches":0}],"sim_seconds":0.1,"reference_seconds":0,"fiber_switches":7,
    "output_digest":"0123456789abcdef"})");
}

TEST(Report, IsValidatedFieldByField) {
  EXPECT_NO_THROW(verify::case_result_from_json(good_report()));
  auto broken = [](auto change) {
    nlohmann::json j = good_report();
    change(j);
    return j;
  };
  const std::vector<nlohmann::json> bad = {
      nlohmann::json::array(),
      broken([](auto& j) { j.erase("status"); }),
      broken([](auto& j) { j["status"] = "SKIP"; }),
      broken([](auto& j) { j["status"] = 1; }),
      broken([](auto& j) { j["status"] = "PASS"; }),  // with a problem listed
      broken([](auto& j) { j["problems"] = "none"; }),
      broken([](auto& j) { j["problems"][0] = 5; }),
      broken([](auto& j) { j["problems"][0]["message"] = nullptr; }),
      broken([](auto& j) { j["outputs"][0]["elements"] = -1; }),
      broken([](auto& j) { j["outputs"][0]["mismatches"] = 1.5; }),
      broken([](auto& j) { j["outputs"][0]["max_rel"] = "big"; }),
      broken([](auto& j) { j.erase("fiber_switches"); }),
  };
  for (const auto& j : bad) {
    EXPECT_THROW(verify::case_result_from_json(j), std::runtime_error) << j.dump();
  }
}

// ---- what spec code may include ----

TEST(IncludePolicy, RefusesHostFilesHoweverSpelled) {
  for (const char* text : {"#include </etc/passwd>", "  #  include \"/dev/stdin\"", "%:include </etc/passwd>",
                           "#inc\\\nlude </etc/passwd>", "/* x\n */ #include </etc/passwd>", "# /**/ include <a/../../b>",
                           "#include_next </etc/shadow>", "#import </etc/passwd>", "#define F </etc/passwd>\n#include F",
                           "#line 1 \"/etc/passwd\"", "#pragma GCC dependency \"/etc/passwd\"",
                           "auto s = R\"(/*)\";\n#include </etc/passwd>\n// */"}) {
    EXPECT_NE(support::include_violation(text, "spec.yaml", 10), "") << text;
  }
}

TEST(IncludePolicy, AllowsTheShimTheStandardLibraryAndFilesBeside) {
  for (const char* text : {"#include <metal_stdlib>", "#include <simd/simd.h>", "#include \"row_utils.h\"",
                           "#include <algorithm>", "const char* s = \"#include </etc/passwd>\";",
                           "auto s = R\"x(\n#include </etc/passwd>\n)x\";", "// #include </etc/passwd>", "#line 12"}) {
    EXPECT_EQ(support::include_violation(text, "spec.yaml", 10), "") << text;
  }
}

TEST(IncludePolicy, LocatesTheDirectiveInTheSpec) {
  EXPECT_EQ(support::include_violation("x = 1;\n  #include </etc/passwd>", "s.yaml", 20, 3).rfind("s.yaml:21:5: error: ", 0),
            0u);
}

}  // namespace
