// Properties of the Objective-C++ glue that snapshots alone would not state: it is registered,
// binds by the IR's binding table rather than by parameter order, lists every entry point, and
// keeps the C++ facade free of Objective-C.
#include <fmt/format.h>

#include <unistd.h>

#include <fstream>
#include <map>
#include <set>

#include "emit_msl/msl_emitter.h"
#include "emit_objc/objc_emitter.h"
#include "emit_objc/objc_text.h"
#include "emit_reference/reference_emitter.h"
#include "golden.h"

namespace mtlgen::testing {
namespace {


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
  std::vector<std::string> specs = snapshot_specs("tests/emit_objc/in");
  specs.push_back("specs/rms_norm.yaml");  // type parameters, tunables, threadgroup memory
  specs.push_back("specs/argmax.yaml");    // no scalars
  for (auto& k : load(specs)) {
    if (k.is_family()) continue;  // family_glue_test.cpp
    support::OutputSet out;
    emit::emit_objc(k, out);
    const std::string dir = k.name + "/", cls = emit::objc_class_name(k);
    glue.push_back({k, out.files().at(dir + cls + ".h"), out.files().at(dir + cls + ".mm"),
                    out.files().at(dir + k.name + ".h")});
  }
  return glue;
}

TEST(ObjcEmitter, IsRegisteredWithKernelAndLibraryOutputs) {
  const auto& e = emit::find_emitter("objc");
  EXPECT_NE(e.emit_kernel, nullptr);
  EXPECT_NE(e.emit_library, nullptr);
  auto files = run_emitter("objc", load({"specs/rms_norm.yaml"})).files();
  std::vector<std::string> paths;
  for (const auto& [path, content] : files) paths.push_back(path);
  EXPECT_EQ(paths, (std::vector<std::string>{"rms_norm/MTGRmsNorm.h", "rms_norm/MTGRmsNorm.mm", "rms_norm/rms_norm.h",
                                             "support/MTGKernelLibrary.h", "support/MTGKernelLibrary.mm",
                                             "support/mtlgen_capture.mm", "support/mtlgen_metal.h",
                                             "support/mtlgen_objc.h", "support/mtlgen_runtime.h",
                                             "support/mtlgen_runtime.mm"}));
}

// The runtime header every kernel class stands on (MTGKernelGlue: checks, pipelines, tunings).
std::string runtime_header() {
  support::OutputSet out;
  emit::emit_objc_support(load({"specs/rms_norm.yaml"}), out);
  return out.files().at("support/mtlgen_runtime.h");
}

std::string types_header(const ir::Kernel& k) {
  support::OutputSet out;
  emit::emit_types(k, out);
  return out.files().at(k.name + "/" + k.name + "_types.h");
}

TEST(ObjcEmitter, BindsEveryBufferAndThreadgroupArrayAtItsTableIndex) {
  for (const auto& g : all_glue()) {
    for (const auto& p : g.kernel.params) {
      std::string expected;
      if (p.kind == ir::KernelParam::Kind::buffer) {
        expected = fmt::format("[encoder setBuffer:MTGBuffer(buffers.{0}) offset:buffers.{0}.offset atIndex:{1}];",
                               g.kernel.buffers[p.ref].name, p.index);
      } else if (p.kind == ir::KernelParam::Kind::threadgroup_array) {
        expected = fmt::format("threadgroup_memory_bytes({0}, tuning, types))\n                              atIndex:{0}];",
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
    EXPECT_NE(g.implementation.find("setBuffer:MTGBuffer(buffers.a) offset:buffers.a.offset atIndex:1]"), std::string::npos);
    EXPECT_NE(g.implementation.find("setBuffer:MTGBuffer(buffers.out_values) offset:buffers.out_values.offset atIndex:0]"),
              std::string::npos);
    return;
  }
  FAIL() << "tests/emit_objc/in/glue_mix.yaml was not loaded";
}

// One variant table per kernel: _types.h's kVariants, which the glue reads and the .metal's
// instantiations are written from; the class spells no entry point of its own.
TEST(ObjcEmitter, EveryEntryPointIsInTheOneVariantTable) {
  for (const auto& g : all_glue()) {
    const std::string types = types_header(g.kernel), metal = emit::msl_source(g.kernel);
    EXPECT_NE(types.find(fmt::format("std::array<CompiledVariant, {}> kVariants", g.kernel.variants.size())),
              std::string::npos);
    for (const auto& v : g.kernel.variants) {
      EXPECT_EQ(count(types, "{\"" + v.entry_point + "\", "), 1u) << v.entry_point;
      // An instantiation, or for a kernel of one configuration, the kernel itself.
      EXPECT_EQ(count(metal, "(\"" + v.entry_point + "\", ") + count(metal, " void " + v.entry_point + "("), 1u)
          << v.entry_point;
      EXPECT_EQ(count(g.implementation, "\"" + v.entry_point + "\""), 0u) << v.entry_point;
    }
    EXPECT_EQ(count(g.implementation, "kernel::kVariants"), 3u) << g.kernel.name;  // count, types, tuning
  }
}

// The class encodes only after the glue's checks (MTGKernelGlue::dispatch), which run in order:
// the dims, the variant and its pipeline's threadgroup limit, the buffers.
TEST(ObjcEmitter, ChecksBeforeEncodingAndRoundsThreadgroupMemory) {
  const std::string runtime = runtime_header();
  size_t previous = runtime.find("MTGDispatch dispatch(");
  ASSERT_NE(previous, std::string::npos);
  for (const char* check : {"check_dims(dims, tuning, types)", "MTGCheckThreadgroupSize(", "MTGCheckBuffers(Info::kName",
                            "d.pipeline = pipeline;"}) {
    const size_t at = runtime.find(check, previous);
    EXPECT_NE(at, std::string::npos) << check;
    previous = at;
  }
  EXPECT_NE(runtime.find("@autoreleasepool"), std::string::npos);
  for (const auto& g : all_glue()) {
    const std::string& mm = g.implementation;
    const size_t first_encode = mm.find("[encoder set");
    EXPECT_LT(mm.find("glue.dispatch(dims, types, tuning, {"), first_encode) << g.kernel.name;
    EXPECT_LT(mm.find("if (dispatch.pipeline == nil) return NO;"), first_encode) << g.kernel.name;
    EXPECT_EQ(g.kernel.threadgroup_arrays.empty(), mm.find("MTGThreadgroupMemoryLength(") == std::string::npos);
  }
}

TEST(ObjcEmitter, ChecksEveryBufferAgainstItsShape) {
  for (const auto& g : all_glue()) {
    for (const auto& b : g.kernel.buffers) {
      const std::string check = fmt::format("MTGArgument(\"{0}\", buffers.{0}, ", b.name);
      EXPECT_EQ(count(g.implementation, check), 1u) << g.kernel.name << ": " << check;
      EXPECT_NE(g.implementation.find(fmt::format("kernel::{}_elements(dims, tuning, types)", b.name)), std::string::npos);
    }
  }
}

TEST(ObjcEmitter, CaptureHookIsOneBranchAfterTheChecks) {
  const std::string runtime = runtime_header();
  const std::string hook = "if (captureWatched_ && MTGThreadCount(d.threadgroups) > 0) mtlgen::capture::note_dispatch(Info::kName);";
  EXPECT_EQ(count(runtime, hook), 1u);
  EXPECT_LT(runtime.find("MTGCheckBuffers(Info::kName"), runtime.find(hook));
  EXPECT_EQ(count(runtime, "captureWatched_ = mtlgen::capture::watches(Info::kName);"), 1u);
  for (const auto& g : all_glue()) EXPECT_EQ(count(g.implementation, "capture::"), 0u) << g.kernel.name;
}

TEST(ObjcEmitter, ChoosesTheDefaultTuningOncePerTypeChoice) {
  // Checked against the pipeline's limit at creation (MTGPipelineCache, given each variant's
  // declared maximum), not only at encode.
  EXPECT_NE(runtime_header().find("MTGSize(max_threads_per_threadgroup(v.tuning))"), std::string::npos);
  for (const auto& g : all_glue()) {
    std::set<std::map<std::string, ir::ScalarType>> choices;
    for (const auto& v : g.kernel.variants) choices.insert(v.types);
    EXPECT_NE(types_header(g.kernel).find(fmt::format("std::array<Types, {}> kTypeChoices", choices.size())),
              std::string::npos);
    if (!g.kernel.tunables.empty()) {
      // The default tuning, or the compiled one that serves the dims (tuning_serving).
      EXPECT_NE(g.implementation.find("_glue.tuningServing(dims, types, tuning, error)"), std::string::npos)
          << g.kernel.name;
    }
  }
}

// What every class does the same way lives in the runtime, so a kernel's .mm is its bindings.
TEST(ObjcEmitter, GlueHoldsOnlyWhatDiffers) {
  for (const auto& g : all_glue()) {
    if (g.kernel.name != "rms_norm") continue;
    EXPECT_LE(count(g.implementation, "\n"), 200u);
    return;
  }
  FAIL() << "specs/rms_norm.yaml was not loaded";
}

TEST(ObjcEmitter, NewBuffersUseTheStorageTheSpecAsksFor) {
  for (const auto& g : all_glue()) {
    for (size_t i = 0; i < g.kernel.buffers.size(); ++i) {
      const ir::Buffer& b = g.kernel.buffers[i];
      const std::string call = fmt::format(", {}, @\"{}.{}\", error);", b.host_visible ? "YES" : "NO", g.kernel.name, b.name);
      EXPECT_EQ(count(g.implementation, call), 1u) << call;
      EXPECT_NE(g.header.find("- (nullable id<MTLBuffer>)new" + g.kernel.names.buffers[i].camel + "BufferForDims:"),
                std::string::npos);
    }
  }
}

TEST(ObjcEmitter, KernelLibraryOwnsEveryKernelAndListsEveryEntryPoint) {
  auto kernels = load({"specs", "tests/emit_objc/in"});
  support::OutputSet out;
  emit::emit_objc_support(kernels, out);
  const std::string& header = out.files().at("support/MTGKernelLibrary.h");
  const std::string& mm = out.files().at("support/MTGKernelLibrary.mm");
  size_t index = 0;  // among the kernels with a .metal: families have none
  for (const auto& k : kernels) {
    const std::string cls = emit::objc_class_name(k);
    EXPECT_EQ(count(header, fmt::format("@property (readonly) {}* {};", cls, k.names.property)), 1u);
    if (k.is_family()) {
      EXPECT_EQ(count(mm, fmt::format("[[{} alloc] initWith{}:_", cls, k.family->kernels[0].names.camel)), 1u);
      continue;
    }
    EXPECT_EQ(count(mm, fmt::format("[[{} alloc] initWithLibrary:libraries[{}]", cls, index++)), 1u) << cls;
    // From the kernel's own variant table, not a copy of it.
    EXPECT_EQ(count(mm, fmt::format("for (const auto& v : mtlgen::kernels::{}::kVariants)", k.name)), 1u) << k.name;
    for (const auto& v : k.variants) EXPECT_EQ(count(mm, "@\"" + v.entry_point + "\""), 0u) << v.entry_point;
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
    // Specialisation itself lives in support/mtlgen_runtime.mm (MTGPipelineCache); the class
    // passes its constant values exactly when the spec declares function constants.
    EXPECT_EQ(has, g.implementation.find("_glue.load(library, ConstantValues(functionConstants), ") != std::string::npos);
    EXPECT_EQ(!has, g.implementation.find("_glue.load(library, nil, ") != std::string::npos);
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
    const std::string scalars = g.kernel.scalars.empty() ? "" : "const Scalars& scalars, ";
    EXPECT_NE(g.facade.find("bool encode(void* encoder, const Buffers& buffers, const Dims& dims, " + scalars + "const Types& types,"),
              std::string::npos) << g.kernel.name;
  }
}

// A kernel without scalars takes no scalars argument, in Objective-C++ or C++; one with scalars
// takes them in every encode call and packs them into its parameters.
TEST(ObjcEmitter, ScalarsParameterOnlyWithScalars) {
  bool saw_without = false, saw_with = false;
  for (const auto& g : all_glue()) {
    const bool has = !g.kernel.scalars.empty();
    (has ? saw_with : saw_without) = true;
    const size_t encodes = count(g.header, "- (BOOL)encodeToCommandEncoder:");
    EXPECT_EQ(count(g.header, "scalars:(const MTG"), has ? encodes : 0u) << g.kernel.name;
    EXPECT_EQ(count(g.facade, "const Scalars& scalars"), has ? count(g.facade, "bool encode(") : 0u) << g.kernel.name;
    // Every encode call reaches the one that binds the parameter struct: with the caller's
    // scalars, or with none to give, the empty set.
    EXPECT_EQ(count(g.implementation, "make_params(dims, scalars)"), 1u) << g.kernel.name;
    EXPECT_EQ(count(g.implementation, "kernel::Scalars{}"), has ? 0u : encodes + 1) << g.kernel.name;
  }
  EXPECT_TRUE(saw_with && saw_without) << "the snapshot specs no longer cover both cases";
}

// Loading compiles nothing: the class only makes a pipeline cache, and every way to a pipeline goes
// through it (encode, lookup, prewarm).
TEST(ObjcEmitter, PipelinesAreCreatedOnlyThroughTheCache) {
  const std::string runtime = runtime_header();
  EXPECT_EQ(count(runtime, "[[MTGPipelineCache alloc] initWithLibrary:library"), 1u);
  EXPECT_EQ(count(runtime, "[pipelines_ pipelineAtIndex:index error:error]"), 1u);
  for (const auto& g : all_glue()) {
    EXPECT_EQ(count(g.implementation, "newComputePipelineState"), 0u) << g.kernel.name;
    EXPECT_EQ(count(g.implementation, "pipelineAtIndex:"), 0u) << g.kernel.name;
    for (const char* prewarm : {"- (BOOL)prewarmWithError:", "- (BOOL)prewarmVariants:", "- (void)prewarmWithCompletionHandler:",
                                "- (void)prewarmVariants:"}) {
      EXPECT_EQ(count(g.header, prewarm), 1u) << g.kernel.name << " " << prewarm;
    }
  }
}

}  // namespace
}  // namespace mtlgen::testing

namespace mtlgen::testing {
namespace {

// The glue's names are the assigner's (ir::Kernel::names): digits stay apart in class names, and a
// buffer named `error_` (what the hint for a reserved `error` suggests) keeps its parameter apart
// from the NSError** one.
TEST(ObjcEmitter, NamesComeFromTheNameAssigner) {
  auto q8 = run_emitter("objc", load({"specs/q8_0_matvec.yaml"})).files();
  ASSERT_EQ(q8.count("q8_0_matvec/MTGQ8_0Matvec.h"), 1u);
  EXPECT_NE(q8.at("q8_0_matvec/MTGQ8_0Matvec.h").find("@interface MTGQ8_0Matvec : NSObject"), std::string::npos);
  EXPECT_NE(q8.at("support/MTGKernelLibrary.h").find("@property (readonly) MTGQ8_0Matvec* q8_0Matvec;"),
            std::string::npos);

  const fs::path dir = fs::temp_directory_path() / ("mtlgen_objc_names_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "scale.yaml") << R"yaml(name: scale
dims:
  n: {min: 1}
buffers:
  error_: {type: float, shape: [n], access: read}
  y: {type: float, shape: [n], access: write}
dispatch:
  threadgroups: ["ceil_div(n, 32)"]
  threads_per_threadgroup: [32]
body: |
  if (gid < n) y[gid] = error_[gid];
reference: |
  for (int64_t i = 0; i < n; ++i) y[i] = error_[i];
tests:
  cases:
    - {name: small, dims: {n: 5}}
)yaml";
  auto files = run_emitter("objc", load({(dir / "scale.yaml").string()})).files();
  fs::remove_all(dir);
  ASSERT_EQ(files.count("scale/MTGScale.h"), 1u);
  const std::string& header = files.at("scale/MTGScale.h");
  EXPECT_NE(header.find("error_:(id<MTLBuffer>)error_\n"), std::string::npos) << header;
  EXPECT_NE(header.find("error_Offset:(NSUInteger)error_Offset\n"), std::string::npos);
  EXPECT_NE(header.find("error:(NSError**)error;"), std::string::npos);
}

}  // namespace
}  // namespace mtlgen::testing
