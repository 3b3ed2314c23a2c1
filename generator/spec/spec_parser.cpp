#include "spec/spec_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "spec/names.h"
#include "spec/spec_node_reader.h"
#include "spec/tests_parser.h"
#include "support/text.h"

namespace mtlgen::spec {

using support::ErrorKind;

const std::vector<std::string>& top_level_keys() {
  static const std::vector<std::string> keys = {
      "name",    "summary",           "types",    "dims",      "preconditions", "tunables",
      "buffers", "scalars",           "function_constants", "threadgroup_memory", "dispatch",
      "body",    "reference",         "cost",     "tests",
      "source",  "include_dirs",      "entries",  "arguments", "prelude", "metal_prelude", "reference_prelude", "blocks",
      "kernels", "dispatches", "reference_include"};
  return keys;
}

namespace {

class Parser : SpecNodeReader {
 public:
  Parser(const YamlContext& ctx, ir::Kernel& k) : SpecNodeReader(ctx, k) {}

  void run(const YAML::Node& root) {
    MapReader top(ctx_, root, "the spec", top_level_keys());
    if (!top.ok()) return;
    if (top.optional("kernels").IsDefined()) return family(top);
    if (top.optional("dispatches").IsDefined()) {
      ctx_.diags().error(ErrorKind::missing_field, key_loc(top, "dispatches"), "`dispatches:` without `kernels:`",
                         "a kernel family lists its kernels under `kernels:` and the order they run in under "
                         "`dispatches:`; a single kernel has `dispatch:`");
    }
    if (auto n = top.required("name"); n.IsDefined()) name(n);
    kernel(top);
  }

  // A member of a family: the mapping under its name in `kernels:`. Sections it leaves out among
  // types, dims, scalars and blocks are the family's (`family_top`).
  void member(const YAML::Node& node, MapReader& family_top) {
    std::vector<std::string> keys;
    for (const auto& key : top_level_keys()) {
      if (key != "name" && key != "kernels" && key != "dispatches") keys.push_back(key);
    }
    MapReader top(ctx_, node, fmt::format("kernel `{}`", k_.name), keys);
    if (!top.ok()) return;
    inherited_ = &family_top;
    kernel(top);
  }

 private:
  void kernel(MapReader& top) {
    if (top.optional("source").IsDefined()) k_.source.emplace();  // buffers may then omit type/access
    if (auto n = top.optional("summary"); n.IsDefined()) k_.summary = ctx_.string(n, "summary").value_or("");
    types(section(top, "types", false));
    each_entry(section(top, "dims", true), "dims", [&](auto& key, auto& v) { dim(key, v); });
    each_item(top.optional("preconditions"), "preconditions", [&](auto& v) { precondition(v); });
    each_entry(top.optional("tunables"), "tunables", [&](auto& key, auto& v) { tunable(key, v); });
    each_entry(section(top, "blocks", false), "blocks", [&](auto& key, auto& v) { block_layout(key, v); });
    each_entry(top.required("buffers"), "buffers", [&](auto& key, auto& v) { buffer(key, v); });
    each_entry(section(top, "scalars", false), "scalars", [&](auto& key, auto& v) { scalar(key, v); });
    each_entry(top.optional("function_constants"), "function_constants",
               [&](auto& key, auto& v) { function_constant(key, v); });
    each_entry(top.optional("threadgroup_memory"), "threadgroup_memory",
               [&](auto& key, auto& v) { threadgroup_array(key, v); });
    if (auto n = top.optional("source"); n.IsDefined()) source(n, top);  // after types and scalars it names
    if (auto n = top.required("dispatch"); n.IsDefined()) dispatch(n);
    preludes(top);
    if (!k_.source) {
      if (auto n = top.required("body"); n.IsDefined()) code(n, "body", k_.body);
    } else if (auto n = top.optional("body"); n.IsDefined()) {
      ctx_.diags().error(ErrorKind::unknown_key, ctx_.loc(n), "a spec has `body:` or `source:`, not both",
                         "drop `body:`: the kernel is read from the source file");
    }
    if (auto n = top.required("reference"); n.IsDefined()) code(n, "reference", k_.reference);
    if (auto n = top.optional("reference_include"); n.IsDefined()) included(n, "reference_include", k_.reference_include);
    if (auto n = top.optional("cost"); n.IsDefined()) cost(n);
    if (auto n = top.optional("tests"); n.IsDefined()) parse_tests(ctx_, n, k_);
  }

  // Where `key` is written in `map` (which holds it).
  SourceLoc key_loc(MapReader& map, const std::string& key) const {
    for (auto it = map.node().begin(); it != map.node().end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) return ctx_.loc(it->first);
    }
    return ctx_.loc(map.node());
  }

  // A section of the spec; a family's member without it takes the family's.
  YAML::Node section(MapReader& top, const char* key, bool required) {
    YAML::Node n = top.optional(key);
    if (!n.IsDefined() && inherited_) n = inherited_->optional(key);
    if (!n.IsDefined() && required) top.required(key);
    return n;
  }

  void types(const YAML::Node& n) {
    if (n.IsSequence()) {
      type_tuples(n);
    } else {
      each_entry(n, "types", [&](auto& key, auto& v) { type_param(key, v); });
    }
  }

  // ---- kernel families ----

  void family(MapReader& top) {
    family_ = true;
    for (const char* key : {"tunables", "function_constants", "threadgroup_memory", "dispatch", "body", "source",
                            "include_dirs", "entries", "arguments", "prelude", "metal_prelude"}) {
      if (top.optional(key).IsDefined()) {
        ctx_.diags().error(ErrorKind::unknown_key, key_loc(top, key), fmt::format("a kernel family has no `{}:` of its own", key),
                           fmt::format("move `{}:` into the kernel under `kernels:` that it belongs to", key));
      }
    }
    if (auto n = top.required("name"); n.IsDefined()) name(n);
    if (auto n = top.optional("summary"); n.IsDefined()) k_.summary = ctx_.string(n, "summary").value_or("");
    types(top.optional("types"));
    each_entry(top.required("dims"), "dims", [&](auto& key, auto& v) { dim(key, v); });
    each_item(top.optional("preconditions"), "preconditions", [&](auto& v) { precondition(v); });
    each_entry(top.optional("blocks"), "blocks", [&](auto& key, auto& v) { block_layout(key, v); });
    each_entry(top.required("buffers"), "buffers", [&](auto& key, auto& v) { buffer(key, v); });
    each_entry(top.optional("scalars"), "scalars", [&](auto& key, auto& v) { scalar(key, v); });
    auto fam = std::make_shared<ir::Family>();
    auto kernels = top.required("kernels");
    fam->loc = ctx_.loc(kernels);
    each_entry(kernels, "kernels", [&](auto& key, auto& v) { member_kernel(key, v, top, *fam); });
    if (kernels.IsMap() && kernels.size() == 0) {
      ctx_.diags().error(ErrorKind::missing_field, fam->loc, "`kernels:` lists no kernels",
                         "give each kernel of the family as `name: {...}`, with the keys of a kernel spec");
    }
    each_item(top.required("dispatches"), "dispatches", [&](auto& v) { family_dispatch(v, *fam); });
    if (auto n = top.optional("reference_prelude"); n.IsDefined()) code(n, "reference_prelude", k_.reference_prelude);
    if (auto n = top.required("reference"); n.IsDefined()) code(n, "reference", k_.reference);
    if (auto n = top.optional("reference_include"); n.IsDefined()) included(n, "reference_include", k_.reference_include);
    if (auto n = top.optional("cost"); n.IsDefined()) cost(n);
    if (auto n = top.optional("tests"); n.IsDefined()) parse_tests(ctx_, n, k_);
    k_.family = std::move(fam);
  }

  // `name: {...}`: a kernel of the family's own; `name: {spec: file.yaml}`: kernel `name` of another
  // spec, loaded by the front end once this spec is parsed (load_spec), kept here by name only.
  void member_kernel(const YAML::Node& key, const YAML::Node& value, MapReader& family_top, ir::Family& fam) {
    ir::Kernel m;
    m.name = key_name(key, m.name_loc);
    m.spec_path = k_.spec_path;
    m.spec_hash = k_.spec_hash;
    m.family_name = k_.name;
    ir::FamilyMemberOrigin origin;
    if (value.IsMap() && value["spec"].IsDefined()) {
      MapReader r(ctx_, value, fmt::format("kernel `{}` of another spec", m.name), {"spec"});
      YAML::Node n = r.ok() ? r.required("spec") : YAML::Node(YAML::NodeType::Undefined);
      if (n.IsDefined()) {
        origin.borrowed_spec = ctx_.string(n, "a spec file").value_or("");
        origin.loc = ctx_.value_loc(n);
        if (origin.borrowed_spec.empty() && n.IsScalar()) {
          ctx_.diags().error(ErrorKind::bad_value, origin.loc, "`spec:` names no file",
                             "give the path of the spec that defines the kernel, relative to this spec");
        }
      }
    } else {
      Parser(ctx_, m).member(value, family_top);
    }
    fam.kernels.push_back(std::move(m));
    fam.origins.push_back(std::move(origin));
  }

  // `- kernel: name` with optional `dims:`, `buffers:`, `scalars:` and `types:` maps from the
  // kernel's names to the family's; `- name` alone binds everything by name.
  void family_dispatch(const YAML::Node& node, ir::Family& fam) {
    ir::FamilyDispatch d;
    d.loc = ctx_.loc(node);
    if (node.IsScalar()) {
      d.kernel = ctx_.string(node, "a kernel name").value_or("");
      fam.dispatches.push_back(std::move(d));
      return;
    }
    MapReader r(ctx_, node, "a dispatch", {"kernel", "dims", "buffers", "scalars", "types"});
    if (!r.ok()) return;
    if (auto n = r.required("kernel"); n.IsDefined()) d.kernel = ctx_.string(n, "kernel").value_or("");
    each_unique_entry(r.optional("dims"), "a dispatch's dims", [&](auto& key, auto& v) {
      ir::FamilyDimBinding b;
      b.member = key_name(key, b.member_loc);
      b.written = true;
      if (auto e = expression(v, "a dim's value")) {
        b.value = *e;
        d.dims.push_back(std::move(b));
      }
    });
    for (auto [key, list] : {std::pair{"buffers", &d.buffers}, std::pair{"scalars", &d.scalars},
                             std::pair{"types", &d.types}}) {
      std::string what = fmt::format("a dispatch's {}", key);
      each_unique_entry(r.optional(key), what.c_str(), [&, list = list](auto& k, auto& v) {
        ir::FamilyBinding b;
        b.member = key_name(k, b.member_loc);
        b.family = ctx_.string(v, "a name of the family").value_or("");
        b.loc = ctx_.value_loc(v);
        list->push_back(std::move(b));
      });
    }
    fam.dispatches.push_back(std::move(d));
  }

  void name(const YAML::Node& n) {
    k_.name = ctx_.string(n, "name").value_or("");
    k_.name_loc = ctx_.value_loc(n);
  }

  void type_param(const YAML::Node& key, const YAML::Node& value) {
    ir::TypeParam p;
    p.name = key_name(key, p.loc);
    each_item(value, "a type parameter's list of types", [&](const YAML::Node& item) {
      auto text = ctx_.string(item, "a type");
      if (!text) return;
      if (auto t = ir::scalar_type_from_spec(*text)) {
        p.types.push_back(*t);
      } else {
        unknown_type(item, *text);
      }
    });
    k_.type_params.push_back(std::move(p));
  }

  // `types: [{T: float, AccT: float}, {T: half, AccT: float}]`: type combinations as MLX lists its
  // instantiations, instead of the product of per-parameter lists.
  void type_tuples(const YAML::Node& list) {
    each_item(list, "types", [&](const YAML::Node& item) {
      if (!ctx_.expect_map(item, "a type tuple")) return;
      std::map<std::string, ir::ScalarType> tuple;
      std::vector<std::string> names;
      bool complete = true;
      each_unique_entry(item, "a type tuple", [&](auto& key, auto& v) {
        SourceLoc loc;
        std::string name = key_name(key, loc);
        auto text = ctx_.string(v, "a type");
        auto t = text ? ir::scalar_type_from_spec(*text) : std::nullopt;
        if (text && !t) unknown_type(v, *text);
        if (!t) {
          complete = false;
          return;
        }
        tuple[name] = *t;
        names.push_back(name);
        add_tuple_type(name, *t, loc);
      });
      if (!complete || tuple.size() != names.size()) return;
      check_tuple_names(item, names);
      if (std::find(k_.type_tuples.begin(), k_.type_tuples.end(), tuple) != k_.type_tuples.end()) {
        ctx_.diags().error(ErrorKind::duplicate_name, ctx_.loc(item), "this type tuple is listed twice",
                           "each tuple makes one set of entry points: list it once");
        return;
      }
      k_.type_tuples.push_back(std::move(tuple));
    });
    if (list.size() == 0) {
      ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(list), "`types:` lists no tuples",
                         "give at least one, e.g. `[{T: float}]`, or drop `types:`");
    }
  }

  void add_tuple_type(const std::string& name, ir::ScalarType t, const SourceLoc& loc) {
    for (auto& p : k_.type_params) {
      if (p.name != name) continue;
      if (std::find(p.types.begin(), p.types.end(), t) == p.types.end()) p.types.push_back(t);
      return;
    }
    if (!k_.type_tuples.empty()) return;  // check_tuple_names reports a parameter the first tuple lacks
    k_.type_params.push_back({name, {t}, loc});
  }

  // Every tuple names the first tuple's parameters, no more and no fewer.
  void check_tuple_names(const YAML::Node& item, const std::vector<std::string>& names) {
    std::vector<std::string> want;
    for (const auto& p : k_.type_params) want.push_back(p.name);
    std::vector<std::string> got = names;
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    if (want == got) return;
    ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(item),
                       fmt::format("this tuple names {{{}}}, the first tuple {{{}}}", fmt::join(names, ", "),
                                   fmt::join(want, ", ")),
                       "every type tuple gives a type to the same parameters");
  }

  void unknown_type(const YAML::Node& node, const std::string& text) {
    std::string s = support::did_you_mean(text, ir::spec_type_names());
    ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(node), fmt::format("unknown element type `{}`", text),
                       s.empty() ? fmt::format("types are: {}", fmt::join(ir::spec_type_names(), ", "))
                                 : fmt::format("did you mean `{}`?", s));
  }

  void dim(const YAML::Node& key, const YAML::Node& value) {
    ir::Dim d;
    d.name = key_name(key, d.loc);
    if (value.IsScalar()) {  // `n: 5`: a value where the dim's bounds belong
      ctx_.diags().error(ErrorKind::wrong_type, ctx_.loc(value),
                         fmt::format("dim `{}` must be a mapping of its bounds, not a value", d.name),
                         fmt::format("write `{}: {{min: 1}}` (or `{}: {{}}`); test cases give the values", d.name, d.name));
    } else if (!value.IsNull()) {
      MapReader r(ctx_, value, fmt::format("dim `{}`", d.name), {"min", "max", "multiple_of", "doc"});
      if (auto n = r.optional("min"); n.IsDefined()) d.min = ctx_.integer(n, "min").value_or(1);
      if (auto n = r.optional("max"); n.IsDefined()) d.max = ctx_.integer(n, "max");
      if (auto n = r.optional("multiple_of"); n.IsDefined()) d.multiple_of = ctx_.integer(n, "multiple_of").value_or(1);
      if (auto n = r.optional("doc"); n.IsDefined()) d.doc = ctx_.string(n, "doc").value_or("");
      check_dim_bounds(d, value);
    }
    k_.dims.push_back(std::move(d));
  }

  void check_dim_bounds(const ir::Dim& d, const YAML::Node& value) {
    if (d.min < 0 || d.multiple_of < 1 || (d.max && *d.max < d.min) || (d.max && *d.max > UINT32_MAX)) {
      ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(value), fmt::format("dim `{}` has inconsistent bounds", d.name),
                         "need 0 <= min <= max <= 4294967295 and multiple_of >= 1");
    }
  }

  void precondition(const YAML::Node& node) {
    MapReader r(ctx_, node, "a precondition", {"check", "message"});
    if (!r.ok()) return;
    ir::Precondition p;
    p.loc = ctx_.loc(node);
    auto check = r.required("check");
    auto message = r.required("message");
    if (!check.IsDefined() || !message.IsDefined()) return;
    auto e = expression(check, "check");
    p.message = ctx_.string(message, "message").value_or("");
    if (e) {
      p.check = *e;
      k_.preconditions.push_back(std::move(p));
    }
  }

  void tunable(const YAML::Node& key, const YAML::Node& value) {
    ir::Tunable t;
    t.name = key_name(key, t.loc);
    MapReader r(ctx_, value, fmt::format("tunable `{}`", t.name), {"values", "default", "doc"});
    if (!r.ok()) return;
    each_item(r.required("values"), "values", [&](const YAML::Node& v) {
      auto i = ctx_.integer(v, "a tunable value");
      if (i && *i > UINT32_MAX) {  // tunables are `uint` template arguments in MSL
        ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(v), fmt::format("tunable value {} does not fit in 32 bits", *i),
                           "tunables are `uint` constants in the kernel: at most 4294967295");
      } else if (i) {
        t.values.push_back(*i);
      }
    });
    if (auto n = r.required("default"); n.IsDefined()) {
      t.default_value = ctx_.integer(n, "default").value_or(0);
      t.default_loc = ctx_.loc(n);
    }
    if (auto n = r.optional("doc"); n.IsDefined()) t.doc = ctx_.string(n, "doc").value_or("");
    k_.tunables.push_back(std::move(t));
  }

  void buffer(const YAML::Node& key, const YAML::Node& value) {
    ir::Buffer b;
    b.name = key_name(key, b.loc);
    MapReader r(ctx_, value, fmt::format("buffer `{}`", b.name),
                family_ ? std::vector<std::string>{"type", "shape", "access", "intermediate", "block", "alignment", "doc"}
                        : std::vector<std::string>{"type", "shape", "access", "host_visible", "index", "block",
                                                   "alignment", "doc"});
    if (!r.ok()) return;
    if (auto n = r.optional("intermediate"); n.IsDefined()) intermediate(n, b);
    // A hand-written kernel declares type and access itself; the spec may restate them.
    auto type = k_.source ? r.optional("type") : r.required("type");
    if (type.IsDefined()) {
      if (auto t = type_ref(type, "type")) b.type = *t;
    }
    if (auto n = r.required("shape"); n.IsDefined()) b.shape = expression_list(n, "shape");
    auto access_node = k_.source || b.intermediate ? r.optional("access") : r.required("access");
    if (access_node.IsDefined() && b.intermediate) {
      ctx_.diags().error(ErrorKind::unknown_key, ctx_.loc(access_node), "an intermediate buffer has no `access:`",
                         "the family's kernels write and read it; drop `access:`");
    } else if (access_node.IsDefined()) {
      b.access = access(access_node);
      b.explicit_access = true;
    }
    if (auto n = r.optional("host_visible"); n.IsDefined()) b.host_visible = ctx_.boolean(n, "host_visible").value_or(true);
    if (auto n = r.optional("index"); n.IsDefined()) {
      int64_t index = ctx_.integer(n, "index").value_or(-1);
      // Beyond int it would wrap (4294967296 to buffer 0): reported here, then left for the
      // validator to assign; smaller values it range-checks itself.
      bool fits = index >= INT32_MIN && index <= INT32_MAX;
      if (!fits) {
        ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(n), fmt::format("buffer index {} is out of range", index),
                           "Metal buffer indices are 0..30");
      }
      b.index = fits ? static_cast<int>(index) : -1;
      b.explicit_index = fits;
      b.index_loc = ctx_.loc(n);
    }
    if (auto n = r.optional("block"); n.IsDefined()) {
      b.block = ctx_.string(n, "block").value_or("");
      b.block_loc = ctx_.value_loc(n);
    }
    if (auto n = r.optional("alignment"); n.IsDefined()) {
      int64_t a = ctx_.integer(n, "alignment").value_or(0);
      b.alignment_loc = ctx_.value_loc(n);
      if (a < 1 || a > 4096 || (a & (a - 1)) != 0) {
        ctx_.diags().error(ErrorKind::bad_value, b.alignment_loc, fmt::format("alignment {} is not a power of two", a),
                           "the byte alignment the kernel needs of the buffer's offset: 1, 2, 4, 8, 16 ... 4096");
      } else {
        b.alignment = static_cast<uint64_t>(a);
      }
    }
    if (auto n = r.optional("doc"); n.IsDefined()) b.doc = ctx_.string(n, "doc").value_or("");
    k_.buffers.push_back(std::move(b));
  }

  // A family's scratch buffer: written and read by its kernels on the GPU only.
  void intermediate(const YAML::Node& n, ir::Buffer& b) {
    b.intermediate = ctx_.boolean(n, "intermediate").value_or(false);
    if (!b.intermediate) return;
    b.host_visible = false;
    b.access = ir::Access::read_write;
  }

  // `q8_0: {d: half, qs: "int8[32]"}`: fields in order, laid out as Metal lays out the struct.
  void block_layout(const YAML::Node& key, const YAML::Node& value) {
    ir::BlockLayout layout;
    layout.name = key_name(key, layout.loc);
    if (!ctx_.expect_map(value, fmt::format("block `{}`", layout.name).c_str())) return;
    for (auto it = value.begin(); it != value.end(); ++it) {
      ir::BlockField f;
      f.name = key_name(it->first, f.loc);
      auto text = ctx_.string(it->second, "a field type");
      if (!text) continue;
      if (!field_type(*text, it->second, f)) continue;
      uint64_t size = ir::info(f.type).size;
      layout.size = (layout.size + size - 1) / size * size;
      f.offset = layout.size;
      layout.size += size * static_cast<uint64_t>(f.count);
      layout.align = std::max(layout.align, size);
      layout.fields.push_back(std::move(f));
    }
    layout.size = (layout.size + layout.align - 1) / layout.align * layout.align;
    if (layout.fields.empty()) {
      ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(value), fmt::format("block `{}` has no fields", layout.name),
                         "list its fields in order, e.g. `{d: half, qs: \"int8[32]\"}`");
      return;
    }
    k_.blocks.push_back(std::move(layout));
  }

  // `half`, `int8[32]`: a scalar element type, optionally an array of 1..65536.
  bool field_type(const std::string& text, const YAML::Node& n, ir::BlockField& f) {
    std::string name = text;
    size_t open = text.find('[');
    if (open != std::string::npos) {
      name = text.substr(0, open);
      size_t close = text.find(']', open);
      std::string count = close == std::string::npos ? "" : text.substr(open + 1, close - open - 1);
      bool digits = !count.empty() && count.size() <= 5 && count.find_first_not_of("0123456789") == std::string::npos;
      f.count = digits ? std::stoll(count) : 0;
      if (close != text.size() - 1 || f.count < 1 || f.count > 65536) {
        ctx_.diags().error(ErrorKind::bad_value, ctx_.value_loc(n), fmt::format("bad field type `{}`", text),
                           "a field is a scalar type or an array of 1..65536 of one: `half`, `int8[32]`");
        return false;
      }
    }
    auto t = ir::scalar_type_from_spec(name);
    if (!t || *t == ir::ScalarType::bytes || *t == ir::ScalarType::boolean) {
      if (!t) unknown_type(n, name);
      else ctx_.diags().error(ErrorKind::bad_value, ctx_.value_loc(n), fmt::format("a block field cannot be `{}`", name),
                              "use uint8 for raw bytes");
      return false;
    }
    f.type = *t;
    return true;
  }

  ir::Access access(const YAML::Node& n) {
    auto text = ctx_.string(n, "access").value_or("");
    if (text == "read") return ir::Access::read;
    if (text == "write") return ir::Access::write;
    if (text == "read_write") return ir::Access::read_write;
    std::string s = support::did_you_mean(text, {"read", "write", "read_write"});
    ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(n), fmt::format("unknown access `{}`", text),
                       s.empty() ? "access is read, write or read_write" : fmt::format("did you mean `{}`?", s));
    return ir::Access::read;
  }

  std::optional<ir::ScalarType> scalar_type(const YAML::Node& n) {
    auto text = ctx_.string(n, "type");
    if (!text) return std::nullopt;
    auto t = ir::scalar_type_from_spec(*text);
    if (!t) unknown_type(n, *text);
    return t;
  }

  void scalar(const YAML::Node& key, const YAML::Node& value) {
    ir::Scalar s;
    s.name = key_name(key, s.loc);
    MapReader r(ctx_, value, fmt::format("scalar `{}`", s.name), {"type", "default", "doc"});
    if (!r.ok()) return;
    if (auto n = r.required("type"); n.IsDefined()) {
      s.type = scalar_type(n).value_or(ir::ScalarType::f32);
      if (s.type != ir::ScalarType::f32 && s.type != ir::ScalarType::i32 && s.type != ir::ScalarType::u32) {
        ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(n), "scalars are float, int32 or uint32",
                           "4-byte scalars keep the parameter struct identical in MSL, C++ and Objective-C++");
      }
    }
    if (auto n = r.optional("default"); n.IsDefined()) s.default_value = ctx_.number(n, "default").value_or(0);
    if (auto n = r.optional("doc"); n.IsDefined()) s.doc = ctx_.string(n, "doc").value_or("");
    k_.scalars.push_back(std::move(s));
  }

  void function_constant(const YAML::Node& key, const YAML::Node& value) {
    ir::FunctionConstant f;
    f.name = key_name(key, f.loc);
    MapReader r(ctx_, value, fmt::format("function constant `{}`", f.name), {"type", "index", "default", "doc"});
    if (!r.ok()) return;
    if (auto n = r.required("type"); n.IsDefined()) f.type = scalar_type(n).value_or(ir::ScalarType::boolean);
    if (auto n = r.required("index"); n.IsDefined()) {
      f.index = ctx_.integer(n, "index").value_or(0);
      f.index_loc = ctx_.loc(n);
    }
    if (auto n = r.optional("default"); n.IsDefined()) {
      f.default_value = constant_value(f, n, "default").value_or(0);
      f.default_loc = ctx_.loc(n);
    }
    if (auto n = r.optional("doc"); n.IsDefined()) f.doc = ctx_.string(n, "doc").value_or("");
    k_.function_constants.push_back(std::move(f));
  }

  void threadgroup_array(const YAML::Node& key, const YAML::Node& value) {
    ir::ThreadgroupArray a;
    a.name = key_name(key, a.loc);
    MapReader r(ctx_, value, fmt::format("threadgroup array `{}`", a.name), {"type", "count"});
    if (!r.ok()) return;
    if (auto n = r.required("type"); n.IsDefined()) {
      if (auto t = type_ref(n, "type")) a.type = *t;
    }
    auto count = r.required("count");
    if (!count.IsDefined()) return;
    if (auto e = expression(count, "count")) {
      a.count = *e;
      k_.threadgroup_arrays.push_back(std::move(a));
    }
  }

  void dispatch(const YAML::Node& n) {
    MapReader r(ctx_, n, "dispatch", {"threadgroups", "threads_per_threadgroup", "max_threads_per_threadgroup"});
    if (!r.ok()) return;
    k_.dispatch.loc = ctx_.loc(n);
    if (auto g = r.required("threadgroups"); g.IsDefined()) k_.dispatch.threadgroups = expression_list(g, "threadgroups");
    if (auto t = r.required("threads_per_threadgroup"); t.IsDefined()) {
      k_.dispatch.threads_per_threadgroup = expression_list(t, "threads_per_threadgroup");
    }
    if (auto m = r.optional("max_threads_per_threadgroup"); m.IsDefined()) {
      k_.dispatch.max_threads = expression(m, "max_threads_per_threadgroup");
    }
  }

  void preludes(MapReader& top) {
    for (auto [key, block] : {std::pair{"prelude", &k_.prelude}, std::pair{"metal_prelude", &k_.metal_prelude}}) {
      auto n = top.optional(key);
      if (!n.IsDefined()) continue;
      if (k_.source) {
        ctx_.diags().error(ErrorKind::unknown_key, ctx_.loc(n), fmt::format("`{}:` is for kernels with a `body:`", key),
                           "a hand-written kernel's file holds its own file-scope code; the reference's goes "
                           "under `reference_prelude:`");
        continue;
      }
      code(n, key, *block);
    }
    if (auto n = top.optional("reference_prelude"); n.IsDefined()) code(n, "reference_prelude", k_.reference_prelude);
  }

  void code(const YAML::Node& n, const char* what, ir::CodeBlock& block) {
    if (auto c = ctx_.code_block(n, what)) {
      block.text = c->first;
      block.loc = c->second;
    }
  }

  // `reference_include: file.inc`: kept by path; the front end reads the file (resolve_includes).
  void included(const YAML::Node& n, const char* what, ir::IncludedCode& inc) {
    inc.path = ctx_.string(n, what).value_or("");
    inc.path_loc = ctx_.value_loc(n);
    if (inc.path.empty() && n.IsScalar()) {
      ctx_.diags().error(ErrorKind::bad_value, inc.path_loc, fmt::format("`{}:` names no file", what),
                         "give the path of a file in this spec's folder, relative to it");
    }
  }

  // `source: file.metal` with `entries:` (and optional `arguments:`): a hand-written kernel.
  void source(const YAML::Node& n, MapReader& top) {
    ir::SourceKernel src;
    src.path = ctx_.string(n, "source").value_or("");
    src.loc = ctx_.value_loc(n);
    if (auto e = top.required("entries"); e.IsDefined()) entries(e, src);
    each_item(top.optional("include_dirs"), "include_dirs", [&](const YAML::Node& item) {
      src.include_dirs.push_back({ctx_.string(item, "a directory").value_or(""), ctx_.value_loc(item)});
    });
    each_entry(top.optional("arguments"), "arguments", [&](auto& key, auto& v) { argument(key, v, src); });
    *k_.source = std::move(src);
  }

  // `entries: {rms_f32: {T: float}, rms_f16: {T: half, N_READS: 8}}` or `entries: [kernel_argmax_f32]`.
  void entries(const YAML::Node& n, ir::SourceKernel& src) {
    if (n.IsSequence()) {
      each_item(n, "entries", [&](const YAML::Node& item) {
        ir::SourceEntry e;
        e.host_name = ctx_.string(item, "an entry point name").value_or("");
        e.loc = ctx_.value_loc(item);
        src.entries.push_back(std::move(e));
      });
      return;
    }
    each_entry(n, "entries", [&](auto& key, auto& value) {
      ir::SourceEntry e;
      e.host_name = key_name(key, e.loc);
      if (!value.IsNull()) entry_values(value, e);
      src.entries.push_back(std::move(e));
    });
  }

  // Type parameters take element types; anything else is a tunable's value (checked later).
  void entry_values(const YAML::Node& value, ir::SourceEntry& e) {
    each_entry(value, "an entry's values", [&](auto& key, auto& v) {
      SourceLoc loc;
      std::string name = key_name(key, loc);
      bool is_type = std::any_of(k_.type_params.begin(), k_.type_params.end(),
                                 [&](const ir::TypeParam& p) { return p.name == name; });
      if (!is_type && v.IsScalar() && ir::scalar_type_from_spec(v.Scalar())) is_type = true;
      if (is_type) {
        auto text = ctx_.string(v, "a type").value_or("");
        if (auto t = ir::scalar_type_from_spec(text)) e.types[name] = *t; else unknown_type(v, text);
      } else if (auto i = ctx_.integer(v, "a tunable value")) {
        e.tunables[name] = *i;
      }
    });
  }

  // `args: {ne00: n, eps: eps}` fills fields of an argument struct; `axis_size: n` a scalar reference.
  void argument(const YAML::Node& key, const YAML::Node& value, ir::SourceKernel& src) {
    SourceLoc loc;
    std::string param = key_name(key, loc);
    if (value.IsMap()) {
      each_entry(value, "an argument's fields", [&](auto& fkey, auto& fvalue) {
        SourceLoc floc;
        std::string field = key_name(fkey, floc);
        argument_value(param + "." + field, fvalue, floc, src);
      });
      return;
    }
    argument_value(param, value, loc, src);
  }

  void argument_value(std::string target, const YAML::Node& value, SourceLoc loc, ir::SourceKernel& src) {
    ir::ArgumentValue a;
    a.target = std::move(target);
    a.loc = loc;
    bool names_scalar = value.IsScalar() && std::any_of(k_.scalars.begin(), k_.scalars.end(),
                                                        [&](const ir::Scalar& s) { return s.name == value.Scalar(); });
    if (names_scalar) {
      a.scalar = value.Scalar();
    } else if (auto e = expression(value, "an argument value")) {
      a.integer = *e;
    } else {
      return;
    }
    src.arguments.push_back(std::move(a));
  }

  void cost(const YAML::Node& n) {
    MapReader r(ctx_, n, "cost", {"bytes_read", "bytes_written", "flops", "extra"});
    if (!r.ok()) return;
    if (auto e = r.optional("bytes_read"); e.IsDefined()) k_.cost.bytes_read = expression(e, "bytes_read");
    if (auto e = r.optional("bytes_written"); e.IsDefined()) k_.cost.bytes_written = expression(e, "bytes_written");
    if (auto e = r.optional("flops"); e.IsDefined()) k_.cost.flops = expression(e, "flops");
    each_unique_entry(r.optional("extra"), "cost: extra", [&](const YAML::Node& key, const YAML::Node& value) {
      cost_quantity(key, value);
    });
  }

  // `name: formula` or `name: {value: formula, doc: text}`.
  void cost_quantity(const YAML::Node& key, const YAML::Node& value) {
    ir::CostQuantity q;
    q.name = key_name(key, q.loc);
    std::optional<expr::Expr> formula;
    if (value.IsMap()) {
      MapReader r(ctx_, value, fmt::format("cost quantity `{}`", q.name), {"value", "doc"});
      if (!r.ok()) return;
      if (auto v = r.required("value"); v.IsDefined()) formula = expression(v, "a cost quantity's value");
      if (auto d = r.optional("doc"); d.IsDefined()) q.doc = ctx_.string(d, "doc").value_or("");
    } else {
      formula = expression(value, "a cost quantity");
    }
    if (!formula) return;
    q.value = *formula;
    k_.cost.extra.push_back(std::move(q));
  }

  bool family_ = false;                 // parsing a family's own sections
  MapReader* inherited_ = nullptr;      // parsing a family's member: the family's top level
};

}  // namespace

bool parse_kernel(const YamlContext& ctx, const YAML::Node& root, ir::Kernel& kernel) {
  int before = ctx.diags().error_count();
  Parser(ctx, kernel).run(root);
  return ctx.diags().error_count() == before;
}

}  // namespace mtlgen::spec
