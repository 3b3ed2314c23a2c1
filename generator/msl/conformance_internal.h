#pragma once
// Shared pieces of the Metal conformance checker: conformance_tokens.cpp (token helpers),
// conformance_address_space.cpp, conformance_kernel.cpp and conformance.cpp (the walk).
// Address spaces and [[attributes]] are not in the AST (the parse makes them empty macros or
// drops them), so several rules read the tokens each declaration was spelled with.
#include <clang-c/Index.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "msl/conformance.h"
#include "support/diagnostics.h"

namespace mtlgen::msl::conformance {

using support::SourceLoc;

// Where each rule comes from. Section numbers are given only where a source confirmed them
// (see the comment above each); otherwise the section is named by its title.
struct Citation {
  const char* text;
};

// "Metal and C++14" > "Restrictions": lambdas, recursion, dynamic_cast, typeid, new/delete,
// noexcept, goto, register/thread_local, virtual functions, derived classes, exceptions, the C++
// standard library. Numbered 1.4.4 in naga's MSL keyword list (gfx-rs/wgpu
// naga/src/back/msl/keywords.rs) and 1.5.4 in a summary of the 3.2 specification
// (gostrobrod.medium.com "MTL S01E03"); the number moves between versions, so cite the title.
// "Derived classes" is read as class hierarchies with virtual dispatch: Apple's compiler builds
// MLX's traits deriving from bool_constant/integral_constant (steel/utils/type_traits.h), so
// only virtual functions and virtual bases are reported, not plain non-virtual inheritance.
inline constexpr Citation kCxxRestrictions{
    "Metal Shading Language Specification, \"Metal and C++14\" > \"Restrictions\""};
// 2.1 "Scalar Data Types" (number from naga's keyword list): no double, long double; bfloat
// from MSL 3.1 (rasyid.codes "Metal Shading Language part 3"; MTLDataType.bfloat is macOS 14).
inline constexpr Citation kScalarTypes{"Metal Shading Language Specification 2.1 \"Scalar Data Types\""};
// Chapter 4 "Address Spaces" (number from naga): "All arguments to a graphics or kernel function
// that are a pointer or reference to a type need to be declared with an address space
// attribute"; kernel arguments: device, threadgroup, threadgroup_imageblock or constant.
inline constexpr Citation kAddressSpaces{"Metal Shading Language Specification 4 \"Address Spaces\""};
// "constant Address Space": "Variables in program scope must be declared in the constant
// address space and initialized during the declaration statement."
inline constexpr Citation kConstantSpace{
    "Metal Shading Language Specification, 4 \"Address Spaces\" > \"constant Address Space\""};
// 5.1 "Functions" (number from naga): a kernel function returns void.
inline constexpr Citation kFunctions{"Metal Shading Language Specification 5.1 \"Functions\" (kernel functions)"};
// Kernel input attributes table (chapter 5 "Attributes for Built-in Variables"); types per
// builtin as in JuliaGPU/Metal.jl src/device/intrinsics/arguments.jl: position-like builtins
// take ushort/uint and their 2- and 3-vectors, index/count builtins ushort or uint.
inline constexpr Citation kBuiltins{
    "Metal Shading Language Specification, \"Attributes for Built-in Variables\" (kernel function inputs)"};
// Apple's Metal feature set tables (developer.apple.com/metal/limits): 31 entries in the buffer
// argument table and in the threadgroup memory argument table, so indices 0..30.
inline constexpr Citation kArgumentTables{
    "Metal feature set tables, \"Maximum number of entries in the buffer argument table\" (31)"};
// Function pointers from MSL 2.3, recursion from 2.4 in compute functions only (monobook.org
// "MetalとC++の違い", summarising the Restrictions section).
inline constexpr Citation kVersionedCxx = kCxxRestrictions;
// SIMD-group functions: MSL 2.0 on macOS (SPIRV-Cross commit "Some support for subgroups is
// present starting in Metal 2.0"). simdgroup_matrix: 2.3 per the brief; not confirmed.
inline constexpr Citation kSimdFunctions{"Metal Shading Language Specification, \"SIMD-Group Functions\""};
inline constexpr Citation kSimdMatrix{"Metal Shading Language Specification, \"SIMD-Group Matrix Functions\""};

struct Token {
  std::string text;
  CXTokenKind kind = CXToken_Punctuation;
  SourceLoc loc;
  unsigned offset = 0;  // in its file; orders tokens
};

// Spelled tokens of `range`, as clang_tokenize gives them; a macro that spells an address space
// reads as that word (while a TokenIndex lives).
std::vector<Token> tokenize(CXTranslationUnit tu, CXSourceRange range);

// Every file the checks read, lexed once, and the `#define CONST constant`-style macros of the
// user's `files`, which tokenize() reads as the address space they spell; for its lifetime (one
// check_conformance call on this thread). Each clang_tokenize or clang_getLocationForOffset call
// scans every macro expansion of the translation unit: per declaration, that was most of a
// minute on MLX's files of 2,000 instantiations.
class TokenIndex {
 public:
  TokenIndex(CXTranslationUnit tu, const std::set<std::string>& files);
  ~TokenIndex();
  TokenIndex(const TokenIndex&) = delete;
  TokenIndex& operator=(const TokenIndex&) = delete;

  struct File {
    std::vector<Token> tokens;  // by offset, as written (macros not read as address spaces)
    std::vector<unsigned> ends;  // where each token ends
  };
  const File& file(CXFile f);
  const std::map<std::string, std::string>& address_space_macros() const { return macros_; }

 private:
  CXTranslationUnit tu_;
  std::map<CXFile, File> files_;
  std::map<std::string, std::string> macros_;
};
SourceLoc to_loc(CXSourceLocation location);
std::string to_string(CXString s);  // takes ownership
bool is_address_space(const std::string& word);

// The tokens naming a declaration's type: from its first token up to its name (parameters,
// variables, fields, functions), the aliased type (typedef, using), or the target type (casts).
std::vector<Token> type_tokens(CXTranslationUnit tu, CXCursor cursor);

// One [[name(args)]] item spelled after a parameter.
struct Attribute {
  std::string name;
  std::vector<Token> args;
  SourceLoc loc;
};
std::vector<Attribute> attributes_in(const std::vector<Token>& tokens);

// Parameter tokens of a function declaration, one list per parameter (attributes included).
std::vector<std::vector<Token>> parameter_tokens(CXTranslationUnit tu, CXCursor function);

struct Version {
  int major = 0, minor = 0;
  friend auto operator<=>(const Version&, const Version&) = default;
};
Version parse_version(const std::string& text);  // "3.1" -> {3, 1}

// Reports each finding once (the same token can be reached from nested declarations).
class Reporter {
 public:
  explicit Reporter(support::Diagnostics& diags) : diags_(diags) {}
  void report(const SourceLoc& loc, const std::string& what, const Citation& where, std::string hint);

 private:
  support::Diagnostics& diags_;
  std::set<std::tuple<std::string, int, int, std::string>> seen_;
};

// What a rule needs to know about where it is.
struct Scope {
  std::set<std::string> template_params;  // type parameters of enclosing templates
  std::string function_usr;               // enclosing function, "" at file scope
};

struct Context {
  CXTranslationUnit tu;
  const ConformanceOptions& options;
  Version version;
  Reporter& reporter;
};

// Pointer (*) and reference (&, &&) types without an address space in `tokens`.
void check_address_spaces(const Context& ctx, const std::vector<Token>& tokens, const Scope& scope);

// Kernel entry points: void return, [[buffer(n)]] range and uniqueness, threadgroup arguments,
// builtin types, kernel pointer arguments in an allowed address space.
bool is_kernel(CXCursor cursor);
void check_kernel(const Context& ctx, CXCursor kernel, const Scope& scope);

}  // namespace mtlgen::msl::conformance
