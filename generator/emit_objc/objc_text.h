#pragma once
// Spelling shared by the Objective-C++ glue and harness emitters.
#include <string>
#include <vector>

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

// rms_norm -> rmsNorm: how Objective-C spells a parameter named after a spec entity.
std::string lower_camel(const std::string& snake);

// `// a` comment lines as `# a`, for files in languages that comment with #.
std::string hash_comments(const std::string& slash_comments);

}  // namespace mtlgen::emit
