#pragma once
// Spelling shared by the Objective-C++ glue and harness emitters.
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/templates.h"

namespace mtlgen::emit {

// One `label:(type)name` or `label:value` part of a multi-line Objective-C message or method
// declaration. Parts are padded so that their colons line up under the first one, as Xcode does.
struct SelectorPart {
  std::string label;
  std::string type;   // declarations
  std::string value;  // message sends: the argument, or the parameter name in declarations
};

// The parts as a mustache list of {pad, label, type, name, value}, colons at `colon_column`.
support::TemplateData aligned(size_t colon_column, const std::vector<SelectorPart>& parts);

// The byte size of an element of `t` in glue code: a number, or `mtlgen::dtype_size(<types>.T)`
// for a type parameter, read from the Types value named `types`.
std::string element_size(const ir::TypeRef& t, const std::string& types = "types");

// "T[rows, n], read" and, for Private storage, ", GPU-only": a buffer as the glue's comments show it.
std::string describe_buffer(const ir::Buffer& b);

// `// a` comment lines as `# a`, for files in languages that comment with #.
std::string hash_comments(const std::string& slash_comments);

}  // namespace mtlgen::emit
