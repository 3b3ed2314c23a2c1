// Metal conformance checks: walks what the user spelled (never the shim's own C++) and reports
// each construct Apple's Metal compiler rejects, citing the specification section it comes from.
// This file is the walk over the AST and the language-feature rules; token helpers, address
// spaces and kernel signatures live in conformance_tokens.cpp, conformance_address_space.cpp and
// conformance_kernel.cpp. Citations and shared declarations: conformance_internal.h.
#include "msl/conformance.h"

#include <filesystem>
#include <map>

#include "msl/conformance_internal.h"

namespace mtlgen::msl {

namespace {

using namespace conformance;

std::string file_name(CXFile file) { return file ? conformance::to_string(clang_getFileName(file)) : ""; }

std::string file_of(CXSourceLocation location) {
  CXFile file = nullptr;
  clang_getExpansionLocation(location, &file, nullptr, nullptr, nullptr);
  return file_name(file);
}

// The user's files: the main file and the headers it includes (transitively) that are neither
// system headers nor the shim's. Built from the inclusion list, which lists each include once.
struct Inclusion {
  std::string file, includer;
  SourceLoc directive;
  bool system = false;
};

std::vector<Inclusion> inclusions(CXTranslationUnit tu) {
  std::vector<Inclusion> out;
  clang_getInclusions(
      tu,
      [](CXFile included, CXSourceLocation* stack, unsigned depth, CXClientData data) {
        if (depth == 0) return;  // the main file
        Inclusion inc{file_name(included), file_of(stack[0]), to_loc(stack[0]), false};
        static_cast<std::vector<Inclusion>*>(data)->push_back(std::move(inc));
      },
      &out);
  for (Inclusion& inc : out) {
    CXFile file = clang_getFile(tu, inc.file.c_str());
    inc.system = file && clang_Location_isInSystemHeader(clang_getLocation(tu, file, 1, 1));
  }
  return out;
}

bool is_metal_header(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.rfind("metal_", 0) == 0;
}

std::set<std::string> user_files(const std::vector<Inclusion>& incs, const std::string& main_file) {
  std::set<std::string> users{main_file};
  for (bool grew = true; grew;) {
    grew = false;
    for (const Inclusion& inc : incs) {
      if (users.count(inc.file) || !users.count(inc.includer)) continue;
      if (inc.system || is_metal_header(inc.file)) continue;
      grew = users.insert(inc.file).second || grew;
    }
  }
  return users;
}

class Checker {
 public:
  Checker(const Context& ctx, std::set<std::string> users) : ctx_(ctx), users_(std::move(users)) {}

  void run(const std::vector<Inclusion>& incs) {
    check_includes(incs);
    walk(clang_getTranslationUnitCursor(ctx_.tu), Scope{});
    check_recursion();
  }

 private:
  const Context& ctx_;
  std::set<std::string> users_;
  struct Call {
    std::string callee;
    SourceLoc loc;
  };
  std::map<std::string, std::vector<Call>> calls_;  // caller USR -> calls it makes

  bool in_user_file(CXCursor c) const { return users_.count(file_of(clang_getCursorLocation(c))) > 0; }
  SourceLoc loc(CXCursor c) const { return to_loc(clang_getCursorLocation(c)); }
  void report(const SourceLoc& at, const std::string& what, const Citation& where, std::string hint) const {
    ctx_.reporter.report(at, what, where, std::move(hint));
  }

  // The C++ standard library is not Metal's: an included system header that is not metal_*.
  void check_includes(const std::vector<Inclusion>& incs) const {
    for (const Inclusion& inc : incs)
      if (users_.count(inc.includer) && inc.system && !is_metal_header(inc.file))
        report(inc.directive,
               "the C++ standard library header <" + std::filesystem::path(inc.file).filename().string() +
                   "> is not available in Metal",
               kCxxRestrictions, "include <metal_stdlib> and use the metal:: equivalents");
  }

  static std::vector<CXCursor> children(CXCursor c) {
    std::vector<CXCursor> out;
    clang_visitChildren(
        c,
        [](CXCursor child, CXCursor, CXClientData data) {
          static_cast<std::vector<CXCursor>*>(data)->push_back(child);
          return CXChildVisit_Continue;
        },
        &out);
    return out;
  }

  static bool is_function(CXCursorKind k) {
    return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate ||
           k == CXCursor_Constructor || k == CXCursor_Destructor;
  }

  // Scope of `c`'s children: template parameters and the enclosing function.
  static Scope enter(CXCursor c, Scope scope) {
    for (CXCursor child : children(c))
      if (clang_getCursorKind(child) == CXCursor_TemplateTypeParameter)
        scope.template_params.insert(conformance::to_string(clang_getCursorSpelling(child)));
    if (is_function(clang_getCursorKind(c))) scope.function_usr = conformance::to_string(clang_getCursorUSR(c));
    return scope;
  }

  void walk(CXCursor c, const Scope& scope) {
    for (CXCursor child : children(c)) {
      if (!in_user_file(child)) continue;  // the shim, the C++ headers: not the user's code
      if (clang_isInvalidDeclaration(child)) continue;  // clang reported it; its tokens are no type
      const Scope inner = enter(child, scope);
      check(child, inner);
      walk(child, inner);
    }
  }

  void check(CXCursor c, const Scope& scope) {
    check_excluded_cxx(c);
    check_declaration(c, scope);
    check_versioned(c, scope);
    if (is_function(clang_getCursorKind(c)) && is_kernel(c)) check_kernel(ctx_, c, scope);
  }

  void excluded(CXCursor c, const std::string& what, std::string hint) const {
    report(loc(c), what + " not supported in Metal", kCxxRestrictions, std::move(hint));
  }

  // Location of the first token `word` in `c` (the keyword that makes it C++-only), else `c`'s.
  SourceLoc keyword(CXCursor c, const std::string& word) const {
    for (const Token& t : tokenize(ctx_.tu, clang_getCursorExtent(c)))
      if (t.text == word) return t.loc;
    return loc(c);
  }

  void check_excluded_cxx(CXCursor c) const {
    switch (clang_getCursorKind(c)) {
      case CXCursor_LambdaExpr:  // MLX's Metal 4 kernels (the *_nax files) use them
        if (before(4, 0))
          excluded(c, "lambda expressions are",
                   "write a helper function, or target MSL 4.0 (MLX's lambdas are Metal 4 only)");
        return;
      case CXCursor_CXXNewExpr:
        return excluded(c, "`new` is", "use a local variable, or memory passed in as a `device` buffer");
      case CXCursor_CXXDeleteExpr:
        return excluded(c, "`delete` is", "Metal has no heap: drop the allocation");
      case CXCursor_CXXThrowExpr:
        return excluded(c, "exceptions (`throw`) are", "report errors through an output buffer");
      case CXCursor_CXXTryStmt:
        return excluded(c, "exception handling (`try`/`catch`) is", "check conditions explicitly");
      case CXCursor_GotoStmt:
      case CXCursor_IndirectGotoStmt:
        return excluded(c, "`goto` is", "use structured control flow: break, continue, return");
      case CXCursor_CXXTypeidExpr:
        return excluded(c, "run-time type identification (`typeid`) is", "dispatch on types at compile time with templates");
      case CXCursor_CXXDynamicCastExpr:
        return excluded(c, "`dynamic_cast` is", "use static_cast, or templates instead of class hierarchies");
      case CXCursor_CXXBaseSpecifier:  // plain bases are accepted: see kCxxRestrictions
        if (clang_isVirtualBase(c))
          return excluded(c, "virtual base classes are", "derive without `virtual`, or make the base a member");
        return;
      case CXCursor_NamespaceRef:
        if (conformance::to_string(clang_getCursorSpelling(c)) == "std")
          return excluded(c, "the C++ standard library (`std::`) is", "use the metal:: equivalents from <metal_stdlib>");
        return;
      default:
        return;
    }
  }

  void check_storage(CXCursor c) const {
    if (clang_Cursor_getStorageClass(c) == CX_SC_Register)
      report(keyword(c, "register"), "the `register` storage class is not supported in Metal", kCxxRestrictions,
             "drop `register`");
    if (clang_getCursorTLSKind(c) != CXTLS_None)
      report(keyword(c, "thread_local"), "`thread_local` is not supported in Metal", kCxxRestrictions,
             "use a local variable; every GPU thread already has its own");
  }

  void check_double(const std::vector<Token>& tokens) const {
    for (const Token& t : tokens)
      if (t.text == "double")
        report(t.loc, "`double` is not supported in Metal", kScalarTypes,
               "use float (literals: `1.0f`; an unsuffixed `1.0` is fine, Metal has no double to make it)");
  }

  // A variable at file or namespace scope must be a `constant`.
  void check_program_scope(CXCursor c, const std::vector<Token>& type) const {
    const CXCursorKind parent = clang_getCursorKind(clang_getCursorSemanticParent(c));
    if (parent != CXCursor_TranslationUnit && parent != CXCursor_Namespace) return;
    for (const Token& t : type)
      if (t.text == "constant") return;
    SourceLoc at = type.empty() ? loc(c) : type.front().loc;
    for (const Token& t : type)
      if (is_address_space(t.text)) at = t.loc;
    report(at, "a program-scope variable must be declared in the `constant` address space", kConstantSpace,
           "write `constant` (and initialise it), or declare a `threadgroup` variable inside the kernel");
  }

  void check_declaration(CXCursor c, const Scope& scope) const {
    const CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_CXXMethod && clang_CXXMethod_isVirtual(c))
      report(keyword(c, "virtual"), "virtual functions are not supported in Metal", kCxxRestrictions,
             "use templates or a switch on a kind field");
    auto type = type_tokens(ctx_.tu, c);
    if (type.empty()) return;
    if (!is_function_pointer(c)) check_address_spaces(ctx_, type, scope);  // code has no address space
    check_double(type);
    check_versioned_words(type);
    if (kind == CXCursor_VarDecl) {
      check_storage(c);
      check_program_scope(c, type);
    }
  }

  void check_versioned(CXCursor c, const Scope& scope) {
    const CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_TypeRef || kind == CXCursor_TemplateRef) check_versioned_type(c);
    if (kind == CXCursor_CallExpr) record_call(c, scope);
    if (kind == CXCursor_VarDecl || kind == CXCursor_ParmDecl || kind == CXCursor_FieldDecl ||
        kind == CXCursor_TypedefDecl || kind == CXCursor_TypeAliasDecl)
      check_function_pointer(c);
  }

  bool before(int major, int minor) const { return ctx_.version < Version{major, minor}; }
  std::string version() const { return ctx_.options.msl_version; }

  // bfloat, bfloat4, packed_bfloat2, bfloat2x2, simdgroup_bfloat8x8 - not a user's `bfloat_block`.
  static bool is_bfloat_type(std::string name) {
    for (const char* prefix : {"packed_", "simdgroup_"})
      if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
    if (name.rfind("bfloat", 0) != 0) return false;
    return name.find_first_not_of("0123456789x", 6) == std::string::npos;
  }
  static bool is_simdgroup_matrix(const std::string& name) {
    return name == "simdgroup_matrix" || (name.rfind("simdgroup_", 0) == 0 && name.find("8x8") != std::string::npos);
  }

  void check_versioned_name(const std::string& name, const SourceLoc& at) const {
    if (before(3, 1) && is_bfloat_type(name))
      report(at, "`" + name + "` needs MSL 3.1; this file targets MSL " + version(), kScalarTypes,
             "target MSL 3.1 or later, or use half/float");
    if (before(2, 3) && is_simdgroup_matrix(name))
      report(at, "`" + name + "` (simdgroup_matrix) needs MSL 2.3; this file targets MSL " + version(), kSimdMatrix,
             "target MSL 2.3 or later");
  }

  // A type named through `using metal::bfloat;` has no TypeRef in libclang 14: read the words.
  void check_versioned_type(CXCursor ref) const {
    check_versioned_name(conformance::to_string(clang_getCursorSpelling(clang_getCursorReferenced(ref))), loc(ref));
  }
  void check_versioned_words(const std::vector<Token>& tokens) const {
    for (const Token& t : tokens)
      if (t.kind == CXToken_Identifier) check_versioned_name(t.text, t.loc);
  }

  static bool is_function_pointer(CXCursor c) {
    const CXCursorKind kind = clang_getCursorKind(c);
    CXType type = clang_getCursorType(c);
    if (kind == CXCursor_TypedefDecl || kind == CXCursor_TypeAliasDecl) type = clang_getTypedefDeclUnderlyingType(c);
    type = clang_getCanonicalType(type);
    if (type.kind != CXType_Pointer) return false;
    const CXTypeKind pointee = clang_getCanonicalType(clang_getPointeeType(type)).kind;
    return pointee == CXType_FunctionProto || pointee == CXType_FunctionNoProto;
  }

  void check_function_pointer(CXCursor c) const {
    if (before(2, 3) && is_function_pointer(c))
      report(loc(c), "function pointers need MSL 2.3; this file targets MSL " + version(), kVersionedCxx,
             "call the function directly, or select it with a template parameter");
  }

  void record_call(CXCursor call, const Scope& scope) {
    CXCursor callee = clang_getCursorReferenced(call);
    const std::string name = conformance::to_string(clang_getCursorSpelling(callee));
    if (before(2, 0) && (name.rfind("simd_", 0) == 0 || name == "simdgroup_barrier"))
      report(loc(call), "SIMD-group function `" + name + "` needs MSL 2.0; this file targets MSL " + version(),
             kSimdFunctions, "target MSL 2.0 or later");
    if (scope.function_usr.empty() || clang_Cursor_isNull(callee)) return;
    CXCursor templ = clang_getSpecializedCursorTemplate(callee);
    if (!clang_Cursor_isNull(templ)) callee = templ;
    calls_[scope.function_usr].push_back({conformance::to_string(clang_getCursorUSR(callee)), loc(call)});
  }

  bool reaches(const std::string& from, const std::string& to, std::set<std::string>& seen) const {
    if (from == to) return true;
    if (!seen.insert(from).second) return false;
    auto it = calls_.find(from);
    if (it == calls_.end()) return false;
    for (const Call& call : it->second)
      if (reaches(call.callee, to, seen)) return true;
    return false;
  }

  // Recursion (direct or through other functions) is allowed in compute functions from MSL 2.4.
  void check_recursion() const {
    if (!before(2, 4)) return;
    for (const auto& [caller, calls] : calls_)
      for (const Call& call : calls) {
        std::set<std::string> seen;
        if (reaches(call.callee, caller, seen))
          report(call.loc, "recursive calls need MSL 2.4 (compute functions only); this file targets MSL " + version(),
                 kVersionedCxx, "rewrite the recursion as a loop with an explicit stack");
      }
  }
};

}  // namespace

void check_conformance(CXTranslationUnit tu, const ConformanceOptions& options, support::Diagnostics& diags) {
  Reporter reporter(diags);
  const Context ctx{tu, options, parse_version(options.msl_version), reporter};
  const auto incs = inclusions(tu);
  auto users = user_files(incs, file_name(clang_getFile(tu, options.main_file.c_str())));
  TokenIndex tokens(tu, users);
  Checker checker(ctx, std::move(users));
  checker.run(incs);
}

}  // namespace mtlgen::msl
