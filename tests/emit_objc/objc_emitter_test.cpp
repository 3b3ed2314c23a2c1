// Properties of the Objective-C++ glue that snapshots alone would not state: it is registered,
// binds by the IR's binding table rather than by parameter order, lists every entry point, and
// keeps the C++ facade free of Objective-C.
#include <fmt/format.h>

#include "emit_objc/objc_emitter.h"
#include "golden.h"

namespace mtlgen::testing {
namespace {

std::string lower_camel(const std::string& snake) {
  std::string s = emit::camel_case(snake);
  s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

struct Glue {
  ir::Kernel kernel;
  std::string header, implementation, facade;
};

std::vector<Glue> all_glue() {
  std::vector<Glue> glue;
  for (auto& k : load(snapshot_specs("tests/emit_objc/in"))) {
    support::OutputSet out;
    emit::emit_objc(k, out);
    const std::string dir = k.name + "/", cls = emit::objc_class_name(k);
    glue.push_back({k, out.files().at(dir + cls + ".h"), out.files().at(dir + cls + ".mm"),
                    out.files().at(dir + k.name + ".h")});
  }
  return glue;
}

TEST(ObjcEmitter, IsRegisteredWithKernelAndLibraryOutputs) {
  const auto& e = registered("objc");
  EXPECT_NE(e.emit_kernel, nullptr);
  EXPECT_NE(e.emit_library, nullptr);
  auto files = run_emitter("objc", load({"specs/rms_norm.yaml"})).files();
  std::vector<std::string> paths;
  for (const auto& [path, content] : files) paths.push_back(path);
  EXPECT_EQ(paths, (std::vector<std::string>{"rms_norm/MTGRmsNorm.h", "rms_norm/MTGRmsNorm.mm", "rms_norm/rms_norm.h",
                                             "support/mtlgen_metal.h", "support/mtlgen_objc.h"}));
}

TEST(ObjcEmitter, BindsEveryBufferAndThreadgroupArrayAtItsTableIndex) {
  for (const auto& g : all_glue()) {
    for (const auto& p : g.kernel.params) {
      std::string expected;
      if (p.kind == ir::KernelParam::Kind::buffer) {
        std::string name = lower_camel(g.kernel.buffers[p.ref].name);
        expected = fmt::format("[encoder setBuffer:{0} offset:{0}Offset atIndex:{1}];", name, p.index);
      } else if (p.kind == ir::KernelParam::Kind::threadgroup_array) {
        expected = fmt::format("[encoder setThreadgroupMemoryLength:ThreadgroupMemoryLength({0}, tuning, types) atIndex:{0}];",
                               p.index);
      } else if (p.kind == ir::KernelParam::Kind::params) {
        expected = "[encoder setBytes:&params length:sizeof(params) atIndex:kernel::kParamsIndex];";
      } else {
        continue;
      }
      EXPECT_EQ(count(g.implementation, expected), 1u) << g.kernel.name << ": " << expected;
    }
  }
}

TEST(ObjcEmitter, ExplicitBufferIndicesWinOverDeclarationOrder) {
  for (const auto& g : all_glue()) {
    if (g.kernel.name != "glue_mix") continue;  // declares a at buffer(1), out_values at buffer(0)
    EXPECT_NE(g.implementation.find("setBuffer:a offset:aOffset atIndex:1]"), std::string::npos);
    EXPECT_NE(g.implementation.find("setBuffer:outValues offset:outValuesOffset atIndex:0]"), std::string::npos);
    return;
  }
  FAIL() << "tests/emit_objc/in/glue_mix.yaml was not loaded";
}

TEST(ObjcEmitter, ListsEveryEntryPointOnce) {
  for (const auto& g : all_glue()) {
    EXPECT_NE(g.implementation.find(fmt::format("std::array<const char*, {}> kEntryPoints", g.kernel.variants.size())),
              std::string::npos);
    for (const auto& v : g.kernel.variants) {
      EXPECT_EQ(count(g.implementation, "\"" + v.entry_point + "\","), 1u) << v.entry_point;
    }
  }
}

TEST(ObjcEmitter, ChecksBeforeEncodingAndRoundsThreadgroupMemory) {
  for (const auto& g : all_glue()) {
    const std::string& mm = g.implementation;
    size_t first_encode = mm.find("[encoder set");
    for (const char* check : {"kernel::check_dims(dims)", "MTGCheckThreadgroupSize(", "mtlgen::require_elements("}) {
      EXPECT_LT(mm.find(check), first_encode) << g.kernel.name << ": " << check;
    }
    EXPECT_NE(mm.find("@autoreleasepool"), std::string::npos);
    EXPECT_EQ(g.kernel.threadgroup_arrays.empty(), mm.find("MTGThreadgroupMemoryLength(") == std::string::npos);
  }
}

TEST(ObjcEmitter, DefaultTuningOverloadOnlyWithTunables) {
  for (const auto& g : all_glue()) {
    size_t declarations = count(g.header, "- (BOOL)encodeToCommandEncoder:");
    EXPECT_EQ(declarations, g.kernel.tunables.empty() ? 1u : 2u) << g.kernel.name;
  }
}

TEST(ObjcEmitter, SpecialisesFunctionConstantsAtTheirIndices) {
  for (const auto& g : all_glue()) {
    bool has = !g.kernel.function_constants.empty();
    // Specialisation itself lives in support/mtlgen_objc.h (MTGCreatePipelines); the class passes
    // its constant values exactly when the spec declares function constants.
    EXPECT_EQ(has, g.implementation.find("MTGCreatePipelines(library, kEntryPoints, constantValues,") !=
                       std::string::npos);
    EXPECT_EQ(!has, g.implementation.find("MTGCreatePipelines(library, kEntryPoints, nil,") != std::string::npos);
    for (const auto& f : g.kernel.function_constants) {
      EXPECT_NE(g.implementation.find(fmt::format("setConstantValue:&constants.{} type:", f.name)), std::string::npos);
      EXPECT_NE(g.implementation.find(fmt::format("atIndex:{}];", f.index)), std::string::npos);
    }
  }
}

// The text of `source` without its // comments (which may well mention id<MTLBuffer>).
std::string without_comments(const std::string& source) {
  std::string code;
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);) code += line.substr(0, line.find("//")) + "\n";
  return code;
}

TEST(ObjcEmitter, FacadeHeaderIsPlainCxx) {
  for (const auto& g : all_glue()) {
    const std::string code = without_comments(g.facade);
    for (const char* objc : {"#import", "@", "id<", "NS", "__bridge"}) {
      EXPECT_EQ(code.find(objc), std::string::npos) << g.kernel.name << ".h contains " << objc;
    }
    EXPECT_NE(g.facade.find("bool encode(void* encoder, const Buffers& buffers, const Dims& dims, const Scalars& scalars,"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace mtlgen::testing
