// The loop form of each kernel (issue 17 item 2; Unit::loop_form): a second function beside the
// kernel that runs a whole threadgroup, each barrier-free region as a loop over the threads in
// the run's lane order (mtlsim/msl_loops.h), as PoCL and MCUDA compile work-groups. It is made
// only where the structure is plain to see; otherwise the kernel keeps running as one fiber per
// thread, and the refusal says why.
//
// What qualifies: every sync point (threadgroup_barrier, simdgroup_barrier, simd_* and quad_*
// functions, and calls of helpers that contain one) is a statement at the top level of the body,
// either the call itself or the whole right-hand side of `x = ...;` or of a one-variable
// declaration, or sits that way inside a `for` loop or `if` whose path every thread shares
// (msl_loop_rewrite_control.cpp: its header then runs once per threadgroup, between the regions).
// Helpers called that way are inlined (their own bodies must qualify; their names
// get the prefix mtlsim_h<N>_), and a `return` may only follow the last sync point (a thread that
// left earlier would be missing from a barrier: the fiber path reports that), end a uniform
// branch of the kernel, or be a helper's `if (cond) return;` on a uniform `cond`
// (msl_loop_rewrite_control.cpp). Threadgroup variables declared in bodies are declared once at the
// form's top; kernel parameters a body assigns are copied per thread (msl_loop_rewrite_flatten.cpp).
//
// What the form looks like: values declared at the top level and used in a later region live in
// per-thread frames (`auto* mtlsim_f_x`, one slot per thread) and are bound by reference in each
// region; a sync point's call ends its region (the runtime only records the arrival and completes
// it with the last one) and its result is read at the head of the next region. Every copied
// statement is preceded by `#line N`, so reports name the user's lines.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "msl/loop_form_revision.h"
#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

void visit(CXCursor c, const std::function<CXChildVisitResult(CXCursor)>& f) {
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        return (*static_cast<const std::function<CXChildVisitResult(CXCursor)>*>(data))(child);
      },
      const_cast<std::function<CXChildVisitResult(CXCursor)>*>(&f));
}

std::vector<CXCursor> children(CXCursor c) {
  std::vector<CXCursor> out;
  visit(c, [&](CXCursor child) {
    out.push_back(child);
    return CXChildVisit_Continue;
  });
  return out;
}

bool is_sync_builtin(const std::string& name) {
  return name == "threadgroup_barrier" || name == "simdgroup_barrier" || name.rfind("simd_", 0) == 0 ||
         name.rfind("quad_", 0) == 0 || is_matrix_collective(name);
}

// simdgroup_matrix's collectives (mtlsim/msl_simdgroup_matrix.h) complete inside the call and
// write through its arguments: a region cannot end at one, so a kernel that reaches one is refused.
bool is_matrix_collective(const std::string& name) {
  return name == "simdgroup_load" || name == "simdgroup_store" || name == "simdgroup_multiply" ||
         name == "simdgroup_multiply_accumulate";
}

bool is_function(CXCursorKind k) { return k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate; }

// Parentheses and implicit conversions around an expression.
CXCursor strip(CXCursor c) {
  for (;;) {
    CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr) return c;
    std::vector<CXCursor> kids = children(c);
    if (kids.size() != 1) return c;
    c = kids[0];
  }
}

// Whether `word` occurs in `text` as a whole word (`static`, not `static_cast`).
void for_each_identifier(const std::string& text, const std::function<bool(const std::string&, bool)>& fn) {
  for (size_t i = 0; i < text.size();) {
    if (!(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    const bool member = i > 0 && (text[i - 1] == '.' || (i > 1 && text.compare(i - 2, 2, "->") == 0));
    if (!fn(text.substr(i, j - i), member)) return;
    i = j;
  }
}

bool has_word(const std::string& text, const std::string& word) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !is_word(text[at - 1])) && (end == text.size() || !is_word(text[end]))) return true;
  }
  return false;
}

namespace {
bool is_value(CXCursorKind k) {
  return k == CXCursor_VarDecl || k == CXCursor_ParmDecl || k == CXCursor_FieldDecl || k == CXCursor_NonTypeTemplateParameter;
}
}  // namespace

// The name a call calls; in a template, a dependent call names it only in its callee's
// OverloadedDeclRef (`tg_sum<TG>(x)`, `simd_sum(value)` with `value` of type T). "" for a cast.
std::string callee_name(CXCursor call) {
  std::string name = spelling(call);
  if (!name.empty()) return name;
  std::vector<CXCursor> kids = children(call);
  if (kids.empty()) return "";
  std::function<std::string(CXCursor, int)> find = [&](CXCursor c, int depth) -> std::string {
    CXCursorKind k = clang_getCursorKind(c);
    // A value (`sum` of a dependent `sum += x[i]`, an operator call whose first operand it is) names no callee.
    if (k == CXCursor_DeclRefExpr && is_value(clang_getCursorKind(clang_getCursorReferenced(c)))) return "";
    if (k == CXCursor_OverloadedDeclRef || (k == CXCursor_DeclRefExpr && !spelling(c).empty())) return spelling(c);
    // A cast's type, or another call (a dependent operator's first operand): no callee name.
    if (k == CXCursor_TypeRef || k == CXCursor_CallExpr || depth > 2) return "";
    std::vector<CXCursor> below = children(c);
    return below.empty() ? "" : find(below[0], depth + 1);
  };
  return find(kids[0], 0);
}

Item make_item(Item::Kind kind, int line, std::string text) {
  Item item;
  item.kind = kind;
  item.line = line;
  item.text = std::move(text);
  return item;
}

// Identifiers of a type spelling renamed (`T` of a helper becomes its alias).
std::string rename_words(const std::string& type, const Scope& scope) {
  std::string out, word;
  auto flush = [&] {
    out += scope.rename(word);
    word.clear();
  };
  for (char ch : type) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
      word += ch;
    } else {
      flush();
      out += ch;
    }
  }
  flush();
  return out;
}

bool contains(CXCursor c, CXCursorKind kind) {
  bool found = clang_getCursorKind(c) == kind;
  visit(c, [&](CXCursor x) {
    if (clang_getCursorKind(x) == kind) {
      found = true;
      return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
  });
  return found;
}

// The `#define`s (or `#undef`s, by `directive`) on lines of their own in [begin, end) of `text`,
// each with its continuation lines.
std::string directives_in(const std::string& text, unsigned begin, unsigned end, const std::string& directive) {
  std::string out;
  for (size_t line = text.rfind('\n', begin) == std::string::npos ? 0 : text.rfind('\n', begin) + 1; line < end;) {
    size_t stop = text.find('\n', line);
    while (stop != std::string::npos && stop > line && text[stop - 1] == '\\')  // continued
      stop = text.find('\n', stop + 1);
    stop = stop == std::string::npos ? text.size() : stop + 1;
    const size_t hash = text.find_first_not_of(" \t", line);
    if (hash < stop && text[hash] == '#') {
      const size_t word = text.find_first_not_of(" \t", hash + 1);
      if (word != std::string::npos && text.compare(word, directive.size(), directive) == 0) out += text.substr(line, stop - line);
    }
    line = stop;
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

// ---- LoopFormWriter ----

// The loop form of the kernel function `name`, or why it has none.
LoopFormKernel LoopFormWriter::write(const std::string& function, const EntryPoint& entry) {
  LoopFormKernel k;
  k.function = function;
  k.header = source_.kernel_file().header;
  k.line_base = source_.kernel_file().line_base;
  CXCursor fn = source_.definition(function);
  try {
    if (clang_Cursor_isNull(fn))
      throw Refusal{"the kernel function has no single definition in the file or a header the simulator copies", 0};
    // Written after the kernel: the macros its body defines for itself and undefines before its
    // end (ggml's `#define FC_OP FC_sum_rows_op`), defined again around the form.
    auto [begin, end] = source_.range_of(fn, false);
    k.text = directives_in(source_.original(), begin, end, "define") + loop_function(fn, entry) +
             directives_in(source_.original(), begin, end, "undef");
    k.loop_function = "mtlsim_loops_" + function;
    k.after_line = source_.ctx().end(fn).loc.line;
  } catch (const Refusal& r) {
    k.refusal = r.why;
    k.refusal_line = r.line;
  }
  return k;
}

// The kernel flattened (a fresh Flattener: nothing carries over from the kernel before), checked
// and written.
std::string LoopFormWriter::loop_function(CXCursor fn, const EntryPoint& entry) {
  if (clang_getCursorKind(clang_getCursorSemanticParent(fn)) != CXCursor_TranslationUnit)
    throw Refusal{"the kernel is declared inside a namespace", source_.line_of(fn)};
  CXCursor body = Source::body_of(fn);
  if (clang_Cursor_isNull(body)) throw Refusal{"the kernel has no body", source_.line_of(fn)};
  Flattener flattener(source_, sync_, fn, entry);
  const Scope scope = flattener.parameter_copies(fn, entry);
  flattener.set_kernel_tail();
  flattener.flatten(body, scope, nullptr, false);
  flattener.body().keep_pointed_to();
  flattener.body().refuse_unkept();
  return RegionWriter(source_, flattener.body()).write_function(fn, entry);
}

// ---- Source ----

Source::Source(Context& ctx, const Description& d, const KernelFile& file) : ctx_(ctx), d_(d), file_(file) {
  collect_definitions(clang_getTranslationUnitCursor(ctx.tu()));
}

int Source::line_of(CXCursor c) const { return ctx_.begin(c).loc.line; }

std::string Source::line_directive(int line) const { return fmt::format("#line {}\n", file_.line_base + line); }

void Source::collect_definitions(CXCursor parent) {
  visit(parent, [&](CXCursor c) {
    CXCursorKind k = clang_getCursorKind(c);
    FilePos at = ctx_.pos(c);
    if (!at.file) return CXChildVisit_Continue;  // the shim and the system headers
    if (k == CXCursor_Namespace) collect_definitions(c);
    if (is_function(k) && clang_isCursorDefinition(c) &&
        clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c))) {
      if (at.file == file_.file) definitions_[spelling(c)].push_back(c);
      else other_definitions_[spelling(c)].push_back(c);
    }
    return CXChildVisit_Continue;
  });
}

std::vector<CXCursor> Source::user_declarations(const std::string& name) const {
  std::vector<CXCursor> out;
  std::function<void(CXCursor)> scan = [&](CXCursor parent) {
    visit(parent, [&](CXCursor c) {
      const CXCursorKind k = clang_getCursorKind(c);
      // A class's friends too: a hidden friend is found by argument-dependent lookup.
      if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || k == CXCursor_UnexposedDecl || k == CXCursor_StructDecl ||
          k == CXCursor_ClassDecl || k == CXCursor_ClassTemplate || k == CXCursor_FriendDecl)
        scan(c);
      const bool member = clang_getCursorKind(clang_getCursorSemanticParent(c)) != CXCursor_Namespace &&
                          clang_getCursorKind(clang_getCursorSemanticParent(c)) != CXCursor_TranslationUnit &&
                          clang_getCursorKind(clang_getCursorSemanticParent(c)) != CXCursor_LinkageSpec;
      if (is_function(k) && !member && ctx_.in_user_file(c) && spelling(c) == name) out.push_back(c);
      return CXChildVisit_Continue;
    });
  };
  scan(clang_getTranslationUnitCursor(ctx_.tu()));
  return out;
}

CXCursor Source::definition(const std::string& name) const {
  auto it = definitions_.find(name);
  if (it == definitions_.end() || it->second.size() != 1) return clang_getNullCursor();
  return it->second[0];
}

CXCursor Source::body_of(CXCursor fn) {
  for (CXCursor c : children(fn))
    if (clang_getCursorKind(c) == CXCursor_CompoundStmt) return c;
  return clang_getNullCursor();
}

// Byte range of a statement in the kernel's file, with an expression statement's `;`.
std::pair<unsigned, unsigned> Source::range_of(CXCursor c, bool with_semicolon) const {
  FilePos b = ctx_.begin(c), e = ctx_.end(c);
  if (!b.file || b.file != file_.file || e.file != b.file) throw Refusal{"a statement comes from a macro or another file", line_of(c)};
  unsigned end = e.offset;
  if (with_semicolon) {
    size_t t = b.file->token_at(end);
    if (t < b.file->tokens.size() && b.file->tokens[t].text == ";") end = b.file->tokens[t].end;
  }
  return {b.offset, end};
}

// The original text of [begin, end) with the simulator's edits and the scope's renames.
std::string Source::render(unsigned begin, unsigned end, const Scope& scope, std::vector<Edit> replaced) const {
  const UserFile& f = file();
  std::vector<Edit> edits;
  for (const Edit& r : replaced) edits.push_back({r.begin - begin, r.end - begin, r.text});
  auto it = ctx_.edits.find(f.path);
  if (it != ctx_.edits.end())
    for (const Edit& e : it->second)
      if (e.begin >= begin && e.end <= end) edits.push_back({e.begin - begin, e.end - begin, e.text});
  for (size_t i = f.token_at(begin); i < f.tokens.size() && f.tokens[i].end <= end; ++i) {
    const Token& t = f.tokens[i];
    if (t.kind != CXToken_Identifier || !scope.renames.count(t.text)) continue;
    if (i > 0 && (f.tokens[i - 1].text == "." || f.tokens[i - 1].text == "->" || f.tokens[i - 1].text == "::")) continue;
    edits.push_back({t.begin - begin, t.end - begin, scope.rename(t.text)});
  }
  return apply_edits(original().substr(begin, end - begin), std::move(edits));
}

std::string Source::render(CXCursor c, const Scope& scope, bool with_semicolon) const {
  auto [b, e] = range_of(c, with_semicolon);
  return render(b, e, scope);
}

bool Source::is_assignment(CXCursor lhs) const {
  const UserFile& f = file();
  size_t t = f.token_at(ctx_.end(lhs).offset);
  return t < f.tokens.size() && f.tokens[t].text == "=";
}

const ThreadgroupSite* Source::threadgroup_site(CXCursor var) const {
  const FilePos at = ctx_.pos(var);
  if (at.file != file_.file) return nullptr;
  for (const ThreadgroupSite& s : d_.threadgroup_sites)
    if (s.file == file().path && s.begin <= at.offset && at.offset < s.end) return &s;
  return nullptr;
}

}  // namespace mtlgen::msl::loop_form

namespace mtlgen::msl {

const char* LoopForm::revision() { return kLoopFormSourceHash; }

std::string LoopForm::text() const {
  std::string all;
  for (const LoopFormKernel& k : kernels)
    if (k.header.empty()) all += k.text;
  return all;
}

namespace {

// The user files that define each function (template) of the translation unit.
std::map<std::string, std::set<const UserFile*>> defining_files(Context& ctx) {
  std::map<std::string, std::set<const UserFile*>> out;
  std::function<void(CXCursor)> collect = [&](CXCursor parent) {
    loop_form::visit(parent, [&](CXCursor c) {
      const CXCursorKind k = clang_getCursorKind(c);
      const FilePos at = ctx.pos(c);
      if (!at.file) return CXChildVisit_Continue;
      if (k == CXCursor_Namespace) collect(c);
      if (loop_form::is_function(k) && clang_isCursorDefinition(c) &&
          clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c)))
        out[spelling(c)].insert(at.file);
      return CXChildVisit_Continue;
    });
  };
  collect(clang_getTranslationUnitCursor(ctx.tu()));
  return out;
}

// Where the kernel function `function` is written: the main file, or the one header that
// defines it (its forms then go into that header's copy, whose lines Unit::simulator_headers
// numbers n * kHeaderLineStride + line, n counting the headers in `headers`' order from 1).
loop_form::KernelFile kernel_file(Context& ctx, const std::map<std::string, std::set<const UserFile*>>& defining,
                                  const std::string& function, const std::string& original,
                                  const std::map<std::string, LocalHeader>& headers) {
  const UserFile* main = nullptr;
  for (const auto& [path, f] : ctx.files())
    if (f.is_main) main = &f;
  auto it = defining.find(function);
  if (it != defining.end() && it->second.size() == 1 && *it->second.begin() != main) {
    const UserFile* file = *it->second.begin();
    int n = 1;
    for (const auto& [path, header] : headers) {
      if (path == file->path) return {file, &header.text, header.key, n * kHeaderLineStride};
      ++n;
    }
  }
  return {main, &original, "", 0};
}

}  // namespace

LoopForm plan_loop_form(Context& ctx, const Description& d, const std::string& original,
                        const std::map<std::string, LocalHeader>& headers,
                        const std::optional<std::set<std::string>>& entry_points) {
  LoopForm form;
  const auto defining = defining_files(ctx);
  std::map<const UserFile*, std::unique_ptr<loop_form::LoopFormWriter>> writers;  // one per file
  std::set<std::string> done;
  for (const EntryPoint& e : d.entry_points) {
    if (entry_points && !entry_points->count(e.host_name)) continue;
    if (!done.insert(e.function).second) continue;
    const loop_form::KernelFile file = kernel_file(ctx, defining, e.function, original, headers);
    auto& writer = writers[file.file];
    if (!writer) writer = std::make_unique<loop_form::LoopFormWriter>(ctx, d, file);
    form.kernels.push_back(writer->write(e.function, e));
  }
  return form;
}

}  // namespace mtlgen::msl
