#include "verify/inputs.h"

#include "mtlgen_testdata.h"

namespace mtlgen::verify {

namespace {

namespace td = mtlgen::testdata;

td::Dist to_testdata(ir::Distribution d) {
  switch (d) {
    case ir::Distribution::normal: return td::Dist::normal;
    case ir::Distribution::uniform: return td::Dist::uniform;
    case ir::Distribution::constant: return td::Dist::constant;
    case ir::Distribution::choice: return td::Dist::choice;
    case ir::Distribution::iota: return td::Dist::iota;
    case ir::Distribution::bits: return td::Dist::bits;
  }
  return td::Dist::normal;
}

td::Fill to_testdata(const ir::InputFill& f) {
  td::Fill out;
  out.dist = to_testdata(f.dist);
  out.a = f.a;
  out.b = f.b;
  out.values = f.values;
  out.nan = f.nan_fraction;
  out.inf = f.inf_fraction;
  out.neg_inf = f.neg_inf_fraction;
  out.set = f.set;
  for (const auto& field : f.fields) out.fields.push_back({field.field, to_testdata(field.fill)});
  return out;
}

td::BlockLayout to_testdata(const ir::BlockLayout& layout) {
  td::BlockLayout out{layout.name, layout.size, {}};
  for (const auto& f : layout.fields) {
    out.fields.push_back({f.name, dtype_of(f.type), static_cast<uint64_t>(f.count), f.offset});
  }
  return out;
}

}  // namespace

DType dtype_of(ir::ScalarType type) {
  switch (type) {
    case ir::ScalarType::f32: return DType::f32;
    case ir::ScalarType::f16: return DType::f16;
    case ir::ScalarType::bf16: return DType::bf16;
    case ir::ScalarType::i8: return DType::i8;
    case ir::ScalarType::i16: return DType::i16;
    case ir::ScalarType::i32: return DType::i32;
    case ir::ScalarType::u16: return DType::u16;
    case ir::ScalarType::u32: return DType::u32;
    case ir::ScalarType::u8:
    case ir::ScalarType::bytes:
    case ir::ScalarType::boolean: return DType::u8;
  }
  return DType::u8;
}

void fill_input(const ir::InputFill& fill, ir::ScalarType type, void* data, size_t elements, uint64_t seed,
                const ir::BlockLayout* block) {
  if (block) {
    td::fill_blocks(to_testdata(fill), to_testdata(*block), data, elements * ir::info(type).size, seed);
  } else {
    td::fill_elements(to_testdata(fill), dtype_of(type), data, elements, seed);
  }
}

uint64_t buffer_seed(uint64_t case_seed, const std::string& buffer) { return td::buffer_seed(case_seed, buffer); }

}  // namespace mtlgen::verify
