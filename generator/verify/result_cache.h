#pragma once
// Incremental verification: a passing case's result is kept under <cache>/results/, keyed by the
// hash of everything the case depends on, and a later run with the same key reports it without
// running anything. Failures are never kept: a case being fixed always runs.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "verify/case_runner.h"

namespace mtlgen::verify {

// What a case's result depends on besides its kernel's modules and spec.
struct CaseIdentity {
  const ir::Kernel* kernel = nullptr;
  const ir::Variant* variant = nullptr;
  const ir::TestCase* test = nullptr;
  std::vector<std::filesystem::path> modules;  // the case's module(s): their paths hold their keys
  std::string constants;                       // Kernel::describe of the function-constant setting
  std::string options;                         // the verify options that change what a case reports
};

class ResultCache {
 public:
  // `dir` empty: no cache (`--no-result-cache`).
  explicit ResultCache(std::filesystem::path dir);

  // The key: the spec's bytes (its hash), the modules (their keys cover the generated code, the
  // shim, the flags and the compiler's version), the variant, the case, the constants, the options
  // and this mtlgen build.
  std::string key(const CaseIdentity& id) const;

  std::optional<CaseResult> find(const std::string& key) const;
  // Keeps `result` when it passed; a cache that cannot be written is left alone (never an error).
  void keep(const std::string& key, const CaseResult& result) const;

  bool enabled() const { return !dir_.empty(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace mtlgen::verify
