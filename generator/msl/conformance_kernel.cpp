// Metal conformance checks, kernel signatures: what Metal accepts as a compute entry point's
// return type and arguments.
#include <map>
#include <optional>

#include "msl/conformance_internal.h"

namespace mtlgen::msl {

namespace conformance {

namespace {

constexpr int kArgumentTableEntries = 31;  // buffer and threadgroup tables: indices 0..30

// Builtins that describe a position or size in up to 3 dimensions take ushort or uint and their
// 2- and 3-vectors; the rest (indices and counts) a scalar ushort or uint.
const std::set<std::string> kPositionBuiltins = {
    "thread_position_in_grid",  "thread_position_in_threadgroup",   "threadgroup_position_in_grid",
    "threads_per_grid",         "threads_per_threadgroup",          "threadgroups_per_grid",
    "grid_origin",              "grid_size",                        "dispatch_threads_per_threadgroup"};
const std::set<std::string> kScalarBuiltins = {
    "thread_index_in_threadgroup",   "thread_index_in_simdgroup",     "thread_index_in_quadgroup",
    "simdgroup_index_in_threadgroup", "quadgroup_index_in_threadgroup", "simdgroups_per_threadgroup",
    "quadgroups_per_threadgroup",    "threads_per_simdgroup",         "thread_execution_width",
    "dispatch_simdgroups_per_threadgroup", "dispatch_quadgroups_per_threadgroup"};

struct Param {
  CXCursor cursor;
  std::vector<Token> tokens;  // as spelled, attributes included
  std::vector<Attribute> attributes;
};

std::vector<Param> params_of(const Context& ctx, CXCursor kernel) {
  std::vector<CXCursor> cursors;
  clang_visitChildren(
      kernel,
      [](CXCursor c, CXCursor, CXClientData data) {
        if (clang_getCursorKind(c) == CXCursor_ParmDecl) static_cast<std::vector<CXCursor>*>(data)->push_back(c);
        return CXChildVisit_Continue;
      },
      &cursors);
  auto spelled = parameter_tokens(ctx.tu, kernel);
  std::vector<Param> params;
  for (size_t i = 0; i < cursors.size() && i < spelled.size(); ++i)
    params.push_back({cursors[i], spelled[i], attributes_in(spelled[i])});
  return params;
}

bool spells(const std::vector<Token>& tokens, const std::string& word) {
  for (const Token& t : tokens) {
    if (t.text == "[") return false;  // attributes follow the type
    if (t.text == word) return true;
  }
  return false;
}

std::optional<long> integer_argument(const Attribute& a) {
  if (a.args.size() != 1 || a.args[0].kind != CXToken_Literal) return std::nullopt;
  try {
    return std::stol(a.args[0].text, nullptr, 0);
  } catch (...) {
    return std::nullopt;
  }
}

// Canonical spellings of what a builtin may be declared as (in the shim, vectors are metal::vec).
bool allowed_builtin_type(CXType type, bool per_dimension) {
  CXType canonical = clang_getCanonicalType(type);
  if (canonical.kind == CXType_UInt || canonical.kind == CXType_UShort) return true;
  if (!per_dimension) return false;
  const std::string spelled = to_string(clang_getTypeSpelling(canonical));
  for (const char* element : {"unsigned int", "unsigned short"})
    for (int n : {2, 3})
      if (spelled.find("vec<" + std::string(element) + ", " + std::to_string(n) + ">") != std::string::npos)
        return true;
  return false;
}

void check_return_type(const Context& ctx, CXCursor kernel) {
  if (clang_getCursorResultType(kernel).kind == CXType_Void) return;
  auto tokens = type_tokens(ctx.tu, kernel);
  SourceLoc at = to_loc(clang_getCursorLocation(kernel));
  for (const Token& t : tokens)
    if (t.kind != CXToken_Punctuation && t.text != "kernel" && t.text != "template" && t.text != "__attribute__" &&
        t.text != "annotate" && t.kind != CXToken_Literal) {
      at = t.loc;
      break;
    }
  ctx.reporter.report(at, "a kernel function must return void", kFunctions,
                      "write results through a `device` buffer argument and declare the kernel `void`");
}

void check_index(const Context& ctx, const Attribute& a, std::map<long, SourceLoc>& used, const char* table,
                 bool guarded) {
  auto index = integer_argument(a);
  if (!index) return;  // a macro or constant expression: the front end resolves it
  const SourceLoc& at = a.args[0].loc;
  if (*index < 0 || *index >= kArgumentTableEntries) {
    ctx.reporter.report(at,
                        "[[" + a.name + "(" + std::to_string(*index) + ")]] is outside the " + table +
                            " argument table (indices 0..30)",
                        kArgumentTables, "use an index from 0 to 30; pack small arguments into one struct");
    return;
  }
  if (guarded) return;  // arguments under different function constants may share an index
  auto [it, inserted] = used.emplace(*index, at);
  if (!inserted)
    ctx.reporter.report(at,
                        "[[" + a.name + "(" + std::to_string(*index) + ")]] is already used by another argument of this kernel",
                        kArgumentTables, "give every " + std::string(table) + " argument its own index");
}

void check_builtin(const Context& ctx, const Param& p, const Attribute& a, const Scope& scope) {
  const bool per_dimension = kPositionBuiltins.count(a.name) > 0;
  if (!per_dimension && !kScalarBuiltins.count(a.name)) return;
  for (const Token& t : p.tokens)
    if (scope.template_params.count(t.text)) return;  // known only once instantiated
  if (allowed_builtin_type(clang_getCursorType(p.cursor), per_dimension)) return;
  const std::string type = to_string(clang_getTypeSpelling(clang_getCursorType(p.cursor)));
  ctx.reporter.report(p.tokens.empty() ? a.loc : p.tokens.front().loc,
                      "[[" + a.name + "]] cannot be declared as `" + type + "`", kBuiltins,
                      per_dimension ? "declare it as uint, uint2 or uint3 (or ushort, ushort2, ushort3)"
                                    : "declare it as uint (or ushort)");
}

// A kernel argument that is a pointer or reference must live in device, constant or threadgroup
// memory (thread memory belongs to one thread, so the host cannot bind it); a threadgroup
// argument is memory the host sizes, so it cannot be a value.
void check_argument_space(const Context& ctx, const Param& p) {
  const bool indirect = spells(p.tokens, "*") || spells(p.tokens, "&");
  if (spells(p.tokens, "thread") && indirect)
    ctx.reporter.report(p.tokens.front().loc, "a kernel argument cannot point into the `thread` address space",
                        kAddressSpaces, "use `device` (or `constant` for read-only data)");
  if (spells(p.tokens, "threadgroup") && !indirect)
    ctx.reporter.report(p.tokens.front().loc, "a `threadgroup` kernel argument must be a pointer or reference",
                        kAddressSpaces, "declare it `threadgroup T* name [[threadgroup(n)]]`");
}

}  // namespace

bool is_kernel(CXCursor cursor) {
  bool found = false;
  clang_visitChildren(
      cursor,
      [](CXCursor c, CXCursor, CXClientData data) {
        if (clang_getCursorKind(c) == CXCursor_AnnotateAttr && to_string(clang_getCursorSpelling(c)) == "mtl_kernel") {
          *static_cast<bool*>(data) = true;
          return CXChildVisit_Break;
        }
        return CXChildVisit_Continue;
      },
      &found);
  return found;
}

void check_kernel(const Context& ctx, CXCursor kernel, const Scope& scope) {
  check_return_type(ctx, kernel);
  std::map<long, SourceLoc> buffers, threadgroups;
  for (const Param& p : params_of(ctx, kernel)) {
    check_argument_space(ctx, p);
    bool guarded = false;
    for (const Attribute& a : p.attributes) guarded = guarded || a.name == "function_constant";
    for (const Attribute& a : p.attributes) {
      if (a.name == "buffer") check_index(ctx, a, buffers, "buffer", guarded);
      // The parse may respell [[threadgroup(n)]] (its word is an empty macro) as mtlsim_tgrp.
      if (a.name == "threadgroup" || a.name == "mtlsim_tgrp")
        check_index(ctx, a, threadgroups, "threadgroup", guarded);
      check_builtin(ctx, p, a, scope);
    }
  }
}

}  // namespace conformance

}  // namespace mtlgen::msl
