#include "support/text.h"

#include <cctype>

namespace mtlgen::support {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::vector<Token> identifier_tokens(std::string_view code) {
  std::vector<Token> out;
  int line = 1;
  size_t line_start = 0;
  size_t i = 0;
  auto newline = [&](size_t at) {
    ++line;
    line_start = at + 1;
  };
  while (i < code.size()) {
    char c = code[i];
    if (c == '\n') {
      newline(i);
      ++i;
    } else if (code.substr(i, 2) == "//") {
      while (i < code.size() && code[i] != '\n') ++i;
    } else if (code.substr(i, 2) == "/*") {
      i += 2;
      while (i < code.size() && code.substr(i, 2) != "*/") {
        if (code[i] == '\n') newline(i);
        ++i;
      }
      i += 2;
    } else if (c == '"' || c == '\'') {
      for (++i; i < code.size() && code[i] != c && code[i] != '\n'; ++i) {
        if (code[i] == '\\') ++i;
      }
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < code.size() && (ident_char(code[i]) || code[i] == '.')) ++i;
    } else if (ident_start(c)) {
      size_t start = i;
      while (i < code.size() && ident_char(code[i])) ++i;
      out.push_back({std::string(code.substr(start, i - start)), line, static_cast<int>(start - line_start) + 1});
    } else {
      ++i;
    }
  }
  return out;
}

std::set<std::string> identifiers_in(std::string_view code) {
  std::set<std::string> out;
  for (auto& t : identifier_tokens(code)) out.insert(std::move(t.text));
  return out;
}

std::string indent_lines(std::string_view text, std::string_view indent) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty()) out.append(indent).append(line);
    out += '\n';
    pos = end + 1;
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !ident_start(s[0])) return false;
  for (char c : s) {
    if (!ident_char(c)) return false;
  }
  return true;
}

std::string lower_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace mtlgen::support
