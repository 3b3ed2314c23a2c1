// `mtlgen import`: the skeletons written for tests/import/kernels/*.metal (snapshots in
// tests/import/skeletons/, MTLGEN_UPDATE_GOLDEN=1 rewrites them), `check` listing exactly their
// TODOs, and the user's flow end to end: import into a fresh directory, fill in each TODO, verify.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

#include "cli/driver.h"
#include "import/spec_skeleton.h"
#include "spec/front_end.h"
#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> metal_files() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator("tests/import/kernels")) {
    if (e.path().extension() == ".metal") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<import::Skeleton> skeletons_of(const fs::path& metal, const fs::path& out_dir, const std::string& entry = "") {
  support::Diagnostics diags;
  msl::ParseOptions po;
  po.file = metal;
  msl::Unit unit = msl::parse(po, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.format_all();
  auto skeletons = import::spec_skeletons(unit, {metal, out_dir, metal.generic_string(), entry}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.format_all();
  return skeletons;
}

class Skeletons : public ::testing::TestWithParam<std::string> {};

TEST_P(Skeletons, MatchSnapshots) {
  const fs::path metal = fs::path("tests/import/kernels") / (GetParam() + ".metal");
  const fs::path golden = "tests/import/skeletons";
  auto skeletons = skeletons_of(metal, golden);
  ASSERT_FALSE(skeletons.empty());
  for (const auto& s : skeletons) {
    if (const char* update = std::getenv("MTLGEN_UPDATE_GOLDEN"); update && std::string(update) == "1") {
      fs::create_directories(golden);
      std::ofstream(golden / s.file_name, std::ios::binary) << s.text;
      continue;
    }
    ASSERT_TRUE(fs::exists(golden / s.file_name)) << "no snapshot " << s.file_name << "; run with MTLGEN_UPDATE_GOLDEN=1";
    EXPECT_EQ(read(golden / s.file_name), s.text) << s.file_name << " differs from its snapshot";
  }
}

// `check` on a skeleton reports each TODO at its own line and column, and nothing else.
TEST_P(Skeletons, CheckListsExactlyTheTodos) {
  const fs::path metal = fs::path("tests/import/kernels") / (GetParam() + ".metal");
  for (const auto& s : skeletons_of(metal, "tests/import/skeletons")) {
    const fs::path path = fs::path("tests/import/skeletons") / s.file_name;
    support::Diagnostics diags;
    EXPECT_FALSE(spec::load_spec(path.string(), path.string(), diags));
    std::vector<std::string> lines;
    std::istringstream text(read(path));
    for (std::string l; std::getline(text, l);) lines.push_back(l);
    ASSERT_EQ(diags.error_count(), s.placeholders) << diags.format_all();
    for (const auto& d : diags.all()) {
      EXPECT_EQ(d.kind, support::ErrorKind::placeholder) << diags.format(d);
      ASSERT_GE(d.loc.line, 1);
      EXPECT_EQ(lines[d.loc.line - 1].compare(d.loc.column - 1, 4, "TODO"), 0) << diags.format(d);
      EXPECT_NE(d.hint.find("replace it with"), std::string::npos);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Import, Skeletons, ::testing::ValuesIn(metal_files()),
                         [](const auto& info) { return info.param; });

TEST(Import, UnknownEntryIsNamedWithASuggestion) {
  support::Diagnostics diags;
  msl::ParseOptions po;
  po.file = "tests/import/kernels/row_kernels.metal";
  msl::Unit unit = msl::parse(po, diags);
  auto none = import::spec_skeletons(unit, {po.file, "x", "row_kernels.metal", "rms_rows_float33"}, diags);
  EXPECT_TRUE(none.empty());
  ASSERT_EQ(diags.error_count(), 1);
  EXPECT_NE(diags.all()[0].hint.find("rms_rows_float32"), std::string::npos) << diags.format_all();
}

TEST(Import, OneEntryGivesOneSkeletonWithThatEntry) {
  auto s = skeletons_of("tests/import/kernels/row_kernels.metal", "x", "scale_shift_float16");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].file_name, "scale_shift_float16.yaml");
  EXPECT_NE(s[0].text.find("scale_shift_float16: {T: half}"), std::string::npos) << s[0].text;
  EXPECT_EQ(s[0].text.find("scale_shift_float32"), std::string::npos) << s[0].text;
}

// The CLI keeps a completed spec: importing again over it is refused, with nothing written.
TEST(Import, NeverReplacesTheUsersSpec) {
  fs::path dir = fs::temp_directory_path() / ("mtlgen-import-keep-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  driver::ImportOptions o;
  o.source = "tests/import/kernels/spirv_cross_style.metal";
  o.out_dir = dir;
  o.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(driver::run_import(o, out, err), driver::kOk) << err.str();
  EXPECT_EQ(driver::run_import(o, out, err), driver::kOk) << "same bytes again are no conflict";
  std::ofstream(dir / "main0.yaml") << "name: main0  # completed by hand\n";
  EXPECT_EQ(driver::run_import(o, out, err), driver::kIoError);
  EXPECT_NE(err.str().find("--force"), std::string::npos) << err.str();
  EXPECT_EQ(read(dir / "main0.yaml"), "name: main0  # completed by hand\n");
  o.force = true;
  EXPECT_EQ(driver::run_import(o, out, err), driver::kOk);
  EXPECT_NE(read(dir / "main0.yaml").find("TODO"), std::string::npos);
  fs::remove_all(dir);
}

// One kernel that cannot be read costs only its own skeleton: the others are written, the
// unreadable one is listed at its definition with the error in the helper it calls, an error no
// kernel depends on is a warning, and the exit status says something was skipped.
TEST(Import, AnUnreadableKernelCostsOnlyItsOwnSkeleton) {
  fs::path dir = fs::temp_directory_path() / ("mtlgen-import-partial-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  driver::ImportOptions o;
  o.source = "tests/import/partial/one_kernel_unreadable.metal";
  o.out_dir = dir;
  std::ostringstream out, err;
  EXPECT_EQ(driver::run_import(o, out, err), driver::kSpecErrors) << err.str();
  EXPECT_TRUE(fs::exists(dir / "copy_rows.yaml")) << out.str() << err.str();
  EXPECT_TRUE(fs::exists(dir / "scale_rows.yaml")) << out.str() << err.str();
  EXPECT_FALSE(fs::exists(dir / "uses_broken.yaml"));
  const std::string e = err.str();
  EXPECT_NE(e.find("one_kernel_unreadable.metal:25:13: error: kernel `uses_broken` (1 entry: uses_broken_f32) could "
                   "not be read"), std::string::npos) << e;
  EXPECT_NE(e.find("one_kernel_unreadable.metal:7:3: error: unknown type name 'undeclared_type'"), std::string::npos) << e;
  EXPECT_NE(e.find("one_kernel_unreadable.metal:17:50: warning: use of undeclared identifier 'missing_constant' "
                   "(in no kernel's declarations)"), std::string::npos) << e;
  EXPECT_NE(e.find("1 kernel skipped (1 entry point)"), std::string::npos) << e;

  o.entry = "uses_broken_f32";  // asking for the unreadable one by name says why it cannot be had
  std::ostringstream out2, err2;
  EXPECT_EQ(driver::run_import(o, out2, err2), driver::kSpecErrors);
  EXPECT_NE(err2.str().find("kernel `uses_broken`"), std::string::npos) << err2.str();
  fs::remove_all(dir);
}

// A spec's `source:` is the same file with the same headers however the spec's path is spelled.
TEST(Import, SpecPathSpellingChangesNothing) {
  std::vector<std::string> sources;
  for (const std::string path : {"tests/import/specs/transpose_tiles.yaml", "./tests/import/specs/transpose_tiles.yaml",
                                  "tests/import/../import/specs/transpose_tiles.yaml"}) {
    support::Diagnostics diags;
    auto k = spec::load_spec(path, path, diags);
    ASSERT_TRUE(k) << diags.format_all();
    ASSERT_TRUE(k->source->simulator_headers.count("row_utils.h")) << path;  // what it #includes
    sources.push_back(k->source->file + "|" + std::to_string(k->source->simulator_headers.size()));
  }
  EXPECT_EQ(sources[0].substr(0, sources[0].find('|')), "tests/import/kernels/row_kernels.metal");
  EXPECT_EQ(sources[1], sources[0]);
  EXPECT_EQ(sources[2], sources[0]);
}

// A spec's load reads only its entries' instantiations; an entry the file does not declare is still
// told with every entry point the file has (the whole file read again for the hint).
TEST(Import, AMisspeltEntryIsToldWithTheNearestOfAllTheFilesEntries) {
  fs::path dir = fs::temp_directory_path() / ("mtlgen-import-entry-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string spec = read("tests/import/specs/transpose_tiles.yaml");
  spec.replace(spec.find("source: ../"), std::string("source: ../").size(),
               "source: " + fs::absolute("tests/import").string() + "/");
  spec.replace(spec.find("transpose_float16:"), std::string("transpose_float16:").size(), "transpose_floot16:");
  std::ofstream(dir / "s.yaml") << spec;
  support::Diagnostics diags;
  EXPECT_FALSE(spec::load_spec((dir / "s.yaml").string(), "s.yaml", diags));
  ASSERT_EQ(diags.error_count(), 1) << diags.format_all();
  EXPECT_EQ(diags.all()[0].loc.line, 9);
  EXPECT_NE(diags.all()[0].message.find("`transpose_floot16` is not an entry point"), std::string::npos)
      << diags.all()[0].message;
  EXPECT_EQ(diags.all()[0].hint, "did you mean `transpose_float16`?");
  fs::remove_all(dir);
}

// Headers below an include root reach the simulator under the path their #includes name, rewritten.
TEST(Import, HeadersUnderAnIncludeRootAreRewrittenWhereTheyAre) {
  support::Diagnostics diags;
  auto k = spec::load_spec("tests/import/specs/tile_transpose_header.yaml", "tile_transpose_header.yaml", diags);
  ASSERT_TRUE(k) << diags.format_all();
  const auto& headers = k->source->simulator_headers;
  ASSERT_TRUE(headers.count("tiles/ops/tile_transpose.h")) << "headers: " << headers.size();
  ASSERT_TRUE(headers.count("tiles/ops/tile_common.h"));
  EXPECT_NE(headers.at("tiles/ops/tile_transpose.h").find("::mtlsim::threadgroup_local<T[TILE][TILE + 1]>"),
            std::string::npos)
      << headers.at("tiles/ops/tile_transpose.h");
  EXPECT_EQ(k->source->include_paths, std::vector<std::string>{"tests/import/include_dirs/root"});
}

// An include directory that does not exist is an error at the line that names it.
TEST(Import, MissingIncludeDirIsLocated) {
  fs::path dir = fs::temp_directory_path() / ("mtlgen-import-incdir-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string spec = read("tests/import/specs/tile_transpose_header.yaml");
  size_t at = spec.find("include_dirs: [../include_dirs/root]");
  ASSERT_NE(at, std::string::npos);
  spec.replace(at, std::string("include_dirs: [../include_dirs/root]").size(), "include_dirs: [no/such/dir]");
  size_t source = spec.find("source: ../include_dirs/kernels/");
  spec.replace(source, std::string("source: ../").size(), "source: " + fs::absolute("tests/import").string() + "/");
  std::ofstream(dir / "s.yaml") << spec;
  support::Diagnostics diags;
  EXPECT_FALSE(spec::load_spec((dir / "s.yaml").string(), "s.yaml", diags));
  ASSERT_EQ(diags.error_count(), 1) << diags.format_all();
  EXPECT_EQ(diags.all()[0].kind, support::ErrorKind::io);
  EXPECT_EQ(diags.all()[0].loc.line, 7);
  EXPECT_EQ(diags.all()[0].loc.column, 16);
  EXPECT_NE(diags.all()[0].message.find("include directory `no/such/dir` does not exist"), std::string::npos);
  fs::remove_all(dir);
}

// Replaces each TODO `check` reports (a double-quoted scalar) with the YAML text given for its
// key path; a path without a value fails the test.
std::string fill_in(const fs::path& spec, const std::map<std::string, std::string>& values) {
  support::Diagnostics diags;
  spec::load_spec(spec.string(), spec.string(), diags);
  std::vector<std::string> lines;
  std::istringstream text(read(spec));
  for (std::string l; std::getline(text, l);) lines.push_back(l);
  std::set<std::string> used;
  for (auto it = diags.all().rbegin(); it != diags.all().rend(); ++it) {  // right to left keeps columns valid
    const std::string& m = it->message;
    std::string path = m.substr(m.find('`') + 1, m.rfind('`') - m.find('`') - 1);
    auto value = values.find(path);
    if (value == values.end()) {
      ADD_FAILURE() << "no value for " << path;
      continue;
    }
    used.insert(path);
    std::string& line = lines[it->loc.line - 1];
    size_t open = static_cast<size_t>(it->loc.column) - 2;  // the opening quote
    size_t close = open + 1;
    while (close < line.size() && line[close] != '"') close += line[close] == '\\' ? 2 : 1;
    line.replace(open, close - open + 1, value->second);
  }
  EXPECT_EQ(used.size(), values.size()) << "values for TODOs the skeleton does not have";
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string quoted(const std::string& text) {
  YAML::Emitter e;
  e << YAML::DoubleQuoted << text;
  return e.c_str();
}

// What a user does: import, fill in the TODOs `check` lists, verify the file as written.
void import_fill_verify(const std::string& metal, const std::string& skeleton,
                        const std::map<std::string, std::string>& values) {
  fs::path dir = fs::temp_directory_path() / ("mtlgen-import-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  driver::ImportOptions o;
  o.source = fs::path("tests/import/kernels") / metal;
  o.out_dir = dir;
  o.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(driver::run_import(o, out, err), driver::kOk) << err.str();
  fs::path spec = dir / skeleton;
  std::string completed = fill_in(spec, values);
  std::ofstream(spec, std::ios::binary) << completed;
  ASSERT_EQ(driver::run_check({spec.string()}, out, err), driver::kOk) << err.str() << completed;
  verify::VerifyOptions vo;
  vo.inputs = {spec.string()};
  vo.variants = ir::VariantSelection::all;
  vo.quiet = true;
  vo.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  EXPECT_EQ(verify::run_verify(vo, out, err), driver::kOk) << out.str() << err.str();
  fs::remove_all(dir);
}

TEST(ImportFillVerify, SpirvCrossStyle) {
  import_fill_verify("spirv_cross_style.metal", "main0.yaml",
                     {{"summary", "_52[i] = _46[i] * scale"},
                      {"dims", "{n: {min: 1}}"},
                      {"buffers._46.shape", "[n]"},
                      {"buffers._52.shape", "[n]"},
                      {"scalars.scale.default", "2.0"},
                      {"arguments.registers.n", "n"},
                      {"dispatch.threadgroups", "[\"ceil_div(n, 64)\"]"},
                      {"dispatch.threads_per_threadgroup", "[64]"},
                      {"reference", quoted("for (int64_t i = 0; i < n; ++i) _52[i] = _46[i] * scale;")},
                      {"tests.cases[0].dims", "{n: 100}"}});
}

TEST(ImportFillVerify, MlxStyleTemplateWithFunctionConstant) {
  import_fill_verify("row_kernels.metal", "scale_shift.yaml",
                     {{"summary", "y = x * scale (+ bias)"},
                      {"buffers.x.shape", "[count]"},
                      {"buffers.y.shape", "[count]"},
                      {"buffers.bias.shape", "[count]"},
                      {"scalars.scale.default", "0.5"},
                      {"dispatch.threadgroups", "[\"ceil_div(count, 64)\"]"},
                      {"dispatch.threads_per_threadgroup", "[64]"},
                      {"reference", quoted("for (int64_t i = 0; i < count; ++i) {\n"
                                           "  float v = float(x[i]) * scale;\n"
                                           "  if (function_constants.has_bias) v += float(bias[i]);\n"
                                           "  y[i] = T(v);\n"
                                           "}\n")},
                      {"tests.cases[0].dims.count", "100"}});
}

// ggml style: an argument struct with a 64-bit stride, `char*` buffers read with byte offsets
// (their element types are the spec's to say), a q4_0 block layout, binding by parameter order.
TEST(ImportFillVerify, GgmlStyleArgumentStructAndCharBuffers) {
  import_fill_verify(
      "ggml_style.metal", "kernel_mul_mv_q4_0_f32.yaml",
      {{"summary", "q4_0 matrix-vector product"},
       {"dims", "{rows: {min: 1}, k: {min: 32, multiple_of: 32}}"},
       {"buffers.src0.shape", "[\"rows * (k / 32) * 18\"], type: uint8"},
       {"buffers.src1.shape", "[k], type: float"},
       {"buffers.dst.shape", "[rows], type: float"},
       {"arguments.args.ne00", "k"},
       {"arguments.args.ne01", "rows"},
       {"arguments.args.nb01", "\"(k / 32) * 18\""},
       {"arguments.args.ne0", "rows"},
       {"dispatch.threadgroups", "[\"ceil_div(rows, 2)\"]"},
       {"dispatch.threads_per_threadgroup", "[32]"},
       {"reference", quoted("const int64_t blocks = k / 32;\n"
                            "for (int64_t r = 0; r < rows; ++r) {\n"
                            "  double sum = 0.0;\n"
                            "  for (int64_t b = 0; b < blocks; ++b) {\n"
                            "    const uint8_t* block = &src0[(r * blocks + b) * 18];\n"
                            "    float d = float(mtlgen::half::from_bits(uint16_t(block[0] | (block[1] << 8))));\n"
                            "    for (int j = 0; j < 16; ++j) {\n"
                            "      sum += double(d) * ((block[2 + j] & 15) - 8) * src1[b * 32 + j];\n"
                            "      sum += double(d) * ((block[2 + j] >> 4) - 8) * src1[b * 32 + j + 16];\n"
                            "    }\n"
                            "  }\n"
                            "  dst[r] = float(sum);\n"
                            "}\n")},
       // Bytes up to 59 keep every half scale finite; a tolerance for the f32 sum's order.
       {"tests.cases[0].dims", "{rows: 3, k: 64}\n      inputs: {src0: {dist: uniform, min: 0, max: 59}}\n"
                               "  tolerance: {float: {max_abs: 1.0e-4, max_rel: 1.0e-4}}"}});
}

// A kernel instantiated with `float4` keeps it (a fixed argument: shapes count floats) beside an
// integer tunable; functors that tell two instantiations apart give each its own spec, so every
// entry matches a variant.
TEST(ImportFillVerify, VectorAndFunctorTemplateArguments) {
  import_fill_verify("template_arguments.metal", "scale.yaml",
                     {{"summary", "out = in * N"},
                      {"dims", "{n: {min: 256, multiple_of: 256}}"},
                      {"buffers.in.shape", "[n]"},
                      {"buffers.out.shape", "[n]"},
                      {"dispatch.threadgroups", "[\"n / 256\"]"},
                      {"dispatch.threads_per_threadgroup", "[64]"},
                      {"reference", quoted("for (int64_t i = 0; i < n; ++i) out[i] = in[i] * float(N);")},
                      {"tests.cases[0].dims", "{n: 512}"}});
  import_fill_verify("template_arguments.metal", "argmin_f32.yaml",
                     {{"summary", "flags the positive elements"},
                      {"dims", "{n: {min: 64, multiple_of: 64}}"},
                      {"buffers.in.shape", "[n]"},
                      {"buffers.out.shape", "[n]"},
                      {"dispatch.threadgroups", "[\"n / 64\"]"},
                      {"dispatch.threads_per_threadgroup", "[64]"},
                      {"reference", quoted("for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? 1.0f : 0.0f;")},
                      {"tests.cases[0].dims", "{n: 128}"}});
}

}  // namespace
