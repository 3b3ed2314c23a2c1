#include "advisor/chips.h"

#include <stdexcept>

namespace mtlgen::advisor {

// Cores: Apple's largest configuration of each chip. Clocks: the commonly published GPU clocks;
// they only place the compute roof, which none of the shipped kernels comes near.
const std::vector<Chip>& chips() {
  static const std::vector<Chip> table = {
      {"M1", 68, 8, 1.278},     {"M2", 100, 10, 1.398},     {"M3", 100, 10, 1.38},   {"M3 Max", 400, 40, 1.38},
      {"M4", 120, 10, 1.47},    {"M4 Pro", 273, 20, 1.47},  {"M4 Max", 546, 40, 1.678},
  };
  return table;
}

const Chip& chip_named(const std::string& name) {
  std::string known;
  for (const auto& c : chips()) {
    if (c.name == name) return c;
    known += (known.empty() ? "" : ", ") + c.name;
  }
  throw std::invalid_argument("unknown chip `" + name + "` (known: " + known + ")");
}

}  // namespace mtlgen::advisor
