#pragma once
// Files compiled into the tool (templates, support headers), keyed by path relative to their root.
#include <string_view>
#include <vector>

namespace mtlgen::support {

struct EmbeddedFile {
  std::string_view path;
  std::string_view bytes;
};

const std::vector<EmbeddedFile>& mtlgen_support_files();

}  // namespace mtlgen::support
