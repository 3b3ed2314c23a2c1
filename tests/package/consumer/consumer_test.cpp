// Tests a project's code against the reference mtlgen generated for specs/scale.yaml.
#include <cstdio>
#include <vector>

#include "scale/scale_reference.h"

int main() {
  std::vector<float> x{1, 2, 3}, y(3);
  mtlgen::kernels::scale::Dims dims;
  dims.n = 3;
  mtlgen::kernels::scale::reference<float>(dims, std::span<const float>(x), std::span<float>(y));
  std::printf("%g %g %g\n", y[0], y[1], y[2]);
  return y[0] == 2 && y[1] == 4 && y[2] == 6 ? 0 : 1;
}
