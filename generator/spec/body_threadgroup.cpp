#include "spec/body_threadgroup.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "support/text.h"

namespace mtlgen::spec {

using support::ErrorKind;
using support::SourceLoc;

namespace {

constexpr std::string_view kKeyword = "threadgroup";

class BodyReader {
 public:
  BodyReader(ir::Kernel& k, support::Diagnostics& d) : k_(k), diags_(d), text_(k.body.text) {}

  void run() {
    for (const auto& t : support::identifier_tokens(text_)) {
      if (t.text == kKeyword) read_declaration(offset_of(t));
    }
  }

 private:
  size_t offset_of(const support::Token& t) const {
    size_t pos = 0;
    for (int line = 1; line < t.line; ++line) pos = text_.find('\n', pos) + 1;
    return pos + t.column - 1;
  }

  // Where `offset` of the body lies in the spec (the body's lines keep its indentation's column).
  SourceLoc loc_at(size_t offset) const {
    SourceLoc l = k_.body.loc;
    size_t newline = offset == 0 ? std::string::npos : text_.rfind('\n', offset - 1);
    size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    l.line += static_cast<int>(std::count(text_.begin(), text_.begin() + offset, '\n'));
    l.column += static_cast<int>(offset - line_start);
    return l;
  }

  // `threadgroup [const] T name[E]...;` becomes a variable; `threadgroup T* p`, `threadgroup T& r`
  // and casts `(threadgroup T*)` are pointers into memory declared elsewhere.
  void read_declaration(size_t at) {
    size_t end = text_.find_first_of(";=[(){", at);
    if (end == std::string::npos || std::string_view(";=[").find(text_[end]) == std::string_view::npos) return;
    std::string_view head(text_.data() + at + kKeyword.size(), end - at - kKeyword.size());
    if (head.find_first_of("*&") != std::string_view::npos) return;
    std::vector<std::string> words;
    for (const auto& w : support::identifier_tokens(head))
      if (w.text != "const" && w.text != "volatile" && w.text != "metal") words.push_back(w.text);
    ir::BodyThreadgroupVariable v;
    v.loc = loc_at(at);
    if (words.size() != 2) {
      diags_.error(ErrorKind::body_declaration, v.loc, "cannot read this threadgroup declaration",
                   "write it as `threadgroup <element type> <name>[<extent>]...;`, e.g. "
                   "`threadgroup float partials[TG / SIMD_SIZE];`");
      return;
    }
    v.name = words[1];
    if (!element_type(words[0], v)) return;
    for (size_t pos = end; pos < text_.size() && text_[pos] == '[';) pos = read_extent(pos, v);
    k_.body_threadgroup_variables.push_back(std::move(v));
  }

  // The element type's scalar type and lanes: an MSL scalar or vector name, or a type parameter.
  bool element_type(const std::string& word, ir::BodyThreadgroupVariable& v) {
    v.type.loc = v.loc;
    if (std::any_of(k_.type_params.begin(), k_.type_params.end(), [&](const ir::TypeParam& p) { return p.name == word; })) {
      v.type.param = word;
      return true;
    }
    if (word == "atomic_uint" || word == "atomic_int") {
      v.type.concrete = word == "atomic_uint" ? ir::ScalarType::u32 : ir::ScalarType::i32;
      return true;
    }
    std::string base = word;
    if (!base.empty() && base.back() >= '2' && base.back() <= '4') {
      v.lanes = base.back() == '3' ? 4 : base.back() - '0';
      base.pop_back();
    }
    for (int t = 0; t <= static_cast<int>(ir::ScalarType::boolean); ++t) {
      if (static_cast<ir::ScalarType>(t) != ir::ScalarType::bytes && base == ir::info(static_cast<ir::ScalarType>(t)).msl) {
        v.type.concrete = static_cast<ir::ScalarType>(t);
        return true;
      }
    }
    diags_.error(ErrorKind::body_declaration, v.loc, fmt::format("cannot size the threadgroup variable `{}` of type `{}`", v.name, word),
                 "the body's threadgroup variables hold MSL scalars or vectors (float, half4, uint, ...) or a type "
                 "parameter; declare other memory under `threadgroup_memory:`");
    return false;
  }

  // Reads `[E]` at `open`; returns the offset after it (and its blanks).
  size_t read_extent(size_t open, ir::BodyThreadgroupVariable& v) {
    size_t close = open + 1;
    for (int depth = 1; close < text_.size(); ++close) {
      if (text_[close] == '[') ++depth;
      if (text_[close] == ']' && --depth == 0) break;
    }
    if (auto e = expr::parse(text_.substr(open + 1, close - open - 1), loc_at(open + 1), diags_)) {
      if (constant_per_variant(*e, v)) v.extents.push_back(std::move(*e));
    }
    size_t next = text_.find_first_not_of(" \t", close + 1);
    return next == std::string::npos ? text_.size() : next;
  }

  // True when every name in `e` is a tunable, SIMD_SIZE or a type in sizeof(); reports the first other.
  bool constant_per_variant(const expr::Expr& e, const ir::BodyThreadgroupVariable& v) {
    auto named = [&](const auto& list) {
      return std::any_of(list.begin(), list.end(), [&](const auto& x) { return x.name == e.name; });
    };
    bool ok = e.kind == expr::Expr::Kind::symbol    ? e.name == "SIMD_SIZE" || named(k_.tunables)
              : e.kind == expr::Expr::Kind::size_of ? named(k_.type_params) || ir::scalar_type_from_spec(e.name)
                                                    : true;
    if (!ok) {
      diags_.error(ErrorKind::body_declaration, e.loc,
                   fmt::format("the size of threadgroup variable `{}` is not constant per variant: it uses `{}`", v.name, e.name),
                   "Metal fixes threadgroup memory when it compiles each variant: size it with tunables, SIMD_SIZE, "
                   "sizeof() and integer literals");
      return false;
    }
    return std::all_of(e.operands.begin(), e.operands.end(), [&](const expr::Expr& o) { return constant_per_variant(o, v); });
  }

  ir::Kernel& k_;
  support::Diagnostics& diags_;
  const std::string& text_;
};

}  // namespace

void read_body_threadgroup_variables(ir::Kernel& kernel, support::Diagnostics& diags) { BodyReader(kernel, diags).run(); }

}  // namespace mtlgen::spec
