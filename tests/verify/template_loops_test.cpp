// A hand-written template kernel in ggml's pattern runs as loops (tests/verify/template_loops/):
// its loop form comes from the spec's parse of the file as written (instantiations kept), and is
// inserted into the kernel object's copy right after the kernel, before the `#undef` of the macro
// its body names; the lines after it keep their numbers, so findings name the user's lines on
// either path. So does one defined in a header the file includes (MLX's pattern): its form goes
// into the copy of the header, numbered as the copy numbers the header's lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "support/exit_code.h"
#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

struct TemplateRun {
  int exit_code = 0;
  std::string printed;
  std::string notes;  // the kernel object's loop_form.txt
  std::string copy;   // its copy of `copied` (sums.metal)
  std::string json;   // --json
};

std::string file_text(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TemplateRun verify_template(const std::string& name, mtlsim::ExecPath exec, const fs::path& cache,
                            const std::string& copied = "sums.metal") {
  verify::VerifyOptions o;
  o.inputs = {"tests/verify/template_loops/" + name + ".yaml"};
  o.module.cache_dir = cache.string();
  o.result_cache = false;
  o.quiet = true;
  o.exec = exec;
  o.json_path = (cache / "cases.json").string();
  std::ostringstream out, err;
  TemplateRun run;
  run.exit_code = verify::run_verify(o, out, err);
  run.printed = out.str() + err.str();
  run.json = file_text(o.json_path);
  for (const auto& entry : fs::directory_iterator(cache / "kernel")) {
    run.notes += file_text(entry.path() / "loop_form.txt");
    run.copy += file_text(entry.path() / "sim" / "source" / copied);
  }
  return run;
}

fs::path template_cache(const std::string& name) {
  fs::path cache = fs::temp_directory_path() / ("mtlgen-template-loops-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  return cache;
}

TEST(TemplateLoopForm, AGgmlStyleKernelRunsAsLoops) {
  const fs::path cache = template_cache("row_sum");
  TemplateRun run = verify_template("row_sum", mtlsim::ExecPath::automatic, cache);
  EXPECT_EQ(run.exit_code, support::kOk) << run.printed;
  EXPECT_EQ(run.json.find("\"threadgroups_as_loops\": 0"), std::string::npos) << run.json;
  EXPECT_NE(run.notes.find("sums.metal: `row_sum` runs as loops"), std::string::npos) << run.notes;
  EXPECT_NE(run.notes.find("sums.metal: `row_sum_all` runs as loops"), std::string::npos) << run.notes;
  // Right after the kernel, before SIMD_WIDTH is undefined, the body's FC_MEAN defined around it,
  // and the line after it numbered as the user's.
  const size_t form = run.copy.find("#define FC_MEAN FC_sums_mean\n\n// The loop form of `row_sum`");
  const size_t after = run.copy.find("#define MTLSIM_LOOPS_row_sum 1\n#undef FC_MEAN\n#line 28\n");
  EXPECT_NE(form, std::string::npos) << run.copy;
  EXPECT_NE(after, std::string::npos) << run.copy;
  EXPECT_LT(after, run.copy.find("#undef SIMD_WIDTH")) << run.copy;
  fs::remove_all(cache);
}

// sums.metal:45 comes after row_sum's form: the fiber path runs the user's lines there, the loop
// form its own `#line`-ed copy of them.
TEST(TemplateLoopForm, AFindingAfterAnInsertedFormNamesTheUsersLine) {
  const fs::path cache = template_cache("row_sum_all");
  for (mtlsim::ExecPath exec : {mtlsim::ExecPath::automatic, mtlsim::ExecPath::fibers}) {
    TemplateRun run = verify_template("row_sum_all", exec, cache);
    EXPECT_EQ(run.exit_code, support::kVerifyFailed) << run.printed;
    EXPECT_NE(run.printed.find("received uninitialised threadgroup memory"), std::string::npos) << run.printed;
    EXPECT_NE(run.printed.find("(tests/verify/template_loops/sums.metal:45)"), std::string::npos) << run.printed;
    const bool as_loops = run.json.find("\"threadgroups_as_loops\": 0") == std::string::npos;
    EXPECT_EQ(as_loops, exec == mtlsim::ExecPath::automatic) << run.json;
  }
  fs::remove_all(cache);
}

// row_max's `simd_max(m)` calls the simd function for T = float and wide_max.h's overload for
// T = wide_t (MLX's softmax.h beside bf16_math.h): the loop form checks which in each
// instantiation, so the file's shared object, which instantiates row_max<wide_t> too, is refused
// with its forms (never running the overload as the simd function), and the entry this module runs
// gets an object of its own, with its form (sim_module.cpp, source_kernel_object).
TEST(TemplateLoopForm, ASimdFunctionAHeaderOverloadsRunsAsLoopsWhereItIsTheSimdFunction) {
  const fs::path cache = template_cache("row_max");
  TemplateRun run = verify_template("row_max", mtlsim::ExecPath::automatic, cache, "overloaded_max.metal");
  EXPECT_EQ(run.exit_code, support::kOk) << run.printed;
  EXPECT_EQ(run.json.find("\"threadgroups_as_loops\": 0"), std::string::npos) << run.json;
  EXPECT_NE(run.notes.find("overloaded_max.metal: `row_max` runs as loops"), std::string::npos) << run.notes;
  EXPECT_EQ(run.notes.find("did not compile"), std::string::npos) << run.notes;
  std::string refused;
  for (const auto& entry : fs::directory_iterator(cache / "kernel")) refused += file_text(entry.path() / "refused_loop_forms.log");
  EXPECT_NE(refused.find("T = wide_t"), std::string::npos) << refused;
  EXPECT_NE(refused.find("static assertion failed: mtlgen loop form: `simd_max` at line 15 calls an overload of the user's "
                         "files here, not the simd function"),
            std::string::npos)
      << refused;
  fs::remove_all(cache);
}

TEST(TemplateLoopForm, AKernelDefinedInAHeaderRunsAsLoops) {
  const fs::path cache = template_cache("row_total");
  TemplateRun run = verify_template("row_total", mtlsim::ExecPath::automatic, cache, "row_sums.h");
  EXPECT_EQ(run.exit_code, support::kOk) << run.printed;
  EXPECT_EQ(run.json.find("\"threadgroups_as_loops\": 0"), std::string::npos) << run.json;
  EXPECT_NE(run.notes.find("header_sums.metal: `row_total` runs as loops (defined in row_sums.h)"), std::string::npos)
      << run.notes;
  // In the header's copy, right after the kernel (line 18 of the header, 19 of the copy, whose
  // first line is its `#line`), its statements and the line after it numbered as the copy numbers
  // the header's lines (n * 1,000,000 + line).
  const size_t form = run.copy.find("  if (i == 0) out[row] = T(total);\n}\n\n// The loop form of `row_total`");
  EXPECT_NE(form, std::string::npos) << run.copy;
  EXPECT_NE(run.copy.find("#line 1000013\n"), std::string::npos) << run.copy;
  EXPECT_NE(run.copy.find("#define MTLSIM_LOOPS_row_total 1\n#line 1000019\n\ntemplate <typename T>\nkernel void row_total_all"),
            std::string::npos)
      << run.copy;
  fs::remove_all(cache);
}

// row_sums.h:29 comes after row_total's form in the header's copy: the fiber path runs the
// header's lines there, the loop form its own `#line`-ed copy of them; both name the header.
TEST(TemplateLoopForm, AFindingInAHeadersKernelNamesTheHeadersLine) {
  const fs::path cache = template_cache("row_total_all");
  for (mtlsim::ExecPath exec : {mtlsim::ExecPath::automatic, mtlsim::ExecPath::fibers}) {
    TemplateRun run = verify_template("row_total_all", exec, cache, "row_sums.h");
    EXPECT_EQ(run.exit_code, support::kVerifyFailed) << run.printed;
    EXPECT_NE(run.printed.find("received uninitialised threadgroup memory"), std::string::npos) << run.printed;
    EXPECT_NE(run.printed.find("row_sums.h:29)"), std::string::npos) << run.printed;
    EXPECT_EQ(run.printed.find("1000029"), std::string::npos) << run.printed;
    const bool as_loops = run.json.find("\"threadgroups_as_loops\": 0") == std::string::npos;
    EXPECT_EQ(as_loops, exec == mtlsim::ExecPath::automatic) << run.json;
  }
  fs::remove_all(cache);
}

}  // namespace
