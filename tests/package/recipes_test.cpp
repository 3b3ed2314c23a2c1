// The package's macOS build recipes run on Linux against tests/package/fake/xcrun, which records
// each command line and writes placeholder outputs: every kernel compiled once with its spec's MSL
// version and macOS, no fast math, sources recorded as asked, the metallib linked (by `metal
// -frecord-sources=flat` with a .metallibsym when FLAT), the metallib's bytes embedded, the
// references compiled. The glue needs Apple's SDK: tests/emit_objc checks it against stubs.
#include <sstream>

#include "package_test_util.h"

namespace mtlgen::testing {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has(const std::string& line, const std::string& part) { return line.find(part) != std::string::npos; }

std::string with_fake_xcrun(const fs::path& log) {
  return "PATH=" + sh_quote(fake_tools()) + ":\"$PATH\" FAKE_XCRUN_LOG=" + sh_quote(log) + " ";
}

enum class Record { on, flat, off };

// The recorded xcrun lines of one build: a compile per kernel with its target, then one link.
void expect_metal_build(const std::vector<std::string>& log, Record record, const std::string& metallib) {
  ASSERT_EQ(log.size(), 3u) << ::testing::PrintToString(log);
  int scale = 0, shift = 0;
  for (size_t i = 0; i < 2; ++i) {
    const std::string& line = log[i];
    EXPECT_TRUE(has(line, "xcrun -sdk macosx metal -c ")) << line;
    EXPECT_TRUE(has(line, " -fno-fast-math")) << line;
    EXPECT_EQ(has(line, " -frecord-sources"), record != Record::off) << line;
    EXPECT_FALSE(has(line, "-frecord-sources=flat")) << line;  // only the link writes the .metallibsym
    if (has(line, "scale/scale.metal ")) {
      ++scale;
      EXPECT_TRUE(has(line, " -std=metal3.0 -mmacosx-version-min=13.0 ")) << line;
    }
    if (has(line, "shift_bf16/shift_bf16.metal ")) {
      ++shift;
      EXPECT_TRUE(has(line, " -std=metal3.1 -mmacosx-version-min=14.0 ")) << line;
    }
  }
  EXPECT_EQ(scale, 1);
  EXPECT_EQ(shift, 1);
  const std::string& link = log[2];
  EXPECT_TRUE(has(link, record == Record::flat ? "xcrun -sdk macosx metal -frecord-sources=flat "
                                               : "xcrun -sdk macosx metallib "))
      << link;
  EXPECT_TRUE(has(link, "scale.air") && has(link, "shift_bf16.air")) << link;
  EXPECT_TRUE(has(link, "-o ") && has(link, metallib)) << link;
}

// Links a program against the embedded metallib and checks it holds the metallib's bytes.
void expect_embedded(const fs::path& dir, const fs::path& library, const fs::path& metallib, const fs::path& tree) {
  std::ofstream(dir / "main.cpp") << "#include \"mtlgen_embedded_metallib.h\"\n#include <cstdio>\n"
                                     "int main() { std::fwrite(mtlgen::embedded_metallib(), 1, "
                                     "mtlgen::embedded_metallib_size(), stdout); }\n";
  Command link = run(std::string(MTLGEN_CXX) + " -std=c++17 -I" + sh_quote(tree / "support") + " " + sh_quote(dir / "main.cpp") +
                 " " + sh_quote(library) + " -o " + sh_quote(dir / "main"));
  ASSERT_EQ(link.rc, 0) << link.output;
  Command bytes = run(sh_quote(dir / "main"));
  EXPECT_EQ(bytes.output, read_file(metallib));
  EXPECT_FALSE(bytes.output.empty());
}

TEST(Makefile, CompilesEachKernelOnceWithItsTargetThenLinksAndBuildsTheReferences) {
  fs::path dir = scratch_dir();
  fs::path tree = shared_tree();
  std::string make = with_fake_xcrun(dir / "xcrun.log") + "make -C " + sh_quote(tree) + " BUILD=" + sh_quote(dir / "b") +
                     " CXX=" + MTLGEN_CXX + " ";
  Command r = run(make + "metallib reference");
  ASSERT_EQ(r.rc, 0) << r.output;
  expect_metal_build(lines_of(read_file(dir / "xcrun.log")), Record::on, (dir / "b/small.metallib").string());
  EXPECT_TRUE(fs::exists(dir / "b/libmtlgen_reference.a"));
  Command again = run(make + "metallib reference");  // nothing changed: nothing recompiled
  ASSERT_EQ(again.rc, 0) << again.output;
  EXPECT_EQ(lines_of(read_file(dir / "xcrun.log")).size(), 3u);
}

TEST(Makefile, RecordSourcesFlatWritesTheSymbolFileAndOffRecordsNone) {
  fs::path dir = scratch_dir();
  fs::path tree = shared_tree();
  for (auto [value, record] : {std::pair{"flat", Record::flat}, std::pair{"off", Record::off}}) {
    fs::path log = dir / (std::string(value) + ".log"), build = dir / value;
    Command r = run(with_fake_xcrun(log) + "make -C " + sh_quote(tree) + " BUILD=" + sh_quote(build) + " RECORD_SOURCES=" +
                value + " metallib");
    ASSERT_EQ(r.rc, 0) << r.output;
    expect_metal_build(lines_of(read_file(log)), record, (build / "small.metallib").string());
    EXPECT_EQ(fs::exists(build / "small.metallibsym"), record == Record::flat);
  }
  Command bad = run(with_fake_xcrun(dir / "bad.log") + "make -C " + sh_quote(tree) + " RECORD_SOURCES=yes metallib");
  EXPECT_NE(bad.rc, 0);
  EXPECT_TRUE(has(bad.output, "RECORD_SOURCES is on, flat or off")) << bad.output;
}

TEST(Makefile, EmbedLinksTheMetallibIntoABinary) {
  fs::path dir = scratch_dir();
  fs::path tree = shared_tree();
  Command r = run(with_fake_xcrun(dir / "xcrun.log") + "make -C " + sh_quote(tree) + " BUILD=" + sh_quote(dir / "b") +
              " CXX=" + MTLGEN_CXX + " EMBED=1 embed");
  ASSERT_EQ(r.rc, 0) << r.output;
  expect_embedded(dir, dir / "b/libmtlgen_embedded_metallib.a", dir / "b/small.metallib", tree);
}

// Configures the package's CMakeLists.txt (Ninja, the stand-in xcrun) with `options` and builds.
Command cmake_build(const fs::path& dir, const fs::path& tree, const std::string& options) {
  std::string env = with_fake_xcrun(dir / "xcrun.log");
  Command r = run(env + MTLGEN_CMAKE + " -S " + sh_quote(tree) + " -B " + sh_quote(dir / "b") + " -G Ninja -DCMAKE_CXX_COMPILER=" +
              MTLGEN_CXX + " " + options);
  if (r.rc != 0) return r;
  return run(env + MTLGEN_CMAKE + " --build " + sh_quote(dir / "b"));
}

TEST(CMakeRecipe, BuildsMetallibEmbeddedMetallibAndReferences) {
  fs::path dir = scratch_dir();
  fs::path tree = shared_tree();
  Command r = cmake_build(dir, tree, "-DMTLGEN_NON_APPLE_RECIPES=ON -DMTLGEN_EMBED_METALLIB=ON -DMTLGEN_RECORD_SOURCES=FLAT");
  ASSERT_EQ(r.rc, 0) << r.output;
  expect_metal_build(lines_of(read_file(dir / "xcrun.log")), Record::flat, (dir / "b/small.metallib").string());
  EXPECT_TRUE(fs::exists(dir / "b/small.metallibsym"));
  EXPECT_TRUE(fs::exists(dir / "b/libmtlgen_reference.a"));
  expect_embedded(dir, dir / "b/libmtlgen_embedded_metallib.a", dir / "b/small.metallib", tree);
}

TEST(CMakeRecipe, RecordSourcesOnByDefaultAndOff) {
  fs::path dir = scratch_dir();
  fs::path tree = shared_tree();
  Command on = cmake_build(dir, tree, "-DMTLGEN_NON_APPLE_RECIPES=ON");
  ASSERT_EQ(on.rc, 0) << on.output;
  expect_metal_build(lines_of(read_file(dir / "xcrun.log")), Record::on, (dir / "b/small.metallib").string());
  fs::remove(dir / "xcrun.log");
  Command off = cmake_build(dir, tree, "-DMTLGEN_RECORD_SOURCES=OFF");  // reconfigure: every .air again
  ASSERT_EQ(off.rc, 0) << off.output;
  expect_metal_build(lines_of(read_file(dir / "xcrun.log")), Record::off, (dir / "b/small.metallib").string());
}

TEST(CMakeRecipe, RefusesToConfigureOffMacosAndBadOptions) {
  fs::path dir = scratch_dir();
  fs::path tree = shared_tree();
  Command linux_host = cmake_build(dir, tree, "");
  EXPECT_NE(linux_host.rc, 0);
  EXPECT_TRUE(has(linux_host.output, "builds on macOS")) << linux_host.output;
  Command bad = cmake_build(dir, tree, "-DMTLGEN_NON_APPLE_RECIPES=ON -DMTLGEN_RECORD_SOURCES=YES");
  EXPECT_NE(bad.rc, 0);
  EXPECT_TRUE(has(bad.output, "MTLGEN_RECORD_SOURCES is ON, FLAT or OFF")) << bad.output;
}

}  // namespace
}  // namespace mtlgen::testing
