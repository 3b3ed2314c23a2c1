// The explicit instantiations a simulator module goes without (msl_instantiations.cpp): the table
// simulator_source() ends with, and drop_explicit_instantiations() blanking their lines.
#include <set>
#include <sstream>

#include "msl_test_util.h"

namespace mtlgen::msl::testing {
namespace instantiations_test {  // named: unity builds (tests/CMakeLists.txt)

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Line n (1-based) of `text`.
std::string line(const std::string& text, size_t n) { return lines_of(text).at(n - 1); }

const char* kKernels = R"(#include <metal_stdlib>
using namespace metal;
template <typename T>
kernel void scale(device T* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = x[i] * T(2); }
template <typename T, int N>
kernel void add(device T* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = x[i] + T(N); }
#define instantiate_scale(name, type) \
  template [[host_name(name)]] [[kernel]] decltype(scale<type>) scale<type>;
#define instantiate_add(name, type, n) \
  template [[host_name(name)]] [[kernel]] decltype(add<type, n>) add<type, n>;
#define instantiate_both(tname, type) instantiate_add("add1_" #tname, type, 1) instantiate_add("add2_" #tname, type, 2)
#define define_and_instantiate(name) \
  template <typename T> kernel void name(device T* x [[buffer(0)]]) { x[0] = 0; } template [[host_name(#name)]] [[kernel]] decltype(name<float>) name<float>;

template [[host_name("scale_f")]] [[kernel]] decltype(scale<float>) scale<float>;
template [[host_name("scale_h")]] [[kernel]]
decltype(scale<half>) scale<half>;  // two lines
instantiate_scale("scale_i", int)
instantiate_scale("scale_u", uint);
instantiate_both(float, float)
instantiate_both(half, half)
int unrelated = 1; template [[host_name("scale_s")]] [[kernel]] decltype(scale<short>) scale<short>;
define_and_instantiate(plain)
)";

TEST(MslInstantiations, TableListsThoseOnLinesOfTheirOwn) {
  Parsed p = parse_text(kKernels);
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  std::string sim = p.unit.simulator_source();
  EXPECT_EQ(lines_of(sim).size(), lines_of(p.unit.text()).size() + 1) << sim;  // the table, after the last newline
  EXPECT_EQ(lines_of(sim).back(),
            "/* mtlgen explicit instantiations: 15-15 .; 16-17 .; 18-18 .; 19-19 .; 20-20 .; 21-21 .; */");
}

// Those the table lists go, whichever a module runs; a line shared with other code, and a macro
// invocation that also defines a kernel, stay.
TEST(MslInstantiations, DropsTheLinesOfThoseOnLinesOfTheirOwn) {
  Parsed p = parse_text(kKernels);
  std::string sim = p.unit.simulator_source();
  std::map<std::string, std::string> headers;
  drop_explicit_instantiations(sim, headers);
  const std::string original = p.unit.text();
  EXPECT_EQ(lines_of(sim).size(), lines_of(original).size() + 1);
  for (size_t n : {15, 16, 17, 18, 19, 20, 21}) EXPECT_EQ(line(sim, n), "") << n;
  for (size_t n : {22, 23}) EXPECT_EQ(line(sim, n), line(original, n)) << n;
  for (size_t n = 1; n <= 14; ++n) EXPECT_EQ(line(sim, n), line(original, n)) << n;
}

// MLX's way: an invocation of a macro that invokes instantiate_kernel.
TEST(MslInstantiations, NestedMacroInvocationsGoWhole) {
  Parsed p = parse_input("mlx_style.metal");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  std::string sim = p.unit.simulator_source();
  std::map<std::string, std::string> headers;
  drop_explicit_instantiations(sim, headers);
  for (size_t n : {31, 32, 33, 34}) EXPECT_EQ(line(sim, n), "") << n;
}

Parsed parse_for(const std::set<std::string>& needed) {
  support::Diagnostics diags;
  ParseOptions options;
  options.file = "k.metal";
  options.text = kKernels;
  options.conformance = false;
  options.needed_entry_points = needed;
  Unit unit = parse(options, diags);
  return {std::move(diags), std::move(unit)};
}

std::set<std::string> host_names(const Unit& unit) {
  std::set<std::string> names;
  for (const auto& e : unit.entry_points()) names.insert(e.host_name);
  return names;
}

// A spec names its entries: the instantiations that declare none of them are not read (ggml's
// 600 are most of its parse), but those not on lines of their own and macro invocations that
// declare a needed one (with its neighbours) are; and the simulator's copy is the same.
TEST(MslInstantiations, OnlyThoseOfTheNeededEntriesAreRead) {
  Parsed all = parse_text(kKernels);
  Parsed some = parse_for({"scale_h", "add2_half"});
  ASSERT_EQ(some.diags.error_count(), 0) << some.diags.format_all();
  EXPECT_EQ(host_names(some.unit), (std::set<std::string>{"scale_h", "add1_half", "add2_half", "scale_s", "plain"}));
  EXPECT_EQ(host_names(all.unit).size(), 10u);
  EXPECT_EQ(some.unit.simulator_source(), all.unit.simulator_source());
}

// A name no instantiation declares leaves every droppable one out; the caller (a spec's entries)
// parses again in full to say which entries the file has.
TEST(MslInstantiations, AnUnknownNeededNameLeavesOnlyTheUndroppable) {
  Parsed p = parse_for({"no_such_kernel"});
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(host_names(p.unit), (std::set<std::string>{"scale_s", "plain"}));
}

}  // namespace instantiations_test
}  // namespace mtlgen::msl::testing
