#pragma once
// Located, typed diagnostics. Every user-facing error is reported as
//   file:line:col: error: message
//     hint: what to do about it
// so that editors link the location. Stages collect all errors of one pass before stopping.
#include <map>
#include <string>
#include <vector>

namespace mtlgen::support {

struct SourceLoc {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based; 0 = unknown
};

// One value per rejected input class; tests assert on these, users read the message.
enum class ErrorKind {
  io,
  file_too_large,
  yaml_syntax,
  alias_limit,
  unknown_key,
  wrong_type,
  missing_field,
  invalid_identifier,
  reserved_identifier,
  duplicate_name,
  bad_value,
  bad_expression,
  undefined_symbol,
  buffer_index_collision,
  function_constant_index_collision,
  threadgroup_size,
  threadgroup_memory,
  unknown_helper,
  body_declaration,
  test_case,
  msl_syntax,       // the MSL does not parse (as C++ with the shim)
  msl_conformance,  // valid C++ that Metal rejects (cites the MSL specification)
  msl_binding,      // parameters the host or simulator cannot bind
  placeholder,      // a `TODO` value `mtlgen import` left for the user to fill in
};

const char* to_string(ErrorKind kind);

enum class Severity { error, warning };

struct Diagnostic {
  Severity severity = Severity::error;
  ErrorKind kind = ErrorKind::bad_value;
  SourceLoc loc;
  std::string message;
  std::string hint;
};

class Diagnostics {
 public:
  void error(ErrorKind kind, SourceLoc loc, std::string message, std::string hint = {});
  void warning(ErrorKind kind, SourceLoc loc, std::string message, std::string hint = {});

  // Source text by file name, so that a printed diagnostic can quote the offending line.
  void add_source(const std::string& file, std::string text);

  bool has_errors() const;
  int error_count() const;
  const std::vector<Diagnostic>& all() const { return diagnostics_; }

  std::string format(const Diagnostic& d) const;
  std::string format_all() const;

 private:
  std::vector<Diagnostic> diagnostics_;
  std::map<std::string, std::string> sources_;
};

// Closest candidate by edit distance, or "" when nothing is close enough to suggest.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace mtlgen::support
