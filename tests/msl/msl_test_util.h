#pragma once
// Shared helpers of the MSL front-end tests: parse an input of tests/msl/in, find things in it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "msl/msl_unit.h"

namespace mtlgen::msl::testing {

inline std::filesystem::path input(const std::string& name) {
  return std::filesystem::path(MTLGEN_MSL_TEST_INPUTS) / name;
}

struct Parsed {
  support::Diagnostics diags;
  Unit unit;
};

// Parses tests/msl/in/<name>; the conformance checks belong to their own tests.
inline Parsed parse_input(const std::string& name) {
  support::Diagnostics diags;
  ParseOptions options;
  options.file = input(name);
  options.conformance = false;
  Unit unit = parse(options, diags);
  return {std::move(diags), std::move(unit)};
}

inline Parsed parse_text(const std::string& text, const std::string& file = "k.metal") {
  support::Diagnostics diags;
  ParseOptions options;
  options.file = file;
  options.text = text;
  options.conformance = false;
  Unit unit = parse(options, diags);
  return {std::move(diags), std::move(unit)};
}

inline const KernelParam& param(const EntryPoint& e, const std::string& name) {
  auto it = std::find_if(e.params.begin(), e.params.end(), [&](const KernelParam& p) { return p.name == name; });
  if (it == e.params.end()) throw std::runtime_error("no parameter " + name + " in " + e.host_name);
  return *it;
}

inline const EntryPoint& entry(const Unit& u, const std::string& host_name) {
  const EntryPoint* e = u.find(host_name);
  if (!e) throw std::runtime_error("no entry point " + host_name);
  return *e;
}

}  // namespace mtlgen::msl::testing
