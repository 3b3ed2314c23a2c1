// The loop rewrite inlines a helper that contains a sync point: its names get a fresh prefix, its
// template arguments become aliases and its parameters locals bound to the call's arguments.
#include <fmt/format.h>

#include <algorithm>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

void HelperInliner::inline_helper(CXCursor call, const std::string& name, const Target& target, const Scope& caller, int line,
                                  const std::string& guard) {
  if (active_.count(name)) throw Refusal{fmt::format("the helper `{}` is recursive", name), line};
  CXCursor def = src_.definition(name);
  if (clang_Cursor_isNull(def)) throw Refusal{fmt::format("the helper `{}` is overloaded", name), line};
  active_.insert(name);
  Scope scope;
  const std::string prefix = fmt::format("mtlsim_h{}_", ++helpers_);
  std::vector<CXCursor> params, tparams;
  collect_names(def, prefix, scope, params, tparams);
  pattern_checked_.clear();
  template_aliases(call, def, tparams, params, scope, caller, line);
  std::string checks = guard;
  for (size_t i : pattern_checked_)  // the arguments deduced by pattern are those g++ deduces
    checks += fmt::format("static_assert(::std::is_same_v<::std::remove_cvref_t<decltype(({}))>, ::std::remove_cvref_t<{}>>, "
                          "\"mtlgen loop form: `{}` at line {} deduces other template arguments here\");\n",
                          src_.render(clang_Cursor_getArgument(call, unsigned(i)), caller), declared_type(params[i], scope), name, line);
  if (!checks.empty()) {
    Item item = make_item(Item::code, line, checks);
    item.region = body_.region;
    body_.note_uses(item.text, body_.region);
    body_.items.push_back(std::move(item));
  }
  bind_params(call, params, scope, caller, line);
  flattener_.flatten(Source::body_of(def), scope, &target, true);
  active_.erase(name);
}

void HelperInliner::collect_names(CXCursor def, const std::string& prefix, Scope& scope, std::vector<CXCursor>& params,
                                  std::vector<CXCursor>& tparams) {
  for (CXCursor c : children(def)) {
    CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_ParmDecl) params.push_back(c);
    if (k == CXCursor_TemplateTypeParameter || k == CXCursor_NonTypeTemplateParameter) tparams.push_back(c);
    if (k == CXCursor_TemplateTemplateParameter) throw Refusal{"a helper with a template template parameter", src_.line_of(def)};
  }
  for (CXCursor c : params) scope.renames[spelling(c)] = prefix + spelling(c);
  for (CXCursor c : tparams) scope.renames[spelling(c)] = prefix + spelling(c);
  visit(def, [&](CXCursor c) {
    if (clang_getCursorKind(c) == CXCursor_VarDecl) scope.renames[spelling(c)] = prefix + spelling(c);
    return CXChildVisit_Recurse;
  });
}

// Tokens of a parameter's declared type (before its name), without address spaces and cv.
std::vector<std::string> HelperInliner::type_words(CXCursor param) const {
  const UserFile& f = src_.file();
  std::vector<std::string> words;
  unsigned name_at = src_.ctx().pos(param).offset;
  size_t first = specifier_start(f, f.token_at(src_.ctx().begin(param).offset));
  static const std::set<std::string> skip = {"const", "volatile", "device", "threadgroup", "constant", "thread"};
  for (size_t i = first; i < f.tokens.size() && f.tokens[i].begin < name_at; ++i)
    if (!skip.count(f.tokens[i].text)) words.push_back(f.tokens[i].text);
  return words;
}

std::string HelperInliner::declared_type(CXCursor param, const Scope& scope) const {
  const UserFile& f = src_.file();
  size_t first = specifier_start(f, f.token_at(src_.ctx().begin(param).offset));
  return src_.render(f.tokens[first].begin, src_.ctx().pos(param).offset, scope);
}

// Explicit template arguments of the call (`tg_sum<TG>(...)`), as rendered text.
std::vector<std::string> HelperInliner::explicit_args(CXCursor call, const std::string& name, const Scope& caller) const {
  const UserFile& f = src_.file();
  auto [b, e] = src_.range_of(call, false);
  size_t i = f.token_at(b);
  while (i < f.tokens.size() && f.tokens[i].text != name) ++i;
  std::vector<std::string> args;
  if (i + 1 >= f.tokens.size() || f.tokens[i + 1].text != "<") return args;
  int depth = 0;
  unsigned start = f.tokens[i + 2].begin;
  for (size_t j = i + 1; j < f.tokens.size() && f.tokens[j].end <= e; ++j) {
    const std::string& t = f.tokens[j].text;
    if (t == "<" || t == "(" || t == "[") ++depth;
    if (t == ">" || t == ")" || t == "]" || t == ">>") depth -= t == ">>" ? 2 : 1;
    if ((t == "," && depth == 1) || depth <= 0) {
      args.push_back(src_.render(start, f.tokens[j].begin, caller));
      if (depth <= 0) break;
      start = f.tokens[j + 1].begin;
    }
  }
  return args;
}

void HelperInliner::template_aliases(CXCursor call, CXCursor def, const std::vector<CXCursor>& tparams,
                                     const std::vector<CXCursor>& params, const Scope& scope, const Scope& caller, int line) {
  std::vector<std::string> given = explicit_args(call, spelling(def), caller);
  for (size_t i = 0; i < tparams.size(); ++i) {
    const std::string alias = scope.rename(spelling(tparams[i]));
    const bool type = clang_getCursorKind(tparams[i]) == CXCursor_TemplateTypeParameter;
    if (i < given.size()) {
      body_.hoisted.push_back(type ? fmt::format("using {} = {};\n", alias, value_type(given[i], line))
                              : fmt::format("constexpr {} {} = {};\n", rename_words(spelling(clang_getCursorType(tparams[i])), scope),
                                            alias, given[i]));
      continue;
    }
    const std::string fallback = default_argument(tparams[i], scope);
    if (!type && fallback.empty())
      throw Refusal{fmt::format("the template parameter `{}` of `{}` is not given", spelling(tparams[i]), spelling(def)), line};
    if (!type) {  // layer_norm's initialize_buffer(local_buffer, ...) with `template <int N = 1>`
      body_.hoisted.push_back(fmt::format("constexpr {} {} = {};\n", rename_words(spelling(clang_getCursorType(tparams[i])), scope),
                                          alias, fallback));
      continue;
    }
    body_.hoisted.push_back(fmt::format("using {} = {};\n", alias, deduced(call, tparams[i], params, caller, line)));
  }
}

// The default argument of a template parameter (`int N = 1`), rendered in the helper's scope; "" where it has none.
std::string HelperInliner::default_argument(CXCursor tparam, const Scope& scope) const {
  const UserFile& f = src_.file();
  auto [b, e] = src_.range_of(tparam, false);
  const unsigned name_end = src_.ctx().pos(tparam).offset + unsigned(spelling(tparam).size());
  for (size_t i = f.token_at(name_end); i < f.tokens.size() && f.tokens[i].end <= e; ++i)
    if (f.tokens[i].text == "=" && i + 1 < f.tokens.size()) return src_.render(f.tokens[i + 1].begin, e, scope);
  (void)b;
  return "";
}

// A helper's parameters become per-thread locals, which cannot be references: a type argument
// spelled as a `constant` or `const` reference (ggml's `constant ggml_metal_kargs_mul_mv &`) is
// kept as the value it refers to, which nothing can change; any other reference is refused.
std::string HelperInliner::value_type(const std::string& given, int line) {
  if (given.find('&') == std::string::npos) return given;
  const bool read_only = given.rfind("constant ", 0) == 0 || given.rfind("const ", 0) == 0;
  if (!read_only) throw Refusal{fmt::format("a helper's template argument `{}` is a reference", given), line};
  return fmt::format("std::remove_cvref_t<{}>", given);
}

bool HelperInliner::split_template(const std::string& type, std::string& name, std::vector<std::string>& args) {
  const size_t open = type.find('<');
  if (open == std::string::npos || type.empty() || type.back() != '>') return false;
  name = type.substr(0, open);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  if (name.rfind("const ", 0) == 0) name.erase(0, 6);
  args.clear();
  int depth = 0;
  std::string cur;
  for (size_t i = open + 1; i + 1 < type.size(); ++i) {
    const char c = type[i];
    depth += c == '<' || c == '(' ? 1 : c == '>' || c == ')' ? -1 : 0;
    if (c == ',' && depth == 0) {
      args.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  args.push_back(cur);
  for (std::string& a : args) {
    a.erase(0, a.find_first_not_of(' '));
    while (!a.empty() && a.back() == ' ') a.pop_back();
  }
  return depth == 0;
}

bool HelperInliner::pattern_matches(CXCursor def, CXCursor arg) const {
  for (CXCursor c : children(def)) {
    if (clang_getCursorKind(c) != CXCursor_ParmDecl) continue;
    const std::vector<std::string> w = type_words(c);
    std::string name;
    std::vector<std::string> args;
    return w.size() > 2 && w[1] == "<" && split_template(spelling(clang_getCursorType(arg)), name, args) && name == w[0];
  }
  return false;
}

// A type parameter deduced from the first parameter declared `P`, `P*` or `P&`, or `X<..., P, ...>`
// (`IndexValPair<U>`, by value or reference) whose argument's type clang spells `X<...>` with as
// many arguments (checked per instantiation by inline_helper: pattern_checked_).
std::string HelperInliner::deduced(CXCursor call, CXCursor tparam, const std::vector<CXCursor>& params, const Scope& caller,
                                   int line) {
  const std::string p = spelling(tparam);
  for (size_t i = 0; i < params.size() && int(i) < clang_Cursor_getNumArguments(call); ++i) {
    std::vector<std::string> w = type_words(params[i]);
    if (w.size() > 3 && w[1] == "<" && (w.back() == ">" || (w.back() == "&" && w[w.size() - 2] == ">"))) {
      std::vector<std::vector<std::string>> pattern(1);
      int depth = 0;
      for (size_t k = 2; k < w.size() && !(depth == 0 && w[k] == ">"); ++k) {
        depth += w[k] == "<" ? 1 : w[k] == ">" ? -1 : 0;
        if (depth == 0 && w[k] == ",") pattern.emplace_back();
        else pattern.back().push_back(w[k]);
      }
      std::string name;
      std::vector<std::string> args;
      const std::string arg = spelling(clang_getCursorType(clang_Cursor_getArgument(call, unsigned(i))));
      if (!split_template(arg, name, args) || name != w[0] || args.size() != pattern.size()) continue;
      for (size_t k = 0; k < pattern.size(); ++k)
        if (pattern[k] == std::vector<std::string>{p} && args[k].find("dependent") == std::string::npos) {
          pattern_checked_.insert(i);
          return rename_words(args[k], caller);
        }
      continue;
    }
    if (w.empty() || w[0] != p || w.size() > 2) continue;
    std::string arg = spelling(clang_getCursorType(clang_Cursor_getArgument(call, unsigned(i))));
    if (arg.empty() || arg.find("dependent") != std::string::npos) break;
    arg = rename_words(arg, caller);
    if (w.size() == 1 || w[1] == "&") return fmt::format("std::remove_cvref_t<{}>", arg);
    if (w[1] == "*") return fmt::format("std::remove_cv_t<std::remove_pointer_t<std::remove_cvref_t<{}>>>", arg);
  }
  throw Refusal{fmt::format("cannot tell the template argument `{}` of a helper", p), line};
}

// Each parameter becomes a local initialised from its argument, in the caller's region. A `const`
// or `constant` reference (qmv_impl's `const constant int& in_vec_size`) is bound as the value it
// refers to, which the helper cannot change; another reference becomes a pointer to its argument
// (`(*p)` where the helper names it), so the argument's variable lives in its frame slot
// (FlatBody::keep_pointed_to) and the helper's writes reach it.
void HelperInliner::bind_params(CXCursor call, const std::vector<CXCursor>& params, Scope& scope, const Scope& caller, int line) {
  if (clang_Cursor_getNumArguments(call) != int(params.size()))
    throw Refusal{"a helper called with default arguments", line};
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<std::string> w = type_words(params[i]);
    std::string type = declared_type(params[i], scope);
    std::string name = scope.rename(spelling(params[i]));
    const CXCursor argument = clang_Cursor_getArgument(call, unsigned(i));
    std::string arg = src_.render(argument, caller);
    const size_t amp = type.rfind('&');
    if (std::find(w.begin(), w.end(), "&") != w.end() && amp != std::string::npos) {
      const CXType t = clang_getCursorType(params[i]);
      if (t.kind == CXType_LValueReference && clang_isConstQualifiedType(clang_getPointeeType(t))) {
        type.erase(amp, 1);
      } else {
        type[amp] = '*';
        arg = "&" + arg;
        scope.renames[spelling(params[i])] = "(*" + name + ")";
      }
    }
    flattener_.note_argument(params[i], argument);
    Item item = make_item(Item::code, line, fmt::format("{}{} = ({});", type, name, arg));
    item.region = body_.region;
    item.var = body_.add_var(name, type, false, line);
    item.name_at = unsigned(type.size());
    item.name_end = item.name_at + unsigned(name.size());
    body_.note_uses(arg, body_.region);
    body_.items.push_back(std::move(item));
  }
}

}  // namespace mtlgen::msl::loop_form
