// The CUDA flavour of the user's files (Unit::cuda_source): the same lines, rewritten at
// locations the AST and the tokens give (never by regex over text) so that nvcc compiles them
// against mtlgen's CUDA <metal_stdlib> (generator/cuda/shim/). Every edit stays on its line,
// so compute-sanitizer's and nvcc's line numbers are the .metal file's.
//
// Works on the pre-passed text (msl_prepass.cpp: `[[kernel]]` is already the word `kernel`,
// `[[host_name(x)]]` the macro call `__MTL_HOSTN(x)`), which has the original's length.
#include <algorithm>
#include <array>
#include <cctype>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

bool inside(const std::vector<SourceRange>& ranges, const std::string& file, unsigned offset) {
  return std::any_of(ranges.begin(), ranges.end(), [&](const SourceRange& r) {
    return r.file == file && r.begin <= offset && offset < r.end;
  });
}

bool inside(const std::vector<ThreadgroupSite>& sites, const std::string& file, unsigned offset) {
  return std::any_of(sites.begin(), sites.end(),
                     [&](const ThreadgroupSite& s) { return s.file == file && s.begin <= offset && offset < s.end; });
}

void blank(const Token& t, std::vector<Edit>& edits) {
  edits.push_back({t.begin, t.end, std::string(t.end - t.begin, ' ')});
}

// MSL's vector type names (`float4`, `ushort2`, `bfloat3`): CUDA declares its own `float4` at
// global scope, so the kernel's are respelled `mtl_float4` (the CUDA shim's vectors).
bool is_vector_type_name(const std::string& word) {
  static const std::array<std::string, 12> kElements = {"bool", "char", "uchar", "short", "ushort", "int",
                                                        "uint", "long", "ulong", "half", "bfloat", "float"};
  if (word.size() < 2) return false;
  char n = word.back();
  if (n < '2' || n > '4') return false;
  return std::find(kElements.begin(), kElements.end(), word.substr(0, word.size() - 1)) != kElements.end();
}

// Index of the token closing the bracket opened at tokens[open] ("(", "[", "<"), or tokens.size().
size_t closing(const UserFile& f, size_t open, const std::string& opener, const std::string& closer) {
  int depth = 0;
  for (size_t i = open; i < f.tokens.size(); ++i) {
    const std::string& t = f.tokens[i].text;
    if (t == opener) ++depth;
    if (t == closer || (closer == ">" && t == ">>")) depth -= t == ">>" ? 2 : 1;
    if (depth <= 0) return i;
  }
  return f.tokens.size();
}

// `template __MTL_HOSTN("x") kernel decltype(k<float>) k<float>;` (an explicit instantiation,
// also inside an instantiation macro's definition): the launcher names k<float> itself, so the
// whole declaration goes. Returns the blanked ranges.
std::vector<SourceRange> drop_explicit_instantiations(const UserFile& f, std::vector<Edit>& edits) {
  std::vector<SourceRange> dropped;
  for (size_t i = 0; i + 1 < f.tokens.size(); ++i) {
    if (f.tokens[i].text != "template" || f.tokens[i + 1].text == "<") continue;
    if (i > 0 && (f.tokens[i - 1].text == "." || f.tokens[i - 1].text == "->" || f.tokens[i - 1].text == "::")) continue;
    size_t end = i;
    while (end < f.tokens.size() && f.tokens[end].text != ";") ++end;
    if (end == f.tokens.size()) break;
    for (size_t j = i; j <= end; ++j) blank(f.tokens[j], edits);
    dropped.push_back({f.path, f.tokens[i].begin, f.tokens[end].end});
    i = end;
  }
  return dropped;
}

// `[[buffer(0)]]`, `[[thread_position_in_grid]]`, `[[function_constant(i)]]`, and the pre-pass's
// `__MTL_HOSTN(...)` / `__MTL_MAXTPT(...)` / `__MTL_FCONST(...)`: the launcher binds by the front
// end's description.
void drop_attributes(const UserFile& f, std::vector<Edit>& edits) {
  for (size_t i = 0; i + 1 < f.tokens.size(); ++i) {
    const std::string& t = f.tokens[i].text;
    size_t last = i;
    if (t == "[" && f.tokens[i + 1].text == "[") {
      last = closing(f, i, "[", "]");
    } else if ((t == "__MTL_HOSTN" || t == "__MTL_MAXTPT" || t == "__MTL_FCONST") && f.tokens[i + 1].text == "(") {
      last = closing(f, i + 1, "(", ")");
    } else {
      continue;
    }
    for (size_t j = i; j <= last && j < f.tokens.size(); ++j) blank(f.tokens[j], edits);
    i = last;
  }
}

// Address spaces go (CUDA pointers are generic), except that a threadgroup variable declared in
// a body becomes `__shared__` and a function constant a `__device__` variable the host sets
// before each launch; `constant` elsewhere stays const (a `const P` binds to `constant P&`);
// `kernel` goes (the function gets `__device__`; a generated `__global__` wrapper calls it).
void respell_words(const UserFile& f, const Description& d, std::vector<Edit>& edits) {
  for (size_t i = 0; i < f.tokens.size(); ++i) {
    const Token& t = f.tokens[i];
    if (t.kind != CXToken_Identifier) continue;
    if (t.text == "device" || t.text == "thread" || t.text == "kernel") {
      blank(t, edits);
    } else if (t.text == "threadgroup") {
      if (inside(d.threadgroup_sites, f.path, t.begin)) edits.push_back({t.begin, t.end, "__shared__"});
      else blank(t, edits);
    } else if (t.text == "constant") {
      if (inside(d.function_constant_decls, f.path, t.begin)) edits.push_back({t.begin, t.end, "__device__"});
      else if (says_const_beside(f, i)) blank(t, edits);
      else edits.push_back({t.begin, t.end, "const"});
    } else if (is_vector_type_name(t.text)) {
      edits.push_back({t.begin, t.end, "mtl_" + t.text});
    }
  }
}

// MSL's half literals (`0.5h`; the pre-pass made `1H` `1h`): CUDA has no such suffix, so the number
// becomes the argument of the shim's constexpr mtlcu::half_literal (a constant expression, as in MSL).
void respell_half_literals(const UserFile& f, std::vector<Edit>& edits) {
  for (const Token& t : f.tokens) {
    if (t.kind != CXToken_Literal || t.text.size() < 2) continue;
    const char first = t.text.front();
    if (t.text.back() != 'h' || !(std::isdigit(static_cast<unsigned char>(first)) || first == '.')) continue;
    edits.push_back({t.begin, t.end, "mtlcu::half_literal(" + t.text.substr(0, t.text.size() - 1) + ")"});
  }
}

bool is_function_kind(CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate || k == CXCursor_CXXMethod ||
         k == CXCursor_Constructor || k == CXCursor_Destructor || k == CXCursor_ConversionFunction;
}

struct FunctionVisit {
  Context* ctx;
  const std::vector<SourceRange>* dropped;
  const std::vector<SourceRange>* function_constants;
  std::map<std::string, std::vector<Edit>> insertions;  // by UserFile::path; planned before the token edits
};

// Where `__device__` goes for a function declaration: before its decl-specifiers, after a
// template head. npos when it is not in a user file or lies in a dropped instantiation.
std::pair<const UserFile*, size_t> device_insertion(FunctionVisit& v, CXCursor c) {
  FilePos at = v.ctx->begin(c);
  if (!at.file || inside(*v.dropped, at.file->path, at.offset)) return {nullptr, 0};
  const UserFile& f = *at.file;
  size_t first = f.token_at(at.offset);
  while (first + 1 < f.tokens.size() && f.tokens[first].text == "template" && f.tokens[first + 1].text == "<")
    first = closing(f, first + 1, "<", ">") + 1;
  if (first >= f.tokens.size()) return {nullptr, 0};
  return {&f, specifier_start(f, first)};
}

// A program-scope `constant float table[16] = {...};` (not constexpr, not a function constant)
// must live in device memory: `__constant__` (a host `const` is not usable in device code).
void respell_program_scope_constant(FunctionVisit& v, CXCursor c) {
  FilePos at = v.ctx->begin(c);
  if (!at.file) return;
  const UserFile& f = *at.file;
  size_t first = f.token_at(at.offset);
  if (first >= f.tokens.size()) return;
  size_t spec = specifier_start(f, first);
  const Token* constant = nullptr;
  for (size_t i = spec; i < f.tokens.size() && f.tokens[i].text != "=" && f.tokens[i].text != ";"; ++i) {
    if (f.tokens[i].text == "constexpr") return;
    if (f.tokens[i].text == "constant" && !constant) constant = &f.tokens[i];
  }
  if (constant && !inside(*v.function_constants, f.path, constant->begin))
    v.insertions[f.path].push_back({constant->begin, constant->end, "__constant__"});
}

CXChildVisitResult visit_function(CXCursor c, CXCursor, CXClientData data) {
  auto& v = *static_cast<FunctionVisit*>(data);
  CXCursorKind kind = clang_getCursorKind(c);
  if (kind == CXCursor_VarDecl) {
    respell_program_scope_constant(v, c);
    return CXChildVisit_Continue;
  }
  if (is_function_kind(kind)) {
    auto [file, token] = device_insertion(v, c);
    if (file) {
      std::vector<Edit>& list = v.insertions[file->path];
      unsigned at = file->tokens[token].begin;
      bool seen = std::any_of(list.begin(), list.end(), [&](const Edit& e) { return e.begin == at; });
      if (!seen) list.push_back({at, at, "__device__ "});
    }
    return CXChildVisit_Continue;  // bodies hold no further declarations MSL allows
  }
  if (kind == CXCursor_Namespace || kind == CXCursor_StructDecl || kind == CXCursor_ClassDecl ||
      kind == CXCursor_ClassTemplate || kind == CXCursor_ClassTemplatePartialSpecialization ||
      kind == CXCursor_UnionDecl || kind == CXCursor_LinkageSpec)
    return CXChildVisit_Recurse;
  return CXChildVisit_Continue;
}

}  // namespace

std::map<std::string, std::string> plan_cuda_texts(Context& ctx, const Description& d) {
  std::map<std::string, std::vector<Edit>> edits;
  std::vector<SourceRange> dropped;
  for (const auto& [path, file] : ctx.files()) {
    for (const SourceRange& r : d.address_space_twins)  // first: edits inside them are skipped
      if (r.file == path) edits[path].push_back({r.begin, r.end, ""});
    auto more = drop_explicit_instantiations(file, edits[path]);
    dropped.insert(dropped.end(), more.begin(), more.end());
    drop_attributes(file, edits[path]);
    respell_words(file, d, edits[path]);
    respell_half_literals(file, edits[path]);
  }
  FunctionVisit visit{&ctx, &dropped, &d.function_constant_decls, {}};
  clang_visitChildren(clang_getTranslationUnitCursor(ctx.tu()), visit_function, &visit);
  std::map<std::string, std::string> texts;
  for (const auto& [path, file] : ctx.files()) {
    // Insertions first: apply_edits keeps the first of two edits starting at one offset.
    std::vector<Edit> all = std::move(visit.insertions[path]);
    all.insert(all.end(), edits[path].begin(), edits[path].end());
    texts[path] = apply_edits(file.text, std::move(all));
  }
  return texts;
}

}  // namespace mtlgen::msl
