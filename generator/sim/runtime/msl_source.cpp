#include "mtlsim/msl_source.h"

namespace mtlsim {

namespace {
constexpr std::string_view kAttr = "threadgroup";
constexpr std::string_view kSimAttr = "mtlsim_tgrp";  // same length: columns stay put
static_assert(kAttr.size() == kSimAttr.size());

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// True if msl[i..] is `threadgroup` followed by optional blanks and '('.
bool attribute_at(std::string_view msl, size_t i) {
  if (msl.substr(i, kAttr.size()) != kAttr) return false;
  size_t j = i + kAttr.size();
  while (j < msl.size() && is_blank(msl[j])) ++j;
  return j < msl.size() && msl[j] == '(';
}
}  // namespace

std::string prepare_msl_for_sim(std::string_view msl) {
  std::string out(msl);
  for (size_t i = out.find("[["); i != std::string::npos; i = out.find("[[", i + 2)) {
    size_t j = i + 2;
    while (j < out.size() && is_blank(out[j])) ++j;
    if (attribute_at(out, j)) out.replace(j, kAttr.size(), kSimAttr);
  }
  return out;
}

}  // namespace mtlsim
