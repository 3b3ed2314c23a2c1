// A helper g++ refuses and clang and Metal accept: a GNU range designator mixed with plain
// elements, which the simulator's copy does not rewrite. g++'s error names this file and line 7.
#pragma once

inline float weight_of(uint k) {
  // g++: "expected identifier before numeric constant" on the next line
  const float w[4] = {[0 ... 1] = 1.0f, 2.0f, 3.0f};
  return w[k & 3];
}
