#include "spec/name_assigner.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

#include "spec/names.h"
#include "support/text.h"

namespace mtlgen::spec {

using support::Diagnostics;
using support::ErrorKind;
using support::SourceLoc;

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// One derived name and where it came from, for reports.
struct Claim {
  std::string kind;     // "Objective-C parameter"
  std::string derived;  // xOffset
  std::string owner;    // "the byte offset of buffer `x`"
  SourceLoc loc;
};

// The names one scope of generated code declares. Each claim is checked against the reserved
// names of that scope and the claims before it; a collision is reported at the later claim.
class Scope {
 public:
  Scope(Diagnostics& diags, const char* (*reserved)(std::string_view)) : diags_(diags), reserved_(reserved) {}

  // `spec_what` names the spec entity (`buffer `x_offset``); `rename` is the fix the hint suggests.
  bool claim(const Claim& c, const std::string& spec_what, const std::string& rename) {
    std::string message = fmt::format("{} gives the {} `{}`", spec_what, c.kind, c.derived);
    if (const char* by = reserved_ ? reserved_(c.derived) : nullptr) {
      diags_.error(ErrorKind::reserved_identifier, c.loc, fmt::format("{}, which is reserved by {}", message, by),
                   rename);
      return false;
    }
    auto [it, inserted] = taken_.emplace(c.derived, c);
    if (inserted) return true;
    diags_.error(ErrorKind::duplicate_name, c.loc,
                 fmt::format("{}, which is already {} (line {})", message, it->second.owner, it->second.loc.line),
                 rename);
    return false;
  }

 private:
  Diagnostics& diags_;
  const char* (*reserved_)(std::string_view);
  std::map<std::string, Claim> taken_;
};

// A spec name to suggest instead of `name`: without leading and trailing `_`, else with `_buf`
// (`_buf2`, ...) appended, whose Objective-C parameter and offset are free and not reserved.
std::string free_buffer_name(const std::string& name, const std::set<std::string>& taken) {
  std::string base = name.substr(std::min(name.find_first_not_of('_'), name.size()));
  while (!base.empty() && base.back() == '_') base.pop_back();  // `x_` + `_buf` would hold `__`
  if (base.empty() || is_digit(base[0])) base = "buf_" + base;
  auto fits = [&](const std::string& candidate) {
    const std::string label = lower_camel(candidate);
    return !taken.count(label) && !taken.count(label + "Offset") && !reserved_by(candidate) &&
           !reserved_in_kernel(candidate) && !reserved_in_glue(label);
  };
  if (base != name && fits(base)) return base;
  std::string candidate = base + "_buf";
  for (int n = 2; !fits(candidate) && n < 100; ++n) candidate = fmt::format("{}_buf{}", base, n);
  return candidate;
}

// ARC's method families (clang's `alloc`, `copy`, `mutableCopy`, `new`, `init`): a getter whose
// first word is one of them is taken to return an owned object.
const char* arc_family(std::string_view name) {
  for (const char* family : {"alloc", "copy", "mutableCopy", "new", "init"}) {
    std::string_view f(family);
    if (name.substr(0, f.size()) != f) continue;
    if (name.size() == f.size() || !std::islower(static_cast<unsigned char>(name[f.size()]))) return family;
  }
  return nullptr;
}

ir::KernelNames derive_kernel_names(const ir::Kernel& k) {
  ir::KernelNames n;
  n.camel = upper_camel(k.name);
  n.objc_class = "MTG" + n.camel;
  n.property = lower_camel(k.name);
  // ARC rejects a property whose getter reads as returning an owned object; no other property
  // starts with such a word followed by a capital, so the suffix keeps properties distinct.
  if (arc_family(n.property)) n.property += "Kernel";
  n.facade_class = n.camel + "Kernel";
  n.cpp_namespace = "mtlgen::kernels::" + k.name;
  n.directory = k.name;
  n.metal = k.name + ".metal";
  n.types_header = k.name + "_types.h";
  n.reference_header = k.name + "_reference.h";
  n.reference_source = k.name + "_reference.cpp";
  n.objc_header = n.objc_class + ".h";
  n.objc_source = n.objc_class + ".mm";
  n.facade_header = k.name + ".h";
  n.harness_header = k.name + "_harness.h";
  n.test_data_header = k.name + "_test_data.h";
  n.bench_source = "bench_" + k.name + ".mm";
  n.autotune_source = "autotune_" + k.name + ".mm";
  for (const auto& b : k.buffers) {
    const std::string label = lower_camel(b.name);
    n.buffers.push_back({label, label + "Offset", upper_camel(b.name)});
  }
  return n;
}

// The encode method's parameters: each buffer and its byte offset, beside the glue's own.
bool claim_buffer_parameters(const ir::Kernel& k, Scope& scope) {
  std::set<std::string> labels;
  for (const auto& b : k.names.buffers) labels.insert({b.label, b.offset});
  bool ok = true;
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const ir::Buffer& b = k.buffers[i];
    const ir::BufferNames& n = k.names.buffers[i];
    const std::string rename = fmt::format("rename the buffer, e.g. `{}`", free_buffer_name(b.name, labels));
    const std::string what = fmt::format("buffer `{}`", b.name);
    // One report per buffer: its offset's name is its parameter's plus `Offset`.
    if (!scope.claim({"Objective-C parameter", n.label, fmt::format("the parameter of buffer `{}`", b.name), b.loc},
                     what, rename) ||
        !scope.claim({"Objective-C parameter", n.offset, fmt::format("the byte offset of buffer `{}`", b.name), b.loc},
                     what + " (its byte offset)", rename)) {
      ok = false;
    }
  }
  return ok;
}

// The property MTGKernelLibrary (and a family's initializer) gives the kernel, beside the glue's own.
bool check_property(const ir::Kernel& k, Diagnostics& diags) {
  const char* by = reserved_in_glue(k.names.property);
  if (!by) return true;
  diags.error(ErrorKind::reserved_identifier, k.name_loc,
              fmt::format("kernel `{}` gives the Objective-C property `{}`, which is reserved by {}", k.name,
                          k.names.property, by),
              fmt::format("rename the kernel, e.g. `{}_kernel`", k.name));
  return false;
}

// How the family's .mm names each dispatch: the member's name without the family's prefix
// (sdpa_vector_2pass_partial -> partial) when that leaves every dispatch a distinct name,
// numbered when a member runs more than once.
std::vector<std::string> dispatch_locals(const ir::Kernel& k, bool strip) {
  std::map<std::string, int> runs, seen;
  for (const auto& d : k.family->dispatches) ++runs[d.kernel];
  std::vector<std::string> locals;
  const std::string prefix = k.name + "_";
  for (const auto& d : k.family->dispatches) {
    std::string stem = d.kernel;
    if (strip && stem.rfind(prefix, 0) == 0 && stem.size() > prefix.size() &&
        std::isalpha(static_cast<unsigned char>(stem[prefix.size()]))) {
      stem = stem.substr(prefix.size());
    }
    stem = lower_camel(stem);
    if (runs[d.kernel] > 1) stem += std::to_string(++seen[d.kernel]);
    locals.push_back(stem);
  }
  return locals;
}

// Whether `locals` are distinct and free of the encode method's other names.
bool locals_fit(const std::vector<std::string>& locals, const ir::KernelNames& n) {
  std::set<std::string> taken;
  for (const auto& b : n.buffers) taken.insert({b.label, b.offset});
  for (const auto& l : locals) {
    if (!taken.insert(l).second || reserved_in_glue(l)) return false;
  }
  return true;
}

bool assign_dispatch_names(ir::Kernel& k, Scope& scope) {
  std::vector<std::string> locals = dispatch_locals(k, true);
  if (!locals_fit(locals, k.names)) locals = dispatch_locals(k, false);
  bool ok = true;
  const auto& dispatches = k.family->dispatches;
  for (size_t i = 0; i < dispatches.size(); ++i) {
    ok = scope.claim({"Objective-C local", locals[i], fmt::format("the local of dispatch {} ({})", i + 1, dispatches[i].kernel), dispatches[i].loc},
                     fmt::format("dispatch {} (kernel `{}`)", i + 1, dispatches[i].kernel),
                     fmt::format("rename kernel `{}` (e.g. `{}_pass`) or the name it collides with",
                                 dispatches[i].kernel, dispatches[i].kernel)) &&
         ok;
    k.names.dispatch_locals.push_back(locals[i]);
    k.names.dispatch_structs.push_back(upper_camel(locals[i]) + "Dispatch");
  }
  return ok;
}

// A family's kernels are its initializer's parameters: one property each.
bool claim_member_properties(const ir::Kernel& k, Diagnostics& diags) {
  Scope scope(diags, nullptr);
  bool ok = true;
  for (const auto& m : k.family->kernels) {
    ok = scope.claim({"Objective-C initializer parameter", m.names.property, fmt::format("the parameter of kernel `{}`", m.name), m.name_loc},
                     fmt::format("kernel `{}`", m.name), "rename one of the two kernels") &&
         ok;
  }
  return ok;
}

// ---- across the library ----

// The Objective-C names the runtime (support/mtlgen_runtime.h, MTGKernelLibrary) declares.
constexpr std::array kRuntimeObjc = {
    "MTGArgument", "MTGBuffer", "MTGBufferArgument", "MTGCheckBuffers", "MTGCheckCompleted", "MTGCheckEncoder",
    "MTGCheckEntryPoints", "MTGCheckThreadgroupSize", "MTGCommitAndWait", "MTGCompileLibrary", "MTGCreatePipelines",
    "MTGDescription", "MTGDispatch", "MTGDownload",
    "MTGEnvironmentTuningTable", "MTGErrorBufferAllocation", "MTGErrorCode", "MTGErrorCommandBuffer",
    "MTGErrorDomain", "MTGErrorInvalidBuffer", "MTGErrorInvalidDims", "MTGErrorLibraryLoad",
    "MTGErrorMissingEntryPoint", "MTGErrorNoSuchVariant", "MTGErrorPipelineCreation", "MTGErrorThreadgroupTooLarge",
    "MTGErrorTuning", "MTGFacadeCall", "MTGFail", "MTGGPUDebugEnabled", "MTGKernelGlue", "MTGKernelLibrary",
    "MTGLoadLibraryFromBytes",
    "MTGLoadLibraryFromData", "MTGLoadLibraryFromURL", "MTGMakeError", "MTGNewBuffer", "MTGPipelineAdmits",
    "MTGPipelineCache", "MTGPipelineVariant", "MTGPrewarmGroup", "MTGSafeCompileOptions", "MTGSize",
    "MTGStorageOptions", "MTGString", "MTGThreadCount", "MTGThreadgroupMemoryLength", "MTGTunablesFor",
    "MTGUpload"};

// Names at the top of the output directory that a kernel's directory must not take.
constexpr std::array kLibraryEntries = {"support", "cmakelists.txt", "manifest.json", "makefile", "doctor.sh"};

// The global Objective-C names a kernel's header declares.
std::vector<std::string> objc_globals(const ir::Kernel& k) {
  std::vector<std::string> names = {k.names.objc_class};
  for (const char* suffix : {"Dims", "Scalars", "Types"}) names.push_back(k.names.objc_class + suffix);
  if (!k.is_family()) names.push_back(k.names.objc_class + "Tuning");
  if (!k.function_constants.empty()) names.push_back(k.names.objc_class + "FunctionConstants");
  return names;
}

class LibraryCheck {
 public:
  explicit LibraryCheck(Diagnostics& diags) : diags_(diags) {
    for (const char* name : kRuntimeObjc) objc_.emplace(name, nullptr);
  }

  void add(const ir::Kernel& k) {
    const std::string dir = support::lower_ascii(k.names.directory);
    if (std::find(kLibraryEntries.begin(), kLibraryEntries.end(), dir) != kLibraryEntries.end()) {
      diags_.error(ErrorKind::reserved_identifier, k.name_loc,
                   fmt::format("kernel `{}` would write its files into `{}`, which the library itself writes", k.name,
                               k.names.directory),
                   fmt::format("rename the kernel, e.g. `{}_kernel`", k.name));
    }
    claim(directories_, dir, k, "output directory (compared ignoring case, as macOS file systems do)");
    if (k.is_source()) return;  // no glue, and its own .metal
    for (const auto& name : objc_globals(k)) claim(objc_, name, k, "Objective-C name");
    claim(properties_, k.names.property, k, "MTGKernelLibrary property");
    for (const auto& v : k.variants) {
      if (!k.is_family()) claim(entry_points_, v.entry_point, k, "metallib entry point");
    }
  }

 private:
  using Owners = std::map<std::string, const ir::Kernel*>;

  void claim(Owners& owners, const std::string& name, const ir::Kernel& k, const char* what) {
    auto [it, inserted] = owners.emplace(name, &k);
    if (inserted) return;
    const ir::Kernel* other = it->second;
    if (other == nullptr) {
      diags_.error(ErrorKind::reserved_identifier, k.name_loc,
                   fmt::format("kernel `{}` gives the {} `{}`, which the Objective-C runtime declares", k.name, what, name),
                   fmt::format("rename the kernel, e.g. `{}_kernel`", k.name));
      return;
    }
    if (!reported_.insert({other, &k}).second) return;  // one report per pair of kernels
    if (!other->family_name.empty() && other->family_name == k.family_name) return;  // the family reported it
    diags_.error(ErrorKind::duplicate_name, k.name_loc,
                 fmt::format("kernel `{}` gives the {} `{}`, already given by kernel `{}` ({}:{})", k.name, what, name,
                             other->name, other->spec_path, other->name_loc.line),
                 fmt::format("rename `{}` or `{}` so that their derived names differ", k.name, other->name));
  }

  Diagnostics& diags_;
  Owners directories_, objc_, properties_, entry_points_;
  std::set<std::pair<const ir::Kernel*, const ir::Kernel*>> reported_;
};

}  // namespace

std::string upper_camel(std::string_view spec_name) {
  size_t first = spec_name.find_first_not_of('_');
  if (first == std::string_view::npos) return std::string(spec_name);
  size_t last = spec_name.find_last_not_of('_');
  std::string out(spec_name.substr(0, first));
  std::string_view core = spec_name.substr(first, last - first + 1);
  bool word_start = true;
  for (size_t i = 0; i < core.size(); ++i) {
    const char c = core[i];
    if (c == '_') {
      // Kept between digits (8_0 stays apart) and in runs (a C++-reserved `__`, for totality).
      const bool keep = i + 1 < core.size() && ((is_digit(core[i - 1]) && is_digit(core[i + 1])) ||
                                                core[i - 1] == '_' || core[i + 1] == '_');
      if (keep) out += '_';
      word_start = true;
      continue;
    }
    out += word_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    word_start = false;
  }
  return out + std::string(spec_name.substr(last + 1));
}

std::string lower_camel(std::string_view spec_name) {
  std::string s = upper_camel(spec_name);
  size_t first = s.find_first_not_of('_');
  if (first != std::string::npos) s[first] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[first])));
  return s;
}

bool assign_names(ir::Kernel& k, Diagnostics& diags) {
  k.names = derive_kernel_names(k);
  if (k.is_source()) return true;  // no glue: a hand-written kernel ships its own .metal
  Scope encode(diags, reserved_in_glue);
  bool ok = claim_buffer_parameters(k, encode);
  ok = check_property(k, diags) && ok;
  if (k.is_family()) {
    ok = assign_dispatch_names(k, encode) && ok;
    ok = claim_member_properties(k, diags) && ok;
  }
  return ok;
}

void check_library_names(const std::vector<ir::Kernel>& kernels, Diagnostics& diags) {
  LibraryCheck check(diags);
  for (const auto& k : kernels) check.add(k);
}

}  // namespace mtlgen::spec
