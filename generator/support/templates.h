#pragma once
// Access to the files under templates/ (embedded at build time) and mustache rendering.
// Templates stay logic-free: emitters compute every value in C++ and pass plain data.
#include <kainjow/mustache.hpp>

#include <string>
#include <string_view>

namespace mtlgen::support {

using TemplateData = kainjow::mustache::data;

// Bytes of templates/<path>; throws std::logic_error for a path that was not embedded.
std::string_view template_file(std::string_view path);

// Renders templates/<path> with `data`. HTML escaping is off: we emit code, not markup.
// Templates that emit C-family code switch delimiters to <% %> so `{{` never means a brace.
std::string render_template(std::string_view path, const TemplateData& data);

// A mustache list built from strings, each item exposed as {{.}}.
TemplateData string_list(const std::vector<std::string>& items);

}  // namespace mtlgen::support
