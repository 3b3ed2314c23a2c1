// The simulator's copy of the user's files: the same lines, with what g++ and the fiber
// runtime need respelled at locations the AST and the tokens give (never by regex over text).
#include <algorithm>

#include <fmt/format.h>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

bool is_decl_specifier(const std::string& w) {
  return w == "static" || w == "const" || w == "constexpr" || w == "volatile" || w == "inline" || w == "device" ||
         w == "thread" || w == "threadgroup" || w == "constant";
}

}  // namespace

// Whether the decl-specifier words around tokens[i] (`static const constant`, MLX's
// `static constant constexpr const`) already say `const`: a second one is an error in C++.
bool says_const_beside(const UserFile& f, size_t i) {
  for (size_t j = i; j > 0 && is_decl_specifier(f.tokens[j - 1].text); --j)
    if (f.tokens[j - 1].text == "const") return true;
  for (size_t j = i + 1; j < f.tokens.size() && is_decl_specifier(f.tokens[j].text); ++j)
    if (f.tokens[j].text == "const") return true;
  return false;
}

namespace {

bool inside(const std::vector<SourceRange>& ranges, const std::string& file, unsigned offset) {
  return std::any_of(ranges.begin(), ranges.end(), [&](const SourceRange& r) {
    return r.file == file && r.begin <= offset && offset < r.end;
  });
}

// `constant` -> `const   ` (same width; the shim's `constant` is empty and would drop the
// const-ness that lets a `const P` bind to `constant P&`), or blanks where a `const` is already
// beside it, except in function-constant declarations, which the simulator assigns once per
// variant.
void respell_constant(const UserFile& f, const Description& d, std::vector<Edit>& edits) {
  for (size_t i = 0; i < f.tokens.size(); ++i) {
    const Token& t = f.tokens[i];
    if (t.kind != CXToken_Identifier || t.text != "constant" || inside(d.function_constant_decls, f.path, t.begin))
      continue;
    edits.push_back({t.begin, t.end, says_const_beside(f, i) ? "        " : "const   "});
  }
}

// An overload on address space that equals an earlier one once spaces are erased (msl_overloads.cpp).
void drop_address_space_twins(const UserFile& f, const Description& d, std::vector<Edit>& edits) {
  for (const SourceRange& r : d.address_space_twins)
    if (r.file == f.path) edits.push_back({r.begin, r.end, ""});
}

// `[[threadgroup(n)]]` -> `[[mtlsim_tgrp(n)]]`: the shim's `threadgroup` is an empty macro.
// The pre-pass already respelled it for the parse, so the tokens show where.
void respell_threadgroup_attribute(const UserFile& f, std::vector<Edit>& edits) {
  for (size_t i = 2; i < f.tokens.size(); ++i)
    if (f.tokens[i].text == kThreadgroupAttribute && f.tokens[i - 1].text == "[" && f.tokens[i - 2].text == "[")
      edits.push_back({f.tokens[i].begin, f.tokens[i].end, std::string(kThreadgroupAttribute)});
}

// `threadgroup T tile[BM][BK + 1]` -> a reference to storage shared by the threadgroup's threads.
// An initializer goes with the declarator: Metal does not run it (ThreadgroupVariable::initializer).
void rewrite_threadgroup_variables(const UserFile& f, const Description& d, std::vector<Edit>& edits) {
  for (const ThreadgroupSite& s : d.threadgroup_sites) {
    if (s.file != f.path) continue;
    edits.push_back({s.begin, s.end,
                     fmt::format("auto& {0} = ::mtlsim::threadgroup_local<{1}>([]{{}}, \"{0}\")", s.name, s.type)});
  }
}

// `kernel` -> `static` (same width) where Description::plain_kernel_keywords says: the launchers
// and the loop form that call it are in the same translation unit.
void make_plain_kernels_static(const UserFile& f, const Description& d, std::vector<Edit>& edits) {
  for (const SourceRange& r : d.plain_kernel_keywords)
    if (r.file == f.path) edits.push_back({r.begin, r.end, "static"});
}

}  // namespace

void plan_simulator_edits(Context& ctx, const Description& d) {
  for (const auto& [path, file] : ctx.files()) {
    std::vector<Edit>& edits = ctx.edits[path];
    drop_address_space_twins(file, d, edits);  // first: the edits inside them are then skipped
    rewrite_threadgroup_variables(file, d, edits);
    respell_constant(file, d, edits);
    respell_threadgroup_attribute(file, edits);
    make_plain_kernels_static(file, d, edits);
  }
  rewrite_range_designators(ctx);
}

// Applies non-overlapping edits (the first planned wins); a replaced range's newlines follow
// its replacement so that every later line keeps its number.
std::string apply_edits(const std::string& text, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  std::string out;
  size_t at = 0;
  for (const Edit& e : edits) {
    if (e.begin < at || e.end > text.size()) continue;
    out.append(text, at, e.begin - at);
    out += e.text;
    out.append(static_cast<size_t>(std::count(text.begin() + e.begin, text.begin() + e.end, '\n')), '\n');
    at = e.end;
  }
  out.append(text, at, std::string::npos);
  return out;
}

}  // namespace mtlgen::msl
