#pragma once
// Internals of the MSL front end shared by its translation units (not part of the contract).
#include <clang-c/Index.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "msl/msl_unit.h"

namespace mtlgen::msl {

// Where the embedded shim lives for clang: a directory that exists only as CXUnsavedFiles.
inline constexpr std::string_view kShimDir = "/.mtlgen-embedded/shim";
// `[[threadgroup(n)]]` as the parse and the simulator spell it (the shim's `threadgroup` is an
// empty macro); same length as `threadgroup`.
inline constexpr std::string_view kThreadgroupAttribute = "mtlsim_tgrp";

// The pre-pass makes `[[function_constant(e)]]` on a declaration the enumerator
// `<kFunctionConstantIndex>N = (e)` after it, located at the attribute (msl_prepass.cpp).
inline constexpr std::string_view kFunctionConstantIndex = "__mtl_function_constant_";

std::string str(CXString s);  // takes ownership
// clang_visitChildren with a callable (msl_describe.cpp).
void visit_children(CXCursor c, const std::function<CXChildVisitResult(CXCursor)>& f);
std::string spelling(CXCursor c);
std::string spelling(CXType t);

// One token of a user file, with its byte range in that file.
// Owns libclang's index and translation unit for one parse (the MSL parse, the precompiled
// headers' save and probe, the reference's C++ check, constant expressions).
class ClangSession {
 public:
  ClangSession() = default;
  ClangSession(const ClangSession&) = delete;
  ClangSession& operator=(const ClangSession&) = delete;
  ~ClangSession();
  // `exclude_pch_declarations`: only then are explicit function-template instantiations visited
  // as top-level FunctionDecls (checked with clang 14).
  CXErrorCode parse(const std::string& main_path, const std::vector<std::string>& args,
                    const std::vector<CXUnsavedFile>& files, unsigned flags, bool exclude_pch_declarations = true);
  CXErrorCode reparse(std::vector<CXUnsavedFile> files);
  bool has_errors() const;  // a diagnostic of error severity (or no translation unit)
  CXTranslationUnit tu = nullptr;

 private:
  CXIndex index_ = nullptr;
};

struct Token {
  std::string text;
  CXTokenKind kind = CXToken_Punctuation;
  unsigned begin = 0;
  unsigned end = 0;
};

// A file the user wrote (the main file or a local header): its text and tokens.
struct UserFile {
  std::string path;      // as clang names it
  std::string display;   // as diagnostics name it (ParseOptions::file for the main file)
  std::string text;      // as parsed (after the pre-pass: same length as the original)
  std::vector<Token> tokens;
  bool is_main = false;

  // Index of the first token starting at or after `offset` (tokens.size() if none).
  size_t token_at(unsigned offset) const;
  std::string_view slice(unsigned begin, unsigned end) const;
};

// A file location resolved to where the user sees it (macro expansions: the invocation).
struct FilePos {
  const UserFile* file = nullptr;  // null: not in a user file (the shim, the system headers)
  unsigned offset = 0;
  SourceLoc loc;
};

// A replacement in a user file for the simulator's copy (original offsets).
struct Edit {
  unsigned begin = 0;
  unsigned end = 0;
  std::string text;
};

// State of one parse, shared by the describing passes.
class Context {
 public:
  Context(CXTranslationUnit tu, std::string main_path, std::string display);

  CXTranslationUnit tu() const { return tu_; }
  FilePos pos(CXSourceLocation l);
  FilePos pos(CXCursor c) { return pos(clang_getCursorLocation(c)); }
  FilePos begin(CXCursor c) { return pos(clang_getRangeStart(clang_getCursorExtent(c))); }
  FilePos end(CXCursor c) { return pos(clang_getRangeEnd(clang_getCursorExtent(c))); }
  bool in_user_file(CXCursor c) { return pos(c).file != nullptr; }
  const std::map<std::string, UserFile>& files() const { return files_; }
  // The `#define name` among the user files met so far: its file and the index of `define`.
  std::optional<std::pair<const UserFile*, size_t>> definition_of_macro(const std::string& name);
  const std::string& main_display() const { return display_; }

  std::map<std::string, std::vector<Edit>> edits;  // by UserFile::path
  std::map<std::string, std::optional<long long>> evaluated;  // evaluate_integer()'s, by expression

 private:
  const UserFile* user_file(CXFile f);
  CXTranslationUnit tu_;
  std::string main_path_;
  std::string display_;
  std::map<std::string, UserFile> files_;  // user files met so far, by path
  std::map<std::string, bool> is_user_;     // by path
  std::map<std::string, std::pair<const UserFile*, size_t>> macros_;  // indexed on first use
  size_t macros_indexed_files_ = 0;
};

// A header the main file includes (transitively) from its own directory or an include directory.
struct LocalHeader {
  std::string text;  // as read
  std::string key;   // where a copy of the tree puts it, relative to the main file's copy
};

// Explicit instantiations of kernels, which the simulator's modules go without
// (msl_instantiations.cpp): each on lines of its own, or a macro invocation on lines of its own
// that writes nothing else.
struct InstantiationLines {
  std::string file;  // clang's name
  int first = 0;     // lines, 1-based, inclusive
  int last = 0;
};

// What a Unit keeps of its parse for simulator_source() (the translation unit is gone by then).
struct Unit::Impl {
  std::string main_path;                       // clang's name of the main file
  std::map<std::string, LocalHeader> headers;  // local headers, by clang's name
  std::map<std::string, std::vector<Edit>> edits;  // by clang's file name
  std::map<std::string, std::string> cuda_texts;   // by clang's file name (msl_cuda_rewrite.cpp)
  LoopForm loop_form;                              // msl_loop_rewrite.cpp
  std::vector<InstantiationLines> instantiation_lines;  // msl_instantiations.cpp
};

// Index of the first of the decl-specifier words (`threadgroup`, `const`, `static`, ...) that
// end right before tokens[first]; they are empty macros or keywords that extents leave out.
size_t specifier_start(const UserFile& f, size_t first);

// Whether the decl-specifier words around f.tokens[i] (`static const constant`) already say
// `const`, so that `constant` cannot become a second one (msl_rewrite.cpp).
bool says_const_beside(const UserFile& f, size_t i);

// End (exclusive token index) of the `#define` whose `define` is f.tokens[i] (msl_params.cpp).
size_t define_end(const UserFile& f, size_t i);

// The value of an integer constant expression written in an attribute (`BASE + 1`), the user
// files' macros expanded, as clang evaluates it; nullopt when it is none (msl_constant_expr.cpp).
std::optional<long long> evaluate_integer(Context& ctx, const std::string& expression);

// Pre-pass (msl_prepass.cpp): MSL attribute spellings clang would drop, respelled in place
// with the same length so every line and column stays the user's.
std::string respell_msl_attributes(std::string text);
// The -D definitions that give the respelled words their meaning in the parse.
std::vector<std::string> prepass_macro_definitions();
// What the parse includes before the user's file (-include), under kShimDir.
inline constexpr std::string_view kParsePrelude = "mtlgen_parse_prelude.h";
std::string parse_prelude();
// `header` (text) precompiled by libclang with `args` into a temporary file, once per process and
// header and arguments (msl_precompiled_headers.cpp): its path, "" where libclang could not save it.
std::string precompiled_header(const std::string& header, const std::vector<std::string>& args,
                               const std::vector<CXUnsavedFile>& files);
// `args` with the `-include` of the parse prelude replaced by `-include-pch` of its precompiled
// form, made once per process and set of arguments that shape it (msl_precompiled_headers.cpp);
// `args` as they are where libclang could not save one. `files`: the shim, in memory.
std::vector<std::string> with_precompiled_prelude(const std::vector<std::string>& args,
                                                  const std::vector<CXUnsavedFile>& files);

struct SourceRange {
  std::string file;
  unsigned begin = 0;
  unsigned end = 0;
};

// Later declarations that equal an earlier one in their scope but for address-space words: the
// same C++ function once the parse erases them (msl_overloads.cpp).
std::vector<SourceRange> address_space_twins(Context& ctx);

// Clang's errors as located msl_syntax diagnostics (msl_diagnostics.cpp), except those inside
// `ignored` (address-space twins).
void report_clang_diagnostics(Context& ctx, support::Diagnostics& diags, const std::vector<SourceRange>& ignored);

// Description passes (msl_describe.cpp, msl_params.cpp, msl_layout.cpp).
// Where a body's threadgroup declaration lies, for the simulator rewrite.
struct ThreadgroupSite {
  std::string file;     // UserFile::path
  unsigned begin = 0;   // first decl-specifier word (`threadgroup`, `const`, ...)
  unsigned end = 0;     // end of the declarator and its initializer (before `;` or `,`)
  std::string name;
  std::string type;     // specifiers without `threadgroup`, plus the array suffix
};
struct Description {
  std::vector<EntryPoint> entry_points;
  std::vector<FunctionConstant> function_constants;
  std::vector<ThreadgroupVariable> threadgroup_variables;
  std::vector<ThreadgroupSite> threadgroup_sites;
  std::vector<SourceRange> function_constant_decls;  // `constant` stays assignable there
  std::vector<SourceRange> address_space_twins;      // left out of the simulator's copies
  std::vector<SourceRange> plain_kernel_keywords;    // `kernel` of non-template kernel definitions
};
Description describe(Context& ctx);
std::vector<KernelParam> describe_params(Context& ctx, CXCursor function);
bool is_user_record(CXType t);  // declared in a user file (not the shim, not a system header)
std::optional<StructLayout> metal_struct_layout(CXType record);
std::string msl_type_name(std::string clang_spelling);

// Simulator rewrite (msl_rewrite.cpp): fills ctx.edits from the description and the tokens.
void plan_simulator_edits(Context& ctx, const Description& d);
// GNU array range designators of local arrays, in ctx.edits (msl_range_designators.cpp).
void rewrite_range_designators(Context& ctx);
std::string apply_edits(const std::string& text, std::vector<Edit> edits);

// Loop form (msl_loop_rewrite.cpp): each kernel's threadgroup as loops over its threads, from
// the original text of the file that defines it (the main file's `original`, or one of `headers`)
// and the simulator edits already planned.
LoopForm plan_loop_form(Context& ctx, const Description& d, const std::string& original,
                        const std::map<std::string, LocalHeader>& headers,
                        const std::optional<std::set<std::string>>& entry_points);

// Errors split by the kernels they stop (msl_kernel_errors.cpp): the entries of unreadable
// kernels are taken out of `entries`; `elsewhere` holds errors in no kernel's declarations.
struct KernelErrors {
  std::vector<UnreadableKernel> kernels;
  std::vector<support::Diagnostic> elsewhere;
};
KernelErrors split_errors_by_kernel(Context& ctx, std::vector<EntryPoint>& entries,
                                    const std::vector<support::Diagnostic>& errors);

// Where they are (msl_instantiations.cpp): the droppable ones, with their byte ranges and the
// host names they (or the macro invocation writing them) declare.
struct InstantiationSite {
  InstantiationLines lines;
  unsigned begin = 0;  // byte range in the file, as parsed
  unsigned end = 0;
  std::set<std::string> host_names;
};
std::vector<InstantiationSite> find_instantiation_sites(Context& ctx);
std::vector<InstantiationLines> find_instantiation_lines(Context& ctx);
// The table simulator_source() ends with: one comment after the last newline; files by the key
// of their copy (`.` for the main file), those without one left out.
std::string instantiation_table(const std::vector<InstantiationLines>& lines,
                                const std::map<std::string, std::string>& keys);

// CUDA rewrite (msl_cuda_rewrite.cpp): every user file's CUDA flavour, by UserFile::path.
std::map<std::string, std::string> plan_cuda_texts(Context& ctx, const Description& d);

}  // namespace mtlgen::msl
