#pragma once
// Loading specs for the advisor's tests: the library's and tests/advisor/specs/.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "advisor/advisor.h"
#include "spec/library.h"

namespace mtlgen::advisor::test {

// The kernel of one spec file (relative to the source root), loaded as `mtlgen report` loads it.
inline std::vector<ir::Kernel> load(const std::string& path) {
  support::Diagnostics diags;
  auto kernels = spec::load_library(spec::collect_spec_files({std::string(MTLGEN_SOURCE_DIR) + "/" + path}, diags), diags);
  EXPECT_FALSE(diags.has_errors()) << diags.format_all();
  return kernels;
}

inline const ir::Variant& variant_with(const ir::Kernel& k, int64_t tg) {
  for (const auto& v : k.variants) {
    if (v.tunables.at("TG") == tg && v.types == k.variants.front().types) return v;
  }
  throw std::runtime_error("no variant with TG " + std::to_string(tg));
}

inline ir::TestCase case_with(std::map<std::string, int64_t> dims) {
  ir::TestCase t;
  t.name = "probe";
  t.dims = std::move(dims);
  return t;
}

inline std::vector<Finding> of_lint(const KernelAdvice& a, const std::string& lint) {
  std::vector<Finding> out;
  for (const auto& f : a.findings) {
    if (f.lint == lint) out.push_back(f);
  }
  return out;
}

}  // namespace mtlgen::advisor::test
