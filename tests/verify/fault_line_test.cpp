// How a crash or hang report's pc markers become a .metal line (resolve_fault_pc): the first
// marker the line table knows wins, every marker is dropped from the message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "verify/guarded_buffer.h"

namespace mtlgen::verify {
namespace {

namespace fs = std::filesystem;

std::string no_spec_line(int, const void*) { return " (spec)"; }

// A shared object compiled from a file named .metal, with line tables, and the offset of `twice`.
struct Object {
  fs::path path;
  std::string twice_offset;
};

Object compile_object() {
  const fs::path dir = fs::temp_directory_path() / ("mtlgen_fault_line_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "k.metal") << "extern \"C\" int twice(int x) {\n  return x * 2;\n}\n";
  const std::string so = (dir / "k.so").string();
  const std::string compile = "g++ -x c++ -O0 -g1 -gdwarf-4 -shared -fPIC -o '" + so + "' '" + (dir / "k.metal").string() + "'";
  EXPECT_EQ(std::system(compile.c_str()), 0);
  const std::string nm = "nm '" + so + "' | awk '$3 == \"twice\" {print $1}' > '" + so + ".sym'";
  EXPECT_EQ(std::system(nm.c_str()), 0);
  std::string hex;
  std::ifstream(so + ".sym") >> hex;
  hex.erase(0, hex.find_first_not_of('0'));
  return {so, "0x" + hex};
}

TEST(FaultLine, TheFirstMarkerWithALineWins) {
  const Object o = compile_object();
  ASSERT_NE(o.twice_offset, "0x");
  // The first candidate is the object's ELF header (no line: a PLT stub looks the same), the
  // second the function's first instruction (line 1).
  const std::string message = "HANG thread 0 was still running [pc 0x10 in " + o.path.string() + "] [pc " +
                              o.twice_offset + " in " + o.path.string() + "]. Raise --timeout";
  EXPECT_EQ(resolve_fault_pc(message, no_spec_line, nullptr), "HANG thread 0 was still running at line 1 (spec). Raise --timeout");
  fs::remove_all(o.path.parent_path());
}

TEST(FaultLine, MarkersWithoutALineAreDropped) {
  const std::string message = "CRASH in thread 3 [pc 0x10 in /nonexistent/k.so] [pc 0x20 in /nonexistent/k.so].";
  EXPECT_EQ(resolve_fault_pc(message, no_spec_line, nullptr), "CRASH in thread 3.");
}

TEST(FaultLine, AMessageWithoutMarkersIsUnchanged) {
  EXPECT_EQ(resolve_fault_pc("HANG thread 0 was still running.", no_spec_line, nullptr),
            "HANG thread 0 was still running.");
}

}  // namespace
}  // namespace mtlgen::verify
