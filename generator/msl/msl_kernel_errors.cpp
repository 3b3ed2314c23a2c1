// Which kernels an error stops. One unreadable template in a file of a hundred kernels must not
// cost the other ninety-nine: every error lies in some file-scope declaration (a template, a
// struct, an instantiation), and a kernel depends on the declarations its instantiation and its
// definition name, transitively. A kernel is unreadable when an error lies in one of those.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

// A file-scope declaration of a user file, by the lines it covers (as diagnostics name them).
struct Declaration {
  std::string file;  // FilePos::loc.file: the display name
  int first_line = 0;
  int last_line = 0;
  CXCursor cursor;
};

void visit(CXCursor c, const std::function<CXChildVisitResult(CXCursor)>& f) {
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        return (*static_cast<const std::function<CXChildVisitResult(CXCursor)>*>(data))(child);
      },
      const_cast<std::function<CXChildVisitResult(CXCursor)>*>(&f));
}

class DeclarationGraph {
 public:
  explicit DeclarationGraph(Context& ctx) : ctx_(ctx) {
    visit(clang_getTranslationUnitCursor(ctx.tu()), [&](CXCursor c) {
      add(c);
      return CXChildVisit_Continue;
    });
    for (auto& [file, list] : by_file_)
      std::sort(list.begin(), list.end(), [&](size_t a, size_t b) { return decls_[a].first_line < decls_[b].first_line; });
  }

  // Declarations covering `loc`'s line (several where a macro wrote them on one line).
  std::vector<size_t> at(const SourceLoc& loc) const {
    std::vector<size_t> out;
    auto it = by_file_.find(loc.file);
    if (it == by_file_.end()) return out;
    const auto& list = it->second;
    auto upper = std::upper_bound(list.begin(), list.end(), loc.line,
                                  [&](int line, size_t d) { return line < decls_[d].first_line; });
    while (upper != list.begin()) {
      const Declaration& d = decls_[*--upper];
      if (d.last_line < loc.line) break;
      out.push_back(*upper);
    }
    return out;
  }

  // The errors each declaration reaches through what it names, transitively: the errors of each
  // declaration that holds some are handed back along the edges to every declaration reaching
  // it. Few declarations hold errors, thousands of instantiations share a few templates.
  std::vector<std::set<size_t>> errors_reached(const std::map<size_t, std::vector<size_t>>& errors_in) {
    std::vector<std::vector<size_t>> named_by(decls_.size());
    for (size_t d = 0; d < decls_.size(); ++d)
      for (size_t next : edges(d)) named_by[next].push_back(d);
    std::vector<std::set<size_t>> out(decls_.size());
    for (const auto& [holder, errors] : errors_in) {
      std::vector<bool> seen(decls_.size(), false);
      std::vector<size_t> todo{holder};
      seen[holder] = true;
      while (!todo.empty()) {
        size_t d = todo.back();
        todo.pop_back();
        out[d].insert(errors.begin(), errors.end());
        for (size_t by : named_by[d])
          if (!seen[by]) seen[by] = true, todo.push_back(by);
      }
    }
    return out;
  }

 private:
  void add(CXCursor c) {
    FilePos begin = ctx_.begin(c);
    if (!begin.file) return;
    CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_Namespace || kind == CXCursor_LinkageSpec) {
      visit(c, [&](CXCursor child) {
        add(child);
        return CXChildVisit_Continue;
      });
      return;
    }
    FilePos end = ctx_.end(c);
    int last = end.file == begin.file ? std::max(end.loc.line, begin.loc.line) : begin.loc.line;
    by_file_[begin.loc.file].push_back(decls_.size());
    decls_.push_back({begin.loc.file, begin.loc.line, last, c});
  }

  // The declarations that what `d` names (types, templates, functions, variables) belong to.
  const std::set<size_t>& edges(size_t d) {
    auto [it, fresh] = edges_.try_emplace(d);
    if (!fresh) return it->second;
    std::set<size_t>& out = it->second;
    auto note = [&](CXCursor target) {
      if (clang_Cursor_isNull(target) || clang_isInvalid(clang_getCursorKind(target))) return;
      FilePos p = ctx_.pos(target);
      if (!p.file) return;
      for (size_t next : at(p.loc))
        if (next != d) out.insert(next);
    };
    visit(decls_[d].cursor, [&](CXCursor c) {
      CXCursor ref = clang_getCursorReferenced(c);
      if (!clang_Cursor_isNull(ref) && !clang_equalCursors(ref, c)) {
        note(ref);
        note(clang_getCursorDefinition(ref));
        note(clang_getSpecializedCursorTemplate(ref));
      }
      return CXChildVisit_Recurse;
    });
    return out;
  }

  Context& ctx_;
  std::vector<Declaration> decls_;
  std::map<std::string, std::vector<size_t>> by_file_;  // sorted by first line
  std::map<size_t, std::set<size_t>> edges_;
};

std::string entry_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 4; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 4) out += fmt::format(" and {} more", names.size() - 4);
  return out;
}

}  // namespace

KernelErrors split_errors_by_kernel(Context& ctx, std::vector<EntryPoint>& entries,
                                    const std::vector<support::Diagnostic>& errors) {
  KernelErrors out;
  if (errors.empty()) return out;
  DeclarationGraph graph(ctx);
  std::map<size_t, std::vector<size_t>> errors_in;  // by declaration
  for (size_t i = 0; i < errors.size(); ++i)
    for (size_t d : graph.at(errors[i].loc)) errors_in[d].push_back(i);

  const std::vector<std::set<size_t>> reached = graph.errors_reached(errors_in);
  std::map<std::pair<std::string, int>, std::set<size_t>> reached_from_line;  // many entries share one
  auto errors_reached = [&](const SourceLoc& loc, std::set<size_t>& out) {
    auto [it, fresh] = reached_from_line.try_emplace({loc.file, loc.line});
    if (fresh)
      for (size_t d : graph.at(loc)) it->second.insert(reached[d].begin(), reached[d].end());
    out.insert(it->second.begin(), it->second.end());
  };
  std::map<std::string, UnreadableKernel> stopped;  // by function
  std::vector<bool> used(errors.size(), false);
  std::vector<EntryPoint> readable;
  for (auto& entry : entries) {
    std::set<size_t> reasons;  // what a kernel's definition reaches, and what its instantiation's line names
    errors_reached(entry.definition_loc, reasons);
    errors_reached(entry.loc, reasons);
    if (reasons.empty()) {
      readable.push_back(std::move(entry));
      continue;
    }
    UnreadableKernel& k = stopped[entry.function];
    if (k.function.empty()) {
      k.function = entry.function;
      k.loc = entry.definition_loc;
    }
    k.host_names.push_back(entry.host_name);
    for (size_t i : reasons) {
      bool known = used[i] && std::any_of(k.reasons.begin(), k.reasons.end(), [&](const support::Diagnostic& r) {
        return r.loc.file == errors[i].loc.file && r.loc.line == errors[i].loc.line && r.message == errors[i].message;
      });
      used[i] = true;
      if (!known) k.reasons.push_back(errors[i]);
    }
  }
  entries = std::move(readable);
  for (auto& [function, k] : stopped) out.kernels.push_back(std::move(k));
  for (size_t i = 0; i < errors.size(); ++i)
    if (!used[i]) out.elsewhere.push_back(errors[i]);
  return out;
}

std::string UnreadableKernel::summary() const {
  return fmt::format("kernel `{}` ({} entr{}: {}) could not be read: {} error{}", function, host_names.size(),
                     host_names.size() == 1 ? "y" : "ies", entry_list(host_names), reasons.size(),
                     reasons.size() == 1 ? "" : "s");
}

}  // namespace mtlgen::msl
