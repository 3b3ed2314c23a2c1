#include "support/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>

namespace mtlgen::support {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::io: return "io";
    case ErrorKind::file_too_large: return "file-too-large";
    case ErrorKind::yaml_syntax: return "yaml-syntax";
    case ErrorKind::alias_limit: return "alias-limit";
    case ErrorKind::unknown_key: return "unknown-key";
    case ErrorKind::wrong_type: return "wrong-type";
    case ErrorKind::missing_field: return "missing-field";
    case ErrorKind::invalid_identifier: return "invalid-identifier";
    case ErrorKind::reserved_identifier: return "reserved-identifier";
    case ErrorKind::duplicate_name: return "duplicate-name";
    case ErrorKind::bad_value: return "bad-value";
    case ErrorKind::bad_expression: return "bad-expression";
    case ErrorKind::undefined_symbol: return "undefined-symbol";
    case ErrorKind::buffer_index_collision: return "buffer-index-collision";
    case ErrorKind::function_constant_index_collision: return "function-constant-index-collision";
    case ErrorKind::threadgroup_size: return "threadgroup-size";
    case ErrorKind::threadgroup_memory: return "threadgroup-memory";
    case ErrorKind::unknown_helper: return "unknown-helper";
    case ErrorKind::body_declaration: return "body-declaration";
    case ErrorKind::test_case: return "test-case";
    case ErrorKind::msl_syntax: return "msl-syntax";
    case ErrorKind::msl_conformance: return "msl-conformance";
    case ErrorKind::msl_binding: return "msl-binding";
    case ErrorKind::placeholder: return "placeholder";
  }
  return "unknown";
}

void Diagnostics::error(ErrorKind kind, SourceLoc loc, std::string message, std::string hint) {
  diagnostics_.push_back({Severity::error, kind, std::move(loc), std::move(message), std::move(hint)});
}

void Diagnostics::warning(ErrorKind kind, SourceLoc loc, std::string message, std::string hint) {
  diagnostics_.push_back({Severity::warning, kind, std::move(loc), std::move(message), std::move(hint)});
}

void Diagnostics::add_source(const std::string& file, std::string text) { sources_[file] = std::move(text); }

bool Diagnostics::has_errors() const { return error_count() > 0; }

int Diagnostics::error_count() const {
  return static_cast<int>(std::count_if(diagnostics_.begin(), diagnostics_.end(),
                                        [](const Diagnostic& d) { return d.severity == Severity::error; }));
}

namespace {

std::string source_line(const std::string& text, int line) {
  size_t pos = 0;
  for (int i = 1; i < line; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return {};
    ++pos;
  }
  size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

std::string location_prefix(const SourceLoc& loc) {
  if (loc.line <= 0) return loc.file;
  if (loc.column <= 0) return fmt::format("{}:{}", loc.file, loc.line);
  return fmt::format("{}:{}:{}", loc.file, loc.line, loc.column);
}

}  // namespace

std::string Diagnostics::format(const Diagnostic& d) const {
  std::string out = fmt::format("{}: {}: {}\n", location_prefix(d.loc),
                                d.severity == Severity::error ? "error" : "warning", d.message);
  auto src = sources_.find(d.loc.file);
  if (src != sources_.end() && d.loc.line > 0) {
    std::string line = source_line(src->second, d.loc.line);
    if (!line.empty()) {
      out += fmt::format("  {}\n", line);
      if (d.loc.column > 0) out += fmt::format("  {}^\n", std::string(d.loc.column - 1, ' '));
    }
  }
  if (!d.hint.empty()) out += fmt::format("  hint: {}\n", d.hint);
  return out;
}

std::string Diagnostics::format_all() const {
  std::string out;
  for (const auto& d : diagnostics_) out += format(d);
  return out;
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  // The edit distance is quadratic: a hostile 100,000-character name must not cost seconds. No
  // real name is this long, and a typo of one is not worth guessing at.
  constexpr size_t kMaxLength = 64;
  std::string best;
  if (word.size() > kMaxLength) return best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t length_gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (c.size() > kMaxLength || length_gap >= best_distance) continue;  // the distance is at least the gap
    size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace mtlgen::support
