#include <fmt/format.h>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

const char* to_string(AddressSpace a) {
  switch (a) {
    case AddressSpace::none: return "";
    case AddressSpace::device: return "device";
    case AddressSpace::constant: return "constant";
    case AddressSpace::threadgroup: return "threadgroup";
    case AddressSpace::thread: return "thread";
  }
  return "";
}

Unit::Unit() : impl_(std::make_unique<Impl>()) {}
Unit::~Unit() = default;
Unit::Unit(Unit&&) noexcept = default;
Unit& Unit::operator=(Unit&&) noexcept = default;

const EntryPoint* Unit::find(const std::string& host_name) const {
  for (const auto& e : entry_points_)
    if (e.host_name == host_name) return &e;
  return nullptr;
}

std::string Unit::simulator_source() const {
  auto it = impl_->edits.find(impl_->main_path);
  std::string text = it == impl_->edits.end() ? text_ : apply_edits(text_, it->second);
  std::map<std::string, std::string> keys = {{impl_->main_path, "."}};
  for (const auto& [path, header] : impl_->headers) keys[path] = header.key;
  return text + instantiation_table(impl_->instantiation_lines, keys);
}

std::vector<Unit::Header> Unit::simulator_headers() const {
  std::vector<Header> out;
  for (const auto& [path, header] : impl_->headers) {
    auto edits = impl_->edits.find(path);
    bool edited = edits != impl_->edits.end() && !edits->second.empty();
    std::string text = edited ? apply_edits(header.text, edits->second) : header.text;
    out.push_back({path, header.key, header_line_directive(static_cast<int>(out.size()) + 1, path) + text});
  }
  return out;
}

std::string header_line_directive(int n, const std::string& path) {
  return fmt::format("#line {} // {}\n", n * kHeaderLineStride + 1, path);  // a quoted file would be refused
}

std::optional<HeaderLine> header_line_of(int reported_line, const std::vector<std::string>& header_copies) {
  if (reported_line <= kHeaderLineStride) return std::nullopt;
  const int n = reported_line / kHeaderLineStride;
  const std::string start = fmt::format("#line {} // ", n * kHeaderLineStride + 1);
  for (const std::string& text : header_copies) {
    if (text.rfind(start, 0) != 0) continue;
    size_t end = text.find('\n', start.size());
    if (end == std::string::npos) return std::nullopt;
    return HeaderLine{text.substr(start.size(), end - start.size()), reported_line % kHeaderLineStride};
  }
  return std::nullopt;
}

const LoopForm& Unit::loop_form() const { return impl_->loop_form; }

std::string Unit::cuda_source() const {
  auto it = impl_->cuda_texts.find(impl_->main_path);
  return it == impl_->cuda_texts.end() ? text_ : it->second;
}

std::vector<Unit::Header> Unit::cuda_headers() const {
  std::vector<Header> out;
  for (const auto& [path, text] : impl_->cuda_texts) {
    auto header = impl_->headers.find(path);
    if (path != impl_->main_path && header != impl_->headers.end()) out.push_back({path, header->second.key, text});
  }
  return out;
}

}  // namespace mtlgen::msl
