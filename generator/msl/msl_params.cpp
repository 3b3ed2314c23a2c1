// Kernel parameters: type and constness from the (instantiated) AST; address space and the
// [[...]] attributes from the tokens of the parameter's declaration, since clang drops both.
#include <charconv>
#include <cstdint>
#include <optional>
#include <regex>
#include <set>

#include "ir/builtins.h"
#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

struct Attribute {
  std::string name;
  std::string args;  // text inside the parentheses, "" when none
};

struct ParamSyntax {
  std::vector<std::string> declaration;  // tokens outside [[...]]
  std::vector<Attribute> attributes;
};

bool opens(const std::string& t) { return t == "(" || t == "[" || t == "{" || t == "<"; }
bool closes(const std::string& t) { return t == ")" || t == "]" || t == "}" || t == ">"; }

// Reads `[[a, b(c)]]` starting at tokens[i] == "[" (followed by "["); returns the index after it.
size_t read_attribute_group(const UserFile& f, size_t i, std::vector<Attribute>& out) {
  size_t end = i + 2;
  int depth = 0;
  Attribute current;
  for (; end < f.tokens.size(); ++end) {
    const std::string& t = f.tokens[end].text;
    if (depth == 0 && t == "]") break;
    if (depth == 0 && t == ",") {
      out.push_back(std::move(current));
      current = {};
      continue;
    }
    if (t == "(" && depth++ == 0) continue;
    if (t == ")" && --depth == 0) continue;
    if (depth == 0) current.name += t;
    else current.args += t;
  }
  if (!current.name.empty()) out.push_back(std::move(current));
  return end + 2;  // past "]]"
}

// Index of the first token of the parameter whose name is tokens[name]: after the `(` or `,`
// that precedes it at depth 0.
size_t param_start(const UserFile& f, size_t name) {
  int depth = 0;
  for (size_t i = name; i > 0; --i) {
    const std::string& t = f.tokens[i - 1].text;
    if (closes(t)) ++depth;
    if (t == ">>") depth += 2;
    if (opens(t) && depth-- == 0) return i;
    if (t == "," && depth == 0) return i;
  }
  return 0;
}

// The parameter `name` in the body of the macro `macro` (`#define macro(...) ... T name [[...]],`):
// the first `name` followed by `[`, `,` or `)`. A macro that declares two kernels with one
// parameter name but different words is read at the first.
std::optional<std::pair<const UserFile*, size_t>> param_in_macro(Context& ctx, const std::string& macro,
                                                                 const std::string& name) {
  auto def = ctx.definition_of_macro(macro);
  if (!def) return std::nullopt;
  const UserFile& f = *def->first;
  const size_t end = define_end(f, def->second);
  for (size_t j = def->second + 2; j + 1 < end; ++j) {
    const std::string& next = f.tokens[j + 1].text;
    if (f.tokens[j].text == name && (next == "[" || next == "," || next == ")")) return std::pair{&f, param_start(f, j)};
  }
  return std::nullopt;
}

// Where a parameter's tokens start. A kernel written inside a macro (ggml's and MLX's kernel
// macros) is expanded at the macro's use, where its words are not: read them in the macro's
// definition (libclang 14 has no spelling location inside a macro body).
std::optional<std::pair<const UserFile*, size_t>> param_tokens_start(Context& ctx, CXCursor parm) {
  FilePos at = ctx.begin(parm);
  if (!at.file) return std::nullopt;
  const size_t first = at.file->token_at(at.offset);
  const std::string name = spelling(parm);
  FilePos named = ctx.pos(parm);
  const size_t name_token = named.file ? named.file->token_at(named.offset) : at.file->tokens.size();
  const bool expanded = !name.empty() && name_token < named.file->tokens.size() &&
                        named.file->tokens[name_token].text != name &&
                        named.file->tokens[name_token].kind == CXToken_Identifier;
  if (expanded)
    if (auto in_macro = param_in_macro(ctx, named.file->tokens[name_token].text, name)) return in_macro;
  // Address-space words are empty macros: the parameter's extent starts after them.
  return std::pair{at.file, specifier_start(*at.file, first)};
}

// The tokens of one parameter: from its start to the `,` or `)` that ends it.
ParamSyntax read_param_syntax(Context& ctx, CXCursor parm) {
  ParamSyntax syntax;
  auto start = param_tokens_start(ctx, parm);
  if (!start) return syntax;
  const UserFile& f = *start->first;
  int depth = 0;
  for (size_t i = start->second; i < f.tokens.size();) {
    const std::string& t = f.tokens[i].text;
    if (depth == 0 && (t == "," || t == ")")) break;
    if (depth == 0 && t == "[" && i + 1 < f.tokens.size() && f.tokens[i + 1].text == "[") {
      i = read_attribute_group(f, i, syntax.attributes);
      continue;
    }
    if (opens(t)) ++depth;
    if (closes(t)) --depth;
    if (t == ">>") depth -= 2;
    syntax.declaration.push_back(t);
    ++i;
  }
  return syntax;
}

AddressSpace address_space_of(const std::vector<std::string>& tokens) {
  for (const auto& t : tokens) {
    if (t == "device") return AddressSpace::device;
    if (t == "constant") return AddressSpace::constant;
    if (t == "threadgroup") return AddressSpace::threadgroup;
    if (t == "thread") return AddressSpace::thread;
  }
  return AddressSpace::none;
}

// Builtin attributes outside ir::Builtin that a kernel may still declare.
bool is_other_builtin(const std::string& attribute) {
  static const std::set<std::string> kOthers = {
      "thread_execution_width", "quadgroup_index_in_threadgroup",
      "thread_index_in_quadgroup", "quadgroups_per_threadgroup", "dispatch_threads_per_threadgroup",
      "dispatch_simdgroups_per_threadgroup", "dispatch_quadgroups_per_threadgroup", "grid_origin",
      "grid_size"};
  return kOthers.count(attribute) > 0;
}

std::optional<ir::Builtin> builtin_of_attribute(const std::string& attribute) {
  for (const auto& b : ir::all_builtins())
    if (attribute == b.attribute) return b.builtin;
  return std::nullopt;
}

std::optional<int> to_int(const std::string& s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string strip_qualifiers(std::string type) {
  static const std::regex kQualifier(R"(\b(const|volatile)\s*)");
  type = std::regex_replace(type, kQualifier, "");
  while (!type.empty() && type.back() == ' ') type.pop_back();
  return type;
}

// `[[buffer(2)]]`, or `[[buffer(BASE + 1)]]` with the user's macros, which clang evaluates.
int attribute_index(Context& ctx, const std::string& args) {
  if (auto literal = to_int(args)) return *literal;
  auto value = evaluate_integer(ctx, args);
  return value && *value >= 0 && *value <= INT32_MAX ? static_cast<int>(*value) : -1;
}

void apply_attributes(Context& ctx, KernelParam& p, const std::vector<Attribute>& attributes) {
  for (const auto& a : attributes) {
    if (a.name == "buffer" || a.name == kThreadgroupAttribute) {
      p.kind = a.name == "buffer" ? ParamKind::buffer : ParamKind::threadgroup;
      p.index = attribute_index(ctx, a.args);
      p.index_explicit = true;
    } else if (a.name == "function_constant") {
      p.function_constant = a.args;
    } else if (builtin_of_attribute(a.name) || is_other_builtin(a.name)) {
      p.kind = ParamKind::builtin;
      p.builtin = builtin_of_attribute(a.name);
      p.builtin_attribute = a.name;
    } else if (a.name == "texture" || a.name == "sampler" || a.name == "stage_in") {
      p.kind = ParamKind::texture_or_other;
    }
  }
}

ParamKind kind_without_attribute(const KernelParam& p) {
  if (p.address_space == AddressSpace::threadgroup) return ParamKind::threadgroup;
  bool indirect = p.is_pointer || p.is_reference;
  if (indirect && (p.address_space == AddressSpace::device || p.address_space == AddressSpace::constant))
    return ParamKind::buffer;
  return ParamKind::texture_or_other;
}

std::string full_type(const KernelParam& p) {
  std::string space = to_string(p.address_space);
  std::string cv = p.is_const && p.address_space != AddressSpace::constant ? "const " : "";
  std::string head = cv + (space.empty() ? "" : space + " ") + p.element_type;
  return p.is_pointer ? head + " *" : p.is_reference ? head + " &" : head;
}

KernelParam describe_param(Context& ctx, CXCursor parm) {
  KernelParam p;
  p.name = spelling(parm);
  p.loc = ctx.pos(parm).loc;
  ParamSyntax syntax = read_param_syntax(ctx, parm);
  p.address_space = address_space_of(syntax.declaration);
  CXType type = clang_getCursorType(parm);
  CXTypeKind kind = clang_getCanonicalType(type).kind;
  p.is_pointer = kind == CXType_Pointer;
  p.is_reference = kind == CXType_LValueReference || kind == CXType_RValueReference;
  CXType element = p.is_pointer || p.is_reference ? clang_getPointeeType(type) : type;
  p.element_type = msl_type_name(strip_qualifiers(spelling(element)));
  p.is_const = clang_isConstQualifiedType(element) || p.address_space == AddressSpace::constant;
  p.type = full_type(p);
  p.kind = kind_without_attribute(p);
  apply_attributes(ctx, p, syntax.attributes);
  if (p.kind == ParamKind::builtin) p.builtin_type = p.element_type;
  if (p.kind == ParamKind::buffer && is_user_record(element)) {
    p.layout = metal_struct_layout(element);
    p.layout->name = p.element_type;
  }
  return p;
}

// Metal assigns an absent [[buffer(n)]] / [[threadgroup(n)]] "the first available location
// index" (MSL specification, 5.2.1 "Locating Buffer, Texture, and Sampler Arguments"): the
// smallest index of that kind that no parameter names explicitly and no earlier parameter took.
void assign_indices_by_order(std::vector<KernelParam>& params, ParamKind kind) {
  std::set<int> used;
  for (const auto& p : params)
    if (p.kind == kind && p.index_explicit) used.insert(p.index);
  int next = 0;
  for (auto& p : params) {
    if (p.kind != kind || p.index_explicit) continue;
    while (used.count(next)) ++next;
    p.index = next;
    used.insert(next);
  }
}

}  // namespace

// A define ends with the first line not continued by a backslash.
size_t define_end(const UserFile& f, size_t i) {
  size_t eol = f.tokens[i].end;
  for (;;) {
    eol = f.text.find('\n', eol);
    if (eol == std::string::npos) return f.tokens.size();
    size_t last = f.text.find_last_not_of(" \t\r", eol - 1);
    if (last == std::string::npos || f.text[last] != '\\') break;
    ++eol;
  }
  size_t end = i;
  while (end < f.tokens.size() && f.tokens[end].begin < eol) ++end;
  return end;
}

std::vector<KernelParam> describe_params(Context& ctx, CXCursor function) {
  std::vector<KernelParam> params;
  int n = clang_Cursor_getNumArguments(function);
  for (int i = 0; i < n; ++i) params.push_back(describe_param(ctx, clang_Cursor_getArgument(function, i)));
  assign_indices_by_order(params, ParamKind::buffer);
  assign_indices_by_order(params, ParamKind::threadgroup);
  return params;
}

}  // namespace mtlgen::msl
