#include "support/include_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace mtlgen::support {

namespace {

// One logical line: backslash-newlines spliced, comments blanked, as the preprocessor sees it.
struct Line {
  std::string text;
  int first = 0;  // index (0-based) of its first physical line
};

bool starts_raw_string(const std::string& s, size_t i) {
  if (s[i] != 'R' || i + 1 >= s.size() || s[i + 1] != '"') return false;
  if (i == 0) return true;
  char before = s[i - 1];
  bool prefix = before == 'L' || before == 'u' || before == 'U' || before == '8';
  return prefix || !(std::isalnum(static_cast<unsigned char>(before)) || before == '_');
}

// Splits into logical lines; comments become a space and string contents stay (directives
// inside raw strings show up as text of the line they start on, so they are never hidden).
std::vector<Line> logical_lines(const std::string& in) {
  std::vector<Line> lines{{}};
  int physical = 0;
  enum { code, line_comment, block_comment, quoted } state = code;
  char quote = 0;
  auto newline = [&] {
    ++physical;
    if (state == line_comment || state == quoted) state = code;
    lines.push_back({"", physical});
  };
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '\\' && i + 1 < in.size() && in[i + 1] == '\n') {  // splice
      ++physical, ++i;
      continue;
    }
    if (c == '\n') {
      newline();
      continue;
    }
    std::string& out = lines.back().text;
    if (state == line_comment) continue;
    if (state == block_comment) {
      if (c == '*' && i + 1 < in.size() && in[i + 1] == '/') state = code, ++i, out += ' ';
      continue;
    }
    if (state == quoted) {
      out += c;
      if (c == '\\' && i + 1 < in.size() && in[i + 1] != '\n') out += in[++i];
      else if (c == quote) state = code;
      continue;
    }
    if (c == '/' && i + 1 < in.size() && in[i + 1] == '/') {
      state = line_comment;
    } else if (c == '/' && i + 1 < in.size() && in[i + 1] == '*') {
      state = block_comment, ++i;
    } else if (starts_raw_string(in, i)) {  // R"delim( ... )delim": skipped whole, newlines kept
      size_t open = in.find('(', i + 2);
      std::string close = ")" + (open == std::string::npos ? "" : in.substr(i + 2, open - i - 2)) + "\"";
      size_t end = open == std::string::npos ? std::string::npos : in.find(close, open);
      size_t stop = end == std::string::npos ? in.size() : end + close.size();
      for (size_t j = i; j < stop; ++j) {
        if (in[j] == '\n') newline();
      }
      lines.back().text += "R\"\"";
      i = stop - 1;
    } else if (c == '"' || c == '\'') {
      state = quoted, quote = c, out += c;
    } else {
      out += c;
    }
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A literal <name> or "name", relative, no `..` component.
bool allowed_target(std::string_view target) {
  target = trim(target);
  if (target.size() < 3) return false;
  char close = target.front() == '<' ? '>' : target.front() == '"' ? '"' : 0;
  if (!close || target.back() != close) return false;
  std::string_view name = target.substr(1, target.size() - 2);
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string_view::npos ||
      name.find(close) != std::string_view::npos) {
    return false;
  }
  for (size_t start = 0; start <= name.size();) {
    size_t end = std::min(name.find('/', start), name.size());
    if (name.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

// Why a directive line is refused, or "" when it is fine.
std::string refusal(std::string_view line) {
  std::string_view rest = trim(line);
  if (rest.rfind("#", 0) == 0) rest.remove_prefix(1);
  else if (rest.rfind("%:", 0) == 0) rest.remove_prefix(2);
  else return rest.find("_Pragma") != std::string_view::npos && rest.find("dependency") != std::string_view::npos
                  ? "a `GCC dependency` pragma names a file of the host"
                  : "";
  rest = trim(rest);
  size_t word_end = 0;
  while (word_end < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[word_end])) || rest[word_end] == '_')) {
    ++word_end;
  }
  std::string_view word = rest.substr(0, word_end), argument = rest.substr(word_end);
  if (word == "include" || word == "include_next" || word == "import" || word == "embed") {
    return allowed_target(argument) ? "" : "spec code may include only by a literal, relative name without `..`";
  }
  if (word == "line" && argument.find('"') != std::string_view::npos) return "`#line` may not name a file";
  if (word == "pragma" && argument.find("dependency") != std::string_view::npos) {
    return "a `GCC dependency` pragma names a file of the host";
  }
  return "";
}

}  // namespace

std::optional<IncludeViolation> first_include_violation(const std::string& text, int first_line, int first_column) {
  for (const Line& line : logical_lines(text)) {
    std::string why = refusal(line.text);
    if (why.empty()) continue;
    std::string_view shown = trim(line.text);
    size_t column = line.text.find_first_not_of(" \t") + static_cast<size_t>(std::max(first_column, 1));
    return IncludeViolation{first_line + line.first, static_cast<int>(column), std::string(shown.substr(0, 120)), why};
  }
  return std::nullopt;
}

std::string include_violation(const std::string& text, const std::string& file, int first_line, int first_column) {
  auto v = first_include_violation(text, first_line, first_column);
  if (!v) return "";
  return fmt::format("{}:{}:{}: error: `{}`: {}\nhint: {}", file, v->line, v->column, v->directive, v->why,
                     kIncludePolicyHint);
}

}  // namespace mtlgen::support
