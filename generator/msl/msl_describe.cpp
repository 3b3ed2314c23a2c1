// The description: entry points (kernels and host_name instantiations), function constants and
// the threadgroup variables declared in bodies. Address-space words are empty macros in the
// parse, so they are read from the user's tokens at the declarations' locations.
#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <set>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

void visit_children(CXCursor c, const std::function<CXChildVisitResult(CXCursor)>& f) {
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        return (*static_cast<const std::function<CXChildVisitResult(CXCursor)>*>(data))(child);
      },
      const_cast<std::function<CXChildVisitResult(CXCursor)>*>(&f));
}

namespace {

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// What the pre-pass's `annotate` attributes say about a function.
struct Annotations {
  bool kernel = false;
  std::optional<std::string> host_name;
  CXCursor host_name_at = clang_getNullCursor();
  std::optional<int> max_total_threads;
};

Annotations annotations_of(CXCursor fn) {
  Annotations a;
  visit_children(fn, [&](CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_AnnotateAttr) return CXChildVisit_Continue;
    std::string text = spelling(c);
    auto value_of = [&](std::string_view key) -> std::optional<std::string> {
      if (text.rfind(key, 0) != 0) return std::nullopt;
      return text.substr(key.size());
    };
    if (text == "mtl_kernel") a.kernel = true;
    if (auto v = value_of("mtl_host_name=")) {
      a.host_name = *v;
      a.host_name_at = c;
    }
    if (auto v = value_of("mtl_max_total_threads_per_threadgroup=")) a.max_total_threads = to_int(*v);
    return CXChildVisit_Continue;
  });
  return a;
}

bool is_instantiation(CXCursor fn) { return !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(fn)); }

// Template parameters of the template `fn` instantiates: name and (for values) its type.
std::vector<CXCursor> template_parameters(CXCursor fn) {
  std::vector<CXCursor> params;
  visit_children(clang_getSpecializedCursorTemplate(fn), [&](CXCursor c) {
    CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_TemplateTypeParameter || k == CXCursor_NonTypeTemplateParameter ||
        k == CXCursor_TemplateTemplateParameter)
      params.push_back(c);
    return CXChildVisit_Continue;
  });
  return params;
}

std::string template_arg_value(CXCursor fn, int i, const CXCursor* param) {
  switch (clang_Cursor_getTemplateArgumentKind(fn, static_cast<unsigned>(i))) {
    case CXTemplateArgumentKind_Type:
      return msl_type_name(spelling(clang_Cursor_getTemplateArgumentType(fn, static_cast<unsigned>(i))));
    case CXTemplateArgumentKind_Integral: {
      CXTypeKind kind = param ? clang_getCanonicalType(clang_getCursorType(*param)).kind : CXType_Int;
      if (kind == CXType_Bool)
        return clang_Cursor_getTemplateArgumentValue(fn, static_cast<unsigned>(i)) ? "true" : "false";
      bool is_unsigned = kind == CXType_UInt || kind == CXType_ULong || kind == CXType_ULongLong ||
                         kind == CXType_UShort || kind == CXType_UChar;
      return is_unsigned ? std::to_string(clang_Cursor_getTemplateArgumentUnsignedValue(fn, static_cast<unsigned>(i)))
                         : std::to_string(clang_Cursor_getTemplateArgumentValue(fn, static_cast<unsigned>(i)));
    }
    default: return "";
  }
}

// The template arguments as the explicit instantiation at `at` (its host_name) spells them
// (`k<block_q4_0, 2, dequantize_q4_0>`), for those libclang gives no value of (declarations:
// ggml's function-pointer arguments). Empty when not spelled in a user file's own tokens.
std::vector<std::string> spelled_template_args(Context& ctx, CXCursor fn, CXCursor at) {
  FilePos begin = ctx.pos(at);
  if (!begin.file) return {};
  const UserFile& f = *begin.file;
  const std::string name = spelling(fn);
  size_t i = f.token_at(begin.offset);
  auto opens_arguments = [&](size_t j) { return f.tokens[j].text == name && f.tokens[j + 1].text == "<"; };
  while (i + 1 < f.tokens.size() && f.tokens[i].text != ";" && !opens_arguments(i)) ++i;
  if (i + 1 >= f.tokens.size() || f.tokens[i].text == ";") return {};
  std::vector<std::string> args(1);
  int depth = 0;
  for (size_t j = i + 2; j < f.tokens.size() && f.tokens[j].text != ";"; ++j) {
    const std::string& t = f.tokens[j].text;
    if (t == "<" || t == "(" || t == "[") ++depth;
    if ((t == ">" || t == ">>") && depth == 0) return args;
    if (t == ">" || t == ")" || t == "]") --depth;
    if (t == ">>") depth -= 2;
    if (t == "," && depth == 0) {
      args.emplace_back();
      continue;
    }
    args.back() += (args.back().empty() ? "" : " ") + t;
  }
  return {};
}

std::vector<TemplateArg> template_args(Context& ctx, CXCursor fn, CXCursor host_name_at) {
  std::vector<TemplateArg> args;
  int n = clang_Cursor_getNumTemplateArguments(fn);
  std::vector<CXCursor> params = template_parameters(fn);
  std::vector<std::string> spelled;
  for (int i = 0; i < n; ++i) {
    const CXCursor* param = i < static_cast<int>(params.size()) ? &params[i] : nullptr;
    std::string value = template_arg_value(fn, i, param);
    if (value.empty() && spelled.empty()) spelled = spelled_template_args(ctx, fn, host_name_at);
    if (value.empty() && i < static_cast<int>(spelled.size())) value = spelled[i];
    args.push_back({param ? spelling(*param) : "", value});
  }
  return args;
}

// File-scope variables `fn` names, directly or through the functions it calls (their templates
// too: libclang may not show an instantiated body). An over-approximation is harmless.
void referenced_globals(CXCursor fn, std::set<std::string>& names, std::set<std::string>& visited) {
  if (clang_Cursor_isNull(fn) || !visited.insert(str(clang_getCursorUSR(fn))).second) return;
  visit_children(fn, [&](CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_DeclRefExpr) return CXChildVisit_Recurse;
    CXCursor ref = clang_getCursorReferenced(c);
    CXCursorKind kind = clang_getCursorKind(ref);
    if (kind == CXCursor_VarDecl && clang_getCursorKind(clang_getCursorSemanticParent(ref)) != CXCursor_FunctionDecl) {
      names.insert(spelling(ref));
    } else if (kind == CXCursor_FunctionDecl || kind == CXCursor_FunctionTemplate) {
      referenced_globals(clang_getCursorDefinition(ref), names, visited);
      referenced_globals(clang_getSpecializedCursorTemplate(ref), names, visited);
    }
    return CXChildVisit_Recurse;
  });
}

std::vector<std::string> referenced_globals(CXCursor fn) {
  std::set<std::string> names;
  std::set<std::string> visited;
  referenced_globals(fn, names, visited);
  referenced_globals(clang_getSpecializedCursorTemplate(fn), names, visited);
  return {names.begin(), names.end()};
}

std::optional<EntryPoint> entry_point(Context& ctx, CXCursor fn) {
  Annotations a = annotations_of(fn);
  bool instantiation = is_instantiation(fn);
  // An instantiated kernel is an entry point only under a host name; a plain one by its name.
  if (instantiation ? !a.host_name : (!a.kernel || !clang_isCursorDefinition(fn))) return std::nullopt;
  EntryPoint e;
  e.function = spelling(fn);
  e.host_name = a.host_name.value_or(e.function);
  if (instantiation) e.template_args = template_args(ctx, fn, a.host_name_at);
  e.params = describe_params(ctx, fn);
  e.max_total_threads_per_threadgroup = a.max_total_threads;
  e.function_constants = referenced_globals(fn);  // narrowed to function constants in describe()
  for (const auto& p : e.params) {
    if (!p.function_constant.empty()) e.function_constants.push_back(p.function_constant);
  }
  e.definition_loc = ctx.pos(fn).loc;
  e.loc = a.host_name ? ctx.pos(a.host_name_at).loc : e.definition_loc;
  return e;
}

// Decl-specifier words that may precede a declaration's type; empty macros in the parse, so the
// cursor's extent starts after them.
bool is_specifier_word(const std::string& w) {
  static const std::set<std::string> kWords = {"threadgroup", "constant", "device", "thread", "const",
                                               "volatile", "static", "constexpr"};
  return kWords.count(w) > 0;
}

}  // namespace

size_t specifier_start(const UserFile& f, size_t first) {
  while (first > 0 && f.tokens[first - 1].kind != CXToken_Comment && is_specifier_word(f.tokens[first - 1].text))
    --first;
  return first;
}

namespace {

// Index of the first token after the array suffix that follows the name at `name_index`.
size_t after_array_suffix(const UserFile& f, size_t name_index) {
  size_t i = name_index + 1;
  while (i < f.tokens.size() && f.tokens[i].text == "[") {
    int depth = 0;
    for (; i < f.tokens.size(); ++i) {
      if (f.tokens[i].text == "[") ++depth;
      if (f.tokens[i].text == "]" && --depth == 0) break;
    }
    ++i;
  }
  return i;
}

// Index of the first token after the initializer (`= {0}`) that starts at tokens[i], if any:
// the `,` or `;` that ends the declarator.
size_t after_initializer(const UserFile& f, size_t i) {
  if (i >= f.tokens.size() || f.tokens[i].text != "=") return i;
  int depth = 0;
  for (; i < f.tokens.size(); ++i) {
    const std::string& t = f.tokens[i].text;
    if (depth == 0 && (t == ";" || t == ",")) break;
    if (t == "(" || t == "[" || t == "{") ++depth;
    if (t == ")" || t == "]" || t == "}") --depth;
  }
  return i;
}

// A declaration's type on one line: blanks that hold a newline become one space.
std::string one_line(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t j = s.find_first_not_of(" \t\r\n", i);
    if (j == i) {
      out += s[i++];
      continue;
    }
    if (j == std::string_view::npos) j = s.size();
    std::string_view blanks = s.substr(i, j - i);
    out += blanks.find('\n') == std::string_view::npos ? std::string(blanks) : std::string(" ");
    i = j;
  }
  return out;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

class Describer {
 public:
  Describer(Context& ctx, Description& d) : ctx_(ctx), d_(d) {}

  void declaration(CXCursor c) {
    if (!ctx_.in_user_file(c)) return;
    switch (clang_getCursorKind(c)) {
      case CXCursor_Namespace:
      case CXCursor_LinkageSpec:
        visit_children(c, [&](CXCursor child) {
          declaration(child);
          return CXChildVisit_Continue;
        });
        return;
      case CXCursor_FunctionDecl:
        if (auto e = entry_point(ctx_, c)) {
          d_.entry_points.push_back(std::move(*e));
          plain_kernel_keyword(c);
        }
        if (!is_instantiation(c)) threadgroup_variables_in(c);
        return;
      case CXCursor_VarDecl: function_constant(c); return;
      default: threadgroup_variables_in(c); return;
    }
  }

 private:
  // The `kernel` of a kernel defined without a template and declared nowhere else: the simulator
  // makes it `static`, so that g++ drops the kernels a module does not run (most of a large
  // file's compile: ggml's 11,887 lines).
  void plain_kernel_keyword(CXCursor fn) {
    if (is_instantiation(fn) || !clang_isCursorDefinition(fn) || !clang_equalCursors(clang_getCanonicalCursor(fn), fn))
      return;
    FilePos at = ctx_.begin(fn), name = ctx_.pos(fn);
    if (!at.file || name.file != at.file || name.offset <= at.offset) return;  // e.g. written by a macro
    const UserFile& f = *at.file;
    for (size_t i = f.token_at(at.offset); i < f.tokens.size() && f.tokens[i].begin < name.offset; ++i) {
      if (f.tokens[i].text == "kernel") {
        d_.plain_kernel_keywords.push_back({f.path, f.tokens[i].begin, f.tokens[i].end});
        return;
      }
    }
  }

  void threadgroup_variables_in(CXCursor scope) {
    visit_children(scope, [&](CXCursor c) {
      if (clang_getCursorKind(c) == CXCursor_VarDecl) threadgroup_variable(c);
      return CXChildVisit_Recurse;
    });
  }

  void threadgroup_variable(CXCursor var) {
    FilePos at = ctx_.begin(var);
    if (!at.file || !seen_.insert({at.file->path, at.offset}).second) return;
    const UserFile& f = *at.file;
    size_t first = f.token_at(at.offset);
    size_t spec = specifier_start(f, first);
    bool threadgroup = false;
    std::string words;
    for (size_t i = spec; i < first; ++i) {
      if (f.tokens[i].text == "threadgroup") threadgroup = true;
      else if (f.tokens[i].text == "const" || f.tokens[i].text == "volatile") words += f.tokens[i].text + " ";
    }
    CXTypeKind kind = clang_getCanonicalType(clang_getCursorType(var)).kind;
    bool indirection = kind == CXType_Pointer || kind == CXType_LValueReference || kind == CXType_RValueReference;
    if (!threadgroup || indirection) return;  // `threadgroup float* p = buf;` is a pointer local
    std::string name = spelling(var);
    size_t name_index = first;
    while (name_index < f.tokens.size() && f.tokens[name_index].text != name) ++name_index;
    if (name_index == f.tokens.size()) return;
    size_t end = after_array_suffix(f, name_index);
    std::string type = words + trim(f.slice(f.tokens[first].begin, f.tokens[name_index].begin)) +
                       one_line(f.slice(f.tokens[name_index].end, f.tokens[end - 1].end));
    long long bytes = clang_Type_getSizeOf(clang_getCursorType(var));
    size_t declarator_end = after_initializer(f, end);
    d_.threadgroup_variables.push_back({name, spelling(clang_getCursorSemanticParent(var)), type,
                                        bytes > 0 ? static_cast<uint64_t>(bytes) : 0, ctx_.pos(var).loc,
                                        declarator_end != end});
    d_.threadgroup_sites.push_back({f.path, f.tokens[spec].begin, f.tokens[declarator_end - 1].end, name, type});
  }

  // `constant T name [[function_constant(i)]];` at file scope; the pre-pass made the attribute
  // `__MTL_FCONST(i)`, whose enumerator holds i as clang evaluated it.
  void function_constant(CXCursor var) {
    FilePos at = ctx_.begin(var);
    if (!at.file) return;
    const UserFile& f = *at.file;
    size_t first = f.token_at(at.offset);
    size_t i = first;
    auto is_attribute = [](const std::string& t) { return t == "function_constant" || t == "__MTL_FCONST"; };
    while (i < f.tokens.size() && f.tokens[i].text != ";" && !is_attribute(f.tokens[i].text)) ++i;
    if (i + 3 >= f.tokens.size() || !is_attribute(f.tokens[i].text) || f.tokens[i + 1].text != "(") return;
    FunctionConstant fc;
    fc.name = spelling(var);
    fc.type = msl_type_name(spelling(clang_getCursorType(var)));
    if (fc.type.rfind("const ", 0) == 0) fc.type.erase(0, 6);  // `constant` is const in the parse
    auto evaluated = function_constant_indices_.find({f.path, f.tokens[i].begin});
    fc.index = evaluated != function_constant_indices_.end() ? evaluated->second
                                                              : to_int(f.tokens[i + 2].text).value_or(-1);
    fc.loc = ctx_.pos(var).loc;
    d_.function_constants.push_back(fc);
    size_t semicolon = i;
    while (semicolon < f.tokens.size() && f.tokens[semicolon].text != ";") ++semicolon;
    size_t last = std::min(semicolon, f.tokens.size() - 1);
    d_.function_constant_decls.push_back({f.path, f.tokens[specifier_start(f, first)].begin, f.tokens[last].end});
  }

 public:
  // The pre-pass's enumerators, by where their attribute is (file, offset): read before the
  // declarations, which come first.
  void index_function_constants(CXCursor scope) {
    visit_children(scope, [&](CXCursor c) {
      const CXCursorKind kind = clang_getCursorKind(c);
      if (kind == CXCursor_Namespace || kind == CXCursor_LinkageSpec || kind == CXCursor_EnumDecl)
        index_function_constants(c);
      if (kind == CXCursor_EnumConstantDecl && spelling(c).rfind(kFunctionConstantIndex, 0) == 0) {
        FilePos at = ctx_.pos(c);
        if (at.file) function_constant_indices_[{at.file->path, at.offset}] = int(clang_getEnumConstantDeclValue(c));
      }
      return CXChildVisit_Continue;
    });
  }

 private:
  std::map<std::pair<std::string, unsigned>, int> function_constant_indices_;
  Context& ctx_;
  Description& d_;
  std::set<std::pair<std::string, unsigned>> seen_;
};

// Registers every included user file, so that the rewrite sees headers with no declaration the
// description needed.
void register_included_files(Context& ctx) {
  clang_getInclusions(
      ctx.tu(),
      [](CXFile f, CXSourceLocation*, unsigned, CXClientData data) {
        auto* c = static_cast<Context*>(data);
        c->pos(clang_getLocationForOffset(c->tu(), f, 0));
      },
      &ctx);
}

}  // namespace

Description describe(Context& ctx) {
  register_included_files(ctx);
  Description d;
  Describer describer(ctx, d);
  describer.index_function_constants(clang_getTranslationUnitCursor(ctx.tu()));
  visit_children(clang_getTranslationUnitCursor(ctx.tu()), [&](CXCursor c) {
    describer.declaration(c);
    return CXChildVisit_Continue;
  });
  for (auto& e : d.entry_points) {
    std::sort(e.function_constants.begin(), e.function_constants.end());
    e.function_constants.erase(std::unique(e.function_constants.begin(), e.function_constants.end()),
                               e.function_constants.end());
    std::erase_if(e.function_constants, [&](const std::string& name) {
      return std::none_of(d.function_constants.begin(), d.function_constants.end(),
                          [&](const FunctionConstant& fc) { return fc.name == name; });
    });
  }
  return d;
}

}  // namespace mtlgen::msl
