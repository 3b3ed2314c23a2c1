// The Mac harness's input code on Linux: for every kernel that kernels.inc lists (written by
// harness_inputs_test.cpp next to the generated <kernel>_test_data.h files), every test case and
// compiled variant that verify runs (the lines "<kernel> <case> <variant index>" of the file named by
// argv[1]) and every host-filled buffer, prints one line
//   <kernel> <case> <variant index> <buffer> <bytes> <FNV-1a 64 of the bytes, hex>
// of the initial contents the bench and autotune programs upload.
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernels.inc"  // #includes and MTLGEN_KERNELS(X): X(kernel) for each kernel

// harness_inputs_fill.cpp: the draw itself, compiled apart with the flags under test.
void harness_inputs_draw(const mtlgen::testdata::Buffer& b, uint64_t seed, uint64_t& size, uint64_t& hash);

namespace {

std::set<std::string> runs;  // "<kernel> <case> <variant index>"


// Buffers with the same case, name, type and size have the same bytes: hash each once.
template <typename Variants, typename BuffersOf>
void print_kernel(const char* kernel, const std::vector<mtlgen::testdata::Case>& cases, const Variants& variants,
                  BuffersOf buffers_of) {
  for (const auto& c : cases) {
    std::map<std::string, std::pair<uint64_t, uint64_t>> seen;  // "buffer type elements" -> (bytes, hash)
    for (size_t v = 0; v < variants.size(); ++v) {
      if (!runs.count(std::string(kernel) + " " + c.name + " " + std::to_string(v))) continue;
      for (const mtlgen::testdata::Buffer& b : buffers_of(c, variants[v])) {
        if (!b.input) continue;
        const std::string key = b.name + " " + std::to_string(int(b.type)) + " " + std::to_string(b.elements);
        auto it = seen.find(key);
        if (it == seen.end()) {
          uint64_t size = 0, hash = 0;
          harness_inputs_draw(b, c.seed, size, hash);
          it = seen.emplace(key, std::make_pair(size, hash)).first;
        }
        std::printf("%s %s %zu %s %" PRIu64 " %016" PRIx64 "\n", kernel, c.name.c_str(), v, b.name.c_str(),
                    it->second.first, it->second.second);
      }
    }
  }
}

}  // namespace

#define MTLGEN_PRINT_KERNEL(k)                                                                         \
  print_kernel(#k, mtlgen::kernels::k::test_data::cases(), mtlgen::kernels::k::test_data::variants(), \
               [](const auto& c, const auto& v) { return mtlgen::kernels::k::test_data::buffers(c, v.second, v.first); });

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ifstream in(argv[1]);
  for (std::string line; std::getline(in, line);) runs.insert(line);
  MTLGEN_KERNELS(MTLGEN_PRINT_KERNEL)
  return 0;
}
