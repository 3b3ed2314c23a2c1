#include "spec/source_binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "spec/library.h"
#include "support/text.h"

namespace mtlgen::spec {

namespace fs = std::filesystem;
using support::Diagnostics;
using support::ErrorKind;
using support::SourceLoc;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string strip_qualifiers(std::string t) {
  for (const char* word : {"const ", "volatile ", "metal::", "device ", "constant ", "thread ", "threadgroup "}) {
    for (size_t at = t.find(word); at != std::string::npos; at = t.find(word)) t.erase(at, std::string(word).size());
  }
  while (!t.empty() && (t.back() == ' ' || t.back() == '*' || t.back() == '&')) t.pop_back();
  while (!t.empty() && t.front() == ' ') t.erase(0, 1);
  return t;
}

struct CType {
  ir::ArgumentSlot::Kind kind;
  int size;
  std::optional<ir::ScalarType> scalar;  // when an element type of buffers can be this
};

std::optional<CType> c_type_info(const std::string& spelled) {
  using K = ir::ArgumentSlot::Kind;
  using S = ir::ScalarType;
  static const std::map<std::string, CType> types = {
      {"float", {K::floating, 4, S::f32}},     {"half", {K::floating, 2, S::f16}},
      {"__fp16", {K::floating, 2, S::f16}},    {"_Float16", {K::floating, 2, S::f16}},
      {"bfloat", {K::floating, 2, S::bf16}},   {"bfloat16_t", {K::floating, 2, S::bf16}},
      {"bool", {K::boolean, 1, S::boolean}},   {"char", {K::signed_int, 1, S::i8}},
      {"signed char", {K::signed_int, 1, S::i8}}, {"int8_t", {K::signed_int, 1, S::i8}},
      {"uchar", {K::unsigned_int, 1, S::u8}},  {"unsigned char", {K::unsigned_int, 1, S::u8}},
      {"uint8_t", {K::unsigned_int, 1, S::u8}}, {"short", {K::signed_int, 2, S::i16}},
      {"int16_t", {K::signed_int, 2, S::i16}}, {"ushort", {K::unsigned_int, 2, S::u16}},
      {"unsigned short", {K::unsigned_int, 2, S::u16}}, {"uint16_t", {K::unsigned_int, 2, S::u16}},
      {"int", {K::signed_int, 4, S::i32}},     {"int32_t", {K::signed_int, 4, S::i32}},
      {"uint", {K::unsigned_int, 4, S::u32}},  {"unsigned int", {K::unsigned_int, 4, S::u32}},
      {"unsigned", {K::unsigned_int, 4, S::u32}}, {"uint32_t", {K::unsigned_int, 4, S::u32}},
      {"long", {K::signed_int, 8, std::nullopt}}, {"int64_t", {K::signed_int, 8, std::nullopt}},
      {"long long", {K::signed_int, 8, std::nullopt}}, {"ulong", {K::unsigned_int, 8, std::nullopt}},
      {"unsigned long", {K::unsigned_int, 8, std::nullopt}}, {"uint64_t", {K::unsigned_int, 8, std::nullopt}},
      {"size_t", {K::unsigned_int, 8, std::nullopt}},
  };
  auto it = types.find(strip_qualifiers(spelled));
  if (it == types.end()) return std::nullopt;
  return it->second;
}

std::string spelling_list(const std::vector<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

const msl::KernelParam* find_param(const msl::EntryPoint& ep, const std::string& name) {
  for (const auto& p : ep.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> param_names(const msl::EntryPoint& ep) {
  std::vector<std::string> names;
  for (const auto& p : ep.params) {
    if (!p.builtin) names.push_back(p.name);
  }
  return names;
}

// A file declaring at most this many entry points is read whole, and the simulator's kernel
// object holds every one of them: compiled once, it serves every spec and kernel of the file
// (MLX's rms_norm, layer_norm, softmax: 10-12). A larger one holds the entries a module runs: its
// whole object would cost the first verify more than the later ones save (MLX's arg_reduce, 24:
// 3.2 -> 9.6 s; scaled_dot_product_attention, 57: 4.6 -> 12 s; ggml: ~600).
constexpr size_t kSharedKernelObjectEntries = 16;

// ---- phase 1: what the source says about the spec's buffers and constants ----

class SourceReader {
 public:
  SourceReader(ir::Kernel& k, Diagnostics& d) : k_(k), diags_(d) {}

  std::optional<msl::Unit> run(const std::string& spec_path) {
    ir::SourceKernel& src = *k_.source;
    // Named from the working directory whatever the spelling of the spec's path (`x.yaml`,
    // `./x.yaml`, `dir/x.yaml`): the same file is the same module and reads the same headers.
    fs::path spec_dir = fs::absolute(spec_path).parent_path();
    fs::path file = (spec_dir / src.path).lexically_normal();
    if (src.path.empty() || !fs::is_regular_file(file)) {
      diags_.error(ErrorKind::io, src.loc, fmt::format("cannot read the kernel source `{}`", src.path),
                   "`source:` is a .metal file, relative to the spec");
      return std::nullopt;
    }
    src.file = display_path(file);
    msl::ParseOptions options;
    options.file = src.file;
    if (!resolve_include_dirs(spec_dir, options.include_dirs)) return std::nullopt;
    // Only the instantiations of the spec's entries are read; where one of them is not found, the
    // whole file is, so that the error lists every entry point it defines.
    if (!src.entries.empty()) {
      std::set<std::string>& needed = options.needed_entry_points.emplace();
      for (const auto& e : src.entries) needed.insert(e.host_name);
      options.read_whole_up_to = kSharedKernelObjectEntries;
    }
    int before = diags_.error_count();
    msl::Unit unit = msl::parse(options, diags_);
    if (diags_.error_count() != before) return std::nullopt;
    if (!defines_every_entry(unit) && options.needed_entry_points) {
      options.needed_entry_points.reset();
      unit = msl::parse(options, diags_);
      if (diags_.error_count() != before) return std::nullopt;
    }
    src.simulator_text = unit.simulator_source();
    src.loop_forms = unit.loop_form().kernels;
    collect_headers(unit, file.parent_path());
    refuse_forms_outside_the_copy();
    if (!check_entries(unit)) return std::nullopt;
    for (auto& b : k_.buffers) complete_buffer(unit, b);
    add_function_constants(unit);
    return unit;
  }

 private:
  // The spec's `include_dirs:` (relative to it), then the command line's -I (relative to the
  // working directory), each a directory that exists.
  bool resolve_include_dirs(const fs::path& spec_dir, std::vector<fs::path>& out) {
    ir::SourceKernel& src = *k_.source;
    bool ok = true;
    for (const auto& d : src.include_dirs) {
      fs::path dir = d.loc.line > 0 ? (spec_dir / d.path).lexically_normal() : fs::absolute(d.path).lexically_normal();
      std::error_code ec;
      if (d.path.empty() || !fs::is_directory(dir, ec)) {
        diags_.error(ErrorKind::io, d.loc.line > 0 ? d.loc : src.loc,
                     fmt::format("include directory `{}` does not exist", d.path),
                     d.loc.line > 0 ? "`include_dirs:` are relative to the spec" : "-I takes a directory");
        ok = false;
        continue;
      }
      src.include_paths.push_back(display_path(dir));
      out.push_back(src.include_paths.back());
    }
    return ok;
  }

  // Every header the file includes, wherever it lives, as the simulator compiles it (rewritten
  // where the front end rewrote it), under the path a copy of the tree finds it. Files beside the
  // source come too: an #include the front end cannot follow (a macro) may name any.
  void collect_headers(const msl::Unit& unit, const fs::path& dir) {
    auto& headers = k_.source->simulator_headers;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string ext = entry.path().extension().string();
      bool header = ext == ".h" || ext == ".hpp" || ext == ".inc" || ext == ".metal";
      if (!header || !entry.is_regular_file(ec) || entry.file_size(ec) > (1u << 20)) continue;
      headers[entry.path().filename().string()] = read_text(entry.path());
    }
    for (const auto& h : unit.simulator_headers()) {
      fs::path key(h.key);
      if (!key.is_absolute() && !h.key.starts_with("..")) headers[h.key] = h.text;  // stays inside the copy
    }
  }

  // A kernel defined in a header the kernel object does not copy (one outside the tree beside the
  // file) has nowhere for its loop form to go: it runs as fibers.
  void refuse_forms_outside_the_copy() {
    ir::SourceKernel& src = *k_.source;
    for (ir::LoopFormKernel& f : src.loop_forms) {
      if (f.header.empty() || f.text.empty() || src.simulator_headers.count(f.header)) continue;
      f.text.clear();
      f.loop_function.clear();
      f.refusal = "the kernel is defined in a header outside the directory tree of the file, which the simulator does not copy";
    }
  }

  bool defines_every_entry(const msl::Unit& unit) const {
    return std::all_of(k_.source->entries.begin(), k_.source->entries.end(),
                       [&](const ir::SourceEntry& e) { return unit.find(e.host_name) != nullptr; });
  }

  bool check_entries(const msl::Unit& unit) {
    bool ok = true;
    if (k_.source->entries.empty()) {
      diags_.error(ErrorKind::missing_field, k_.source->loc, "`entries:` names no entry point",
                   fmt::format("the file defines: {}", spelling_list(host_names(unit))));
      return false;
    }
    for (const auto& e : k_.source->entries) {
      if (unit.find(e.host_name)) continue;
      ok = false;
      std::string s = support::did_you_mean(e.host_name, host_names(unit));
      diags_.error(ErrorKind::undefined_symbol, e.loc,
                   fmt::format("`{}` is not an entry point of {}", e.host_name, k_.source->path),
                   s.empty() ? fmt::format("the file defines: {}", spelling_list(host_names(unit)))
                             : fmt::format("did you mean `{}`?", s));
    }
    for (const auto& e : k_.source->entries) {
      for (const auto& p : k_.type_params) {
        if (!e.types.count(p.name)) {
          ok = false;
          diags_.error(ErrorKind::missing_field, e.loc, fmt::format("entry `{}` gives no type for `{}`", e.host_name, p.name),
                       fmt::format("e.g. `{}: {{{}: {}}}`", e.host_name, p.name, ir::info(p.types.front()).spec_name));
        }
      }
    }
    return ok;
  }

  static std::vector<std::string> host_names(const msl::Unit& unit) {
    std::vector<std::string> names;
    for (const auto& ep : unit.entry_points()) names.push_back(ep.host_name);
    return names;
  }

  void complete_buffer(const msl::Unit& unit, ir::Buffer& b) {
    std::set<ir::ScalarType> seen;
    std::map<std::string, std::set<ir::ScalarType>> per_entry;
    for (const auto& e : k_.source->entries) {
      const msl::EntryPoint& ep = *unit.find(e.host_name);
      const msl::KernelParam* p = find_param(ep, b.name);
      if (!p || p->kind != msl::ParamKind::buffer) {
        diags_.error(ErrorKind::undefined_symbol, b.loc,
                     fmt::format("buffer `{}` is not a buffer parameter of `{}`", b.name, e.host_name),
                     fmt::format("its parameters are: {}", spelling_list(param_names(ep))));
        return;
      }
      ir::ScalarType t = element_scalar_type(p->element_type);
      infer_type(b, e, t);
      if (!b.explicit_access) b.access = p->is_const ? ir::Access::read : ir::Access::read_write;
      if (b.explicit_access && b.access != ir::Access::read && p->is_const) {
        diags_.error(ErrorKind::bad_value, b.loc, fmt::format("buffer `{}` is const in `{}` but declared `{}`", b.name,
                                                             e.host_name, ir::to_string(b.access)),
                     "a const buffer can only be `access: read`");
      }
      b.index = p->index;
    }
  }

  // The buffer's element type: a type parameter when the entries give it that parameter's type,
  // else the one concrete type every entry agrees on.
  void infer_type(ir::Buffer& b, const ir::SourceEntry& e, ir::ScalarType t) {
    if (!inferred_.count(b.name)) inferred_[b.name] = {};
    inferred_[b.name].push_back({&e, t});
    const auto& all = inferred_[b.name];
    if (all.size() != k_.source->entries.size()) return;  // decide once every entry is seen
    std::optional<ir::TypeRef> spec_type;
    if (!b.type.param.empty() || b.type.concrete) spec_type = b.type;
    for (const auto& p : k_.type_params) {
      bool matches = std::all_of(all.begin(), all.end(), [&](const auto& x) { return x.first->types.at(p.name) == x.second; });
      if (matches && !all_same(all)) return set_type(b, ir::TypeRef{std::nullopt, p.name, b.loc}, spec_type);
    }
    if (all_same(all)) return set_type(b, ir::TypeRef{all.front().second, "", b.loc}, spec_type);
    diags_.error(ErrorKind::bad_value, b.loc,
                 fmt::format("buffer `{}` has a different element type in each entry, and no type parameter follows it", b.name),
                 "give the entries the type parameter the kernel's template uses, e.g. `{T: half}`");
  }

  static bool all_same(const std::vector<std::pair<const ir::SourceEntry*, ir::ScalarType>>& all) {
    return std::all_of(all.begin(), all.end(), [&](const auto& x) { return x.second == all.front().second; });
  }

  void set_type(ir::Buffer& b, ir::TypeRef inferred, const std::optional<ir::TypeRef>& written) {
    bool raw = inferred.concrete == ir::ScalarType::bytes || inferred.concrete == ir::ScalarType::i8 ||
               inferred.concrete == ir::ScalarType::u8;
    if (written && raw) {
      b.type = *written;  // `device const char*` or a struct-wrapped buffer (`device SSBO& _52`) holding elements of the written type
      return;
    }
    if (written) {
      bool same = written->concrete ? inferred.concrete == written->concrete : written->param == inferred.param;
      bool param_fixed = !written->concrete && inferred.concrete;  // `T` over entries that all use float
      if (!same && !param_fixed) {
        diags_.error(ErrorKind::bad_value, written->loc,
                     fmt::format("buffer `{}` is declared `{}` here but the source gives it `{}`", b.name,
                                 written->concrete ? ir::info(*written->concrete).spec_name : written->param,
                                 inferred.concrete ? ir::info(*inferred.concrete).spec_name : inferred.param),
                     "drop `type:`: a hand-written kernel's buffers take their types from the source");
      }
      return;
    }
    b.type = inferred;
  }

  void add_function_constants(const msl::Unit& unit) {
    for (const auto& fc : unit.function_constants()) {
      auto it = std::find_if(k_.function_constants.begin(), k_.function_constants.end(),
                             [&](const ir::FunctionConstant& f) { return f.name == fc.name; });
      if (it != k_.function_constants.end()) {
        if (it->index != fc.index) {
          diags_.error(ErrorKind::function_constant_index_collision, it->index_loc,
                       fmt::format("function constant `{}` has index {} in the source, {} here", fc.name, fc.index, it->index),
                       "drop `index:`: the source declares it");
        }
        continue;
      }
      k_.function_constants.push_back(file_constant(fc));
    }
    k_.source->file_constants.clear();
    for (const auto& fc : unit.function_constants()) k_.source->file_constants.push_back(file_constant(fc));
  }

  static ir::FunctionConstant file_constant(const msl::FunctionConstant& fc) {
    auto info = c_type_info(fc.type);
    ir::FunctionConstant f;
    f.name = fc.name;
    f.type = info && info->scalar ? *info->scalar : ir::ScalarType::boolean;
    f.index = fc.index;
    f.loc = f.index_loc = f.default_loc = fc.loc;
    return f;
  }

  ir::Kernel& k_;
  Diagnostics& diags_;
  std::map<std::string, std::vector<std::pair<const ir::SourceEntry*, ir::ScalarType>>> inferred_;
};

// ---- phase 2: each variant's parameters ----

class EntryBinder {
 public:
  EntryBinder(ir::Kernel& k, const msl::Unit& unit, Diagnostics& d) : k_(k), unit_(unit), diags_(d) {}

  void run() {
    check_entry_tunables();
    std::vector<std::pair<ir::Variant, const ir::SourceEntry*>> kept;
    std::map<std::string, int> per_entry;
    for (auto& v : k_.variants) {
      if (const ir::SourceEntry* e = entry_for(v)) {
        per_entry[e->host_name]++;
        bind(v, *e);
        kept.emplace_back(std::move(v), e);
      }
    }
    k_.variants.clear();
    for (auto& [v, e] : kept) {
      name_variant(v, *e, per_entry.at(e->host_name));
      k_.variants.push_back(std::move(v));
    }
    set_launchers();
    for (const auto& e : k_.source->entries) {
      if (!per_entry.count(e.host_name)) {
        diags_.error(ErrorKind::bad_value, e.loc, fmt::format("entry `{}` matches no variant", e.host_name),
                     "its types must be among `types:` and its tunable values among the tunables' values");
      }
    }
  }

  // The simulator's kernel object: every entry point of a file read whole (one with at most
  // kSharedKernelObjectEntries), else the spec's entries.
  void set_launchers() {
    k_.source->launchers.clear();
    const bool whole = unit_.instantiations_left_out() == 0 && unit_.entry_points().size() <= kSharedKernelObjectEntries;
    for (const auto& ep : unit_.entry_points()) {
      const bool spec_entry = std::any_of(k_.source->entries.begin(), k_.source->entries.end(),
                                          [&](const ir::SourceEntry& e) { return e.host_name == ep.host_name; });
      if (!whole && !spec_entry) continue;
      if (auto launcher = launcher_of(ep)) k_.source->launchers.push_back(std::move(*launcher));
    }
  }

  // How the kernel object calls `ep`, from the file alone; nullopt where a parameter is nothing the
  // simulator binds (a spec entry's is an error already).
  static std::optional<ir::SourceLauncher> launcher_of(const msl::EntryPoint& ep) {
    ir::SourceLauncher launcher{ep.host_name, call_of(ep), {}};
    using Kind = ir::KernelParam::Kind;
    for (const auto& p : ep.params) {
      ir::KernelParam out;
      out.name = p.name;
      out.index = p.index;
      out.by_reference = p.is_reference;
      if (p.builtin) {
        out.kind = Kind::builtin;
        out.builtin = *p.builtin;
        out.builtin_type = p.builtin_type;
      } else if (p.kind == msl::ParamKind::threadgroup) {
        out.kind = Kind::threadgroup_array;
      } else if (p.kind == msl::ParamKind::buffer) {
        out.kind = Kind::buffer;
      } else {
        return std::nullopt;
      }
      launcher.params.push_back(std::move(out));
    }
    return launcher;
  }

 private:
  void check_entry_tunables() {
    for (const auto& e : k_.source->entries) {
      for (const auto& [name, value] : e.tunables) {
        auto t = std::find_if(k_.tunables.begin(), k_.tunables.end(), [&](const ir::Tunable& x) { return x.name == name; });
        if (t == k_.tunables.end()) {
          diags_.error(ErrorKind::undefined_symbol, e.loc, fmt::format("entry `{}` sets `{}`, which is no type parameter or tunable", e.host_name, name),
                       "entries give type parameters (`T: half`) and tunables the entry point fixes (`N_READS: 4`)");
        }
      }
    }
  }

  const ir::SourceEntry* entry_for(const ir::Variant& v) const {
    for (const auto& e : k_.source->entries) {
      bool types = std::all_of(e.types.begin(), e.types.end(), [&](const auto& t) { return v.types.at(t.first) == t.second; });
      bool tunes = std::all_of(e.tunables.begin(), e.tunables.end(), [&](const auto& t) {
        return v.tunables.count(t.first) && v.tunables.at(t.first) == t.second;
      });
      if (types && tunes) return &e;
    }
    return nullptr;
  }

  // An entry point run at several tune points (a run-time threadgroup size) gets one variant per
  // point; their names must differ for the simulator's launchers and the reports.
  void name_variant(ir::Variant& v, const ir::SourceEntry& e, int variants_of_entry) const {
    v.entry_point = e.host_name;
    if (variants_of_entry < 2) return;
    for (const auto& t : k_.tunables) {
      if (!e.tunables.count(t.name)) v.entry_point += fmt::format("_{}{}", support::lower_ascii(t.name), v.tunables.at(t.name));
    }
  }

  void bind(ir::Variant& v, const ir::SourceEntry& e) {
    const msl::EntryPoint& ep = *unit_.find(e.host_name);
    v.source_call = call_of(ep);
    v.source_host_name = e.host_name;
    v.source_params.clear();
    v.arguments.clear();
    for (const auto& p : ep.params) v.source_params.push_back(bind_param(v, ep, p));
  }

  static std::string call_of(const msl::EntryPoint& ep) {
    if (ep.template_args.empty()) return ep.function;
    std::vector<std::string> args;
    for (const auto& a : ep.template_args) args.push_back(a.value == "__fp16" ? "half" : a.value);
    return fmt::format("{}<{}>", ep.function, fmt::join(args, ", "));
  }

  ir::KernelParam bind_param(ir::Variant& v, const msl::EntryPoint& ep, const msl::KernelParam& p) {
    ir::KernelParam out;
    out.name = p.name;
    out.index = p.index;
    out.by_reference = p.is_reference;
    using Kind = ir::KernelParam::Kind;
    if (p.builtin) {
      out.kind = Kind::builtin;
      out.builtin = *p.builtin;
      out.builtin_type = p.builtin_type;
      return out;
    }
    if (p.kind == msl::ParamKind::threadgroup) return bind_threadgroup(ep, p, out);
    if (p.kind != msl::ParamKind::buffer) {
      unbound(ep, p, "the simulator cannot bind it (textures, samplers and stage_in are not supported)");
      return out;
    }
    if (auto b = buffer_named(p.name)) {
      out.kind = Kind::buffer;
      out.ref = *b;
      return out;
    }
    if (is_argument(p)) {
      out.kind = Kind::argument;
      out.ref = v.arguments.size();
      v.arguments.push_back(argument_blob(ep, p));
      return out;
    }
    if (!p.function_constant.empty()) {
      out.kind = Kind::unbound;  // the kernel reads it only when its function constant is true
      return out;
    }
    unbound(ep, p, "declare it under `buffers:` (with a shape), or give its value under `arguments:`");
    return out;
  }

  ir::KernelParam bind_threadgroup(const msl::EntryPoint& ep, const msl::KernelParam& p, ir::KernelParam out) {
    for (size_t i = 0; i < k_.threadgroup_arrays.size(); ++i) {
      if (k_.threadgroup_arrays[i].name != p.name) continue;
      out.kind = ir::KernelParam::Kind::threadgroup_array;
      out.ref = i;
      return out;
    }
    unbound(ep, p, fmt::format("declare it under `threadgroup_memory:` as `{}: {{type: ..., count: ...}}`", p.name));
    return out;
  }

  void unbound(const msl::EntryPoint& ep, const msl::KernelParam& p, const std::string& hint) {
    diags_.error(ErrorKind::msl_binding, k_.source->loc,
                 fmt::format("parameter `{}` of `{}` ({}:{}) is not bound", p.name, ep.host_name, p.loc.file, p.loc.line),
                 hint);
  }

  std::optional<size_t> buffer_named(const std::string& name) const {
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      if (k_.buffers[i].name == name) return i;
    }
    return std::nullopt;
  }

  // A `constant` reference (or pointer) whose bytes the host writes: an argument struct, or a
  // scalar that `arguments:` or a dim / scalar of the same name supplies.
  bool is_argument(const msl::KernelParam& p) const {
    if (p.address_space != msl::AddressSpace::constant && !p.is_const) return false;
    if (p.layout) return true;
    for (const auto& a : k_.source->arguments) {
      if (a.target == p.name) return true;
    }
    return is_known_value(p.name);
  }

  bool is_known_value(const std::string& name) const {
    auto named = [&](const auto& list) {
      return std::any_of(list.begin(), list.end(), [&](const auto& x) { return x.name == name; });
    };
    return named(k_.dims) || named(k_.scalars) || named(k_.tunables);
  }

  ir::ArgumentBlob argument_blob(const msl::EntryPoint& ep, const msl::KernelParam& p) {
    ir::ArgumentBlob blob;
    blob.param = p.name;
    if (p.layout) {
      blob.bytes = p.layout->size;
      for (const auto& f : p.layout->fields) add_field(ep, p, f, f.name, 0, blob);
      return blob;
    }
    auto info = c_type_info(p.element_type);
    if (!info) {
      unbound(ep, p, fmt::format("its type `{}` is neither a scalar nor a struct the front end could lay out", p.element_type));
      return blob;
    }
    blob.bytes = static_cast<uint64_t>(info->size);
    add_slot(ep, p, "", p.name, 0, *info, blob);
    return blob;
  }

  void add_field(const msl::EntryPoint& ep, const msl::KernelParam& p, const msl::FieldLayout& f, const std::string& path,
                 uint64_t base, ir::ArgumentBlob& blob) {
    uint64_t count = f.array_count ? f.array_count : 1;
    uint64_t stride = f.size / count;
    for (uint64_t i = 0; i < count; ++i) {
      std::string name = f.array_count ? fmt::format("{}[{}]", path, i) : path;
      uint64_t offset = base + f.offset + i * stride;
      if (!f.fields.empty()) {
        for (const auto& sub : f.fields) add_field(ep, p, sub, name + "." + sub.name, offset, blob);
        continue;
      }
      auto info = c_type_info(f.type);
      if (!info) {
        unbound(ep, p, fmt::format("field `{}` has type `{}`, which mtlgen cannot fill yet", name, f.type));
        continue;
      }
      add_slot(ep, p, name, p.name + "." + name, offset, *info, blob);
    }
  }

  // The value of one slot: `arguments:` names it, else a dim, tunable or scalar of the same name.
  void add_slot(const msl::EntryPoint& ep, const msl::KernelParam& p, const std::string& field,
                const std::string& target, uint64_t offset, const CType& info, ir::ArgumentBlob& blob) {
    ir::ArgumentSlot slot;
    slot.field = field;
    slot.offset = offset;
    slot.size = info.size;
    slot.kind = info.kind;
    std::string leaf = field.empty() ? p.name : field;
    if (const ir::ArgumentValue* a = written_value(target)) {
      slot.integer = a->integer;
      slot.scalar = a->scalar;
    } else if (std::any_of(k_.scalars.begin(), k_.scalars.end(), [&](const ir::Scalar& s) { return s.name == leaf; })) {
      slot.scalar = leaf;
    } else if (is_known_value(leaf)) {
      slot.integer = expr::Expr{};
      slot.integer->kind = expr::Expr::Kind::symbol;
      slot.integer->name = leaf;
    } else {
      diags_.error(ErrorKind::msl_binding, k_.source->loc,
                   fmt::format("`{}` of `{}` ({}:{}) has no value", target, ep.host_name, p.loc.file, p.loc.line),
                   fmt::format("give it under `arguments:`, e.g. `arguments: {{{}: <expression of dims>}}`",
                               field.empty() ? p.name : fmt::format("{}: {{{}", p.name, field) + "}"));
      return;
    }
    blob.slots.push_back(std::move(slot));
  }

  const ir::ArgumentValue* written_value(const std::string& target) const {
    for (const auto& a : k_.source->arguments) {
      if (a.target == target) return &a;
    }
    return nullptr;
  }

  ir::Kernel& k_;
  const msl::Unit& unit_;
  Diagnostics& diags_;
};

}  // namespace

ir::ScalarType element_scalar_type(const std::string& c_type) {
  std::string t = strip_qualifiers(c_type);
  if (auto info = c_type_info(t); info && info->scalar) return *info->scalar;
  // A vector (`float4`, `half2`, `packed_float3`): its scalar; shapes count scalars.
  if (t.rfind("packed_", 0) == 0) t.erase(0, 7);
  while (!t.empty() && std::isdigit(static_cast<unsigned char>(t.back()))) t.pop_back();
  if (auto info = c_type_info(t); info && info->scalar) return *info->scalar;
  return ir::ScalarType::bytes;  // a struct (a quantized block) or anything else: shapes count bytes
}

ValueKind c_value_kind(const std::string& c_type) {
  auto info = c_type_info(c_type);
  if (!info) return ValueKind::none;
  switch (info->kind) {
    case ir::ArgumentSlot::Kind::floating: return ValueKind::floating;
    case ir::ArgumentSlot::Kind::boolean: return ValueKind::boolean;
    default: return ValueKind::integer;
  }
}

std::optional<msl::Unit> read_source(ir::Kernel& kernel, const std::string& spec_path, Diagnostics& diags) {
  return SourceReader(kernel, diags).run(spec_path);
}

void bind_source_variants(ir::Kernel& kernel, const msl::Unit& unit, Diagnostics& diags) {
  EntryBinder(kernel, unit, diags).run();
}

}  // namespace mtlgen::spec
