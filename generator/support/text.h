#pragma once
// Small text utilities shared by the front end and the emitters.
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace mtlgen::support {

// Identifiers appearing in C-family source text, skipping comments, string and char literals.
std::set<std::string> identifiers_in(std::string_view code);

// One identifier token with its 1-based line and column inside `code`.
struct Token {
  std::string text;
  int line = 1;
  int column = 1;
};
std::vector<Token> identifier_tokens(std::string_view code);

// Prefixes every non-empty line with `indent`; strips one trailing newline.
std::string indent_lines(std::string_view text, std::string_view indent);

bool is_identifier(std::string_view s);

// ASCII lower case (names in entry points: TG -> tg).
std::string lower_ascii(std::string s);

}  // namespace mtlgen::support
