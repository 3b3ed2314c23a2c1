// libclang plumbing: strings, user files with their tokens, locations as the user sees them.
#include <algorithm>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

std::string str(CXString s) {
  const char* c = clang_getCString(s);
  std::string r = c ? c : "";
  clang_disposeString(s);
  return r;
}

std::string spelling(CXCursor c) { return str(clang_getCursorSpelling(c)); }
std::string spelling(CXType t) { return str(clang_getTypeSpelling(t)); }

size_t UserFile::token_at(unsigned offset) const {
  auto it = std::lower_bound(tokens.begin(), tokens.end(), offset,
                             [](const Token& t, unsigned off) { return t.begin < off; });
  return static_cast<size_t>(it - tokens.begin());
}

std::string_view UserFile::slice(unsigned begin, unsigned end) const {
  if (begin >= text.size() || end <= begin) return {};
  return std::string_view(text).substr(begin, std::min<size_t>(end, text.size()) - begin);
}

Context::Context(CXTranslationUnit tu, std::string main_path, std::string display)
    : tu_(tu), main_path_(std::move(main_path)), display_(std::move(display)) {}

namespace {

unsigned offset_of(CXSourceLocation l) {
  unsigned off = 0;
  clang_getExpansionLocation(l, nullptr, nullptr, nullptr, &off);
  return off;
}

std::vector<Token> tokenize_file(CXTranslationUnit tu, CXFile f, size_t size) {
  CXSourceRange all = clang_getRange(clang_getLocationForOffset(tu, f, 0),
                                     clang_getLocationForOffset(tu, f, static_cast<unsigned>(size)));
  CXToken* raw = nullptr;
  unsigned n = 0;
  clang_tokenize(tu, all, &raw, &n);
  std::vector<Token> tokens;
  tokens.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    CXSourceRange r = clang_getTokenExtent(tu, raw[i]);
    tokens.push_back({str(clang_getTokenSpelling(tu, raw[i])), clang_getTokenKind(raw[i]),
                      offset_of(clang_getRangeStart(r)), offset_of(clang_getRangeEnd(r))});
  }
  if (raw) clang_disposeTokens(tu, raw, n);
  return tokens;
}

}  // namespace

// A user file is any file that is neither the embedded shim nor a system header.
const UserFile* Context::user_file(CXFile f) {
  std::string path = str(clang_getFileName(f));
  auto known = is_user_.find(path);
  if (known != is_user_.end()) return known->second ? &files_.at(path) : nullptr;
  bool user = path.rfind(kShimDir, 0) != 0 &&
              !clang_Location_isInSystemHeader(clang_getLocationForOffset(tu_, f, 0));
  is_user_[path] = user;
  if (!user) return nullptr;
  size_t size = 0;
  const char* bytes = clang_getFileContents(tu_, f, &size);
  UserFile& uf = files_[path];
  uf.path = path;
  uf.is_main = path == main_path_;
  uf.display = uf.is_main ? display_ : path;
  uf.text = bytes ? std::string(bytes, size) : std::string();
  uf.tokens = tokenize_file(tu_, f, uf.text.size());
  return &uf;
}

FilePos Context::pos(CXSourceLocation l) {
  CXFile f = nullptr;
  unsigned line = 0, column = 0, offset = 0;
  clang_getExpansionLocation(l, &f, &line, &column, &offset);
  FilePos p;
  if (!f) return p;
  p.file = user_file(f);
  p.offset = offset;
  p.loc = {p.file ? p.file->display : str(clang_getFileName(f)), static_cast<int>(line),
           static_cast<int>(column)};
  return p;
}

std::optional<std::pair<const UserFile*, size_t>> Context::definition_of_macro(const std::string& name) {
  if (macros_indexed_files_ != files_.size()) {  // a file met since: index them all again
    macros_.clear();
    for (const auto& [path, f] : files_)
      for (size_t i = 1; i + 1 < f.tokens.size(); ++i)
        if (f.tokens[i].text == "define" && f.tokens[i - 1].text == "#")
          macros_.emplace(f.tokens[i + 1].text, std::pair{&f, i});
    macros_indexed_files_ = files_.size();
  }
  auto it = macros_.find(name);
  if (it == macros_.end()) return std::nullopt;
  return it->second;
}

}  // namespace mtlgen::msl
