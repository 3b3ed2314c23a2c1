// Metal layout of argument structs as the host must fill them. clang's own sizes serve for
// scalars and for the shim's vectors (which follow Metal: float3 is 16 bytes aligned 16, half3
// 8 aligned 8, char3 4 aligned 4 — MSL specification, 2.2 "Vector Data Types", table of sizes
// and alignments). The shim makes packed_floatN the same type as floatN, so packed vectors are
// recognised by their typedef name and laid out as Metal does: N elements, aligned as one
// element (packed_float3: 12 bytes, aligned 4; MSL specification 2.2.3 "Packed Vector Types").
// Records are laid out here, field by field, so that packed members inside them count.
#include <regex>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

struct SizeAlign {
  uint64_t size = 0;
  uint64_t align = 1;
};

uint64_t align_up(uint64_t v, uint64_t a) { return a == 0 ? v : (v + a - 1) / a * a; }

CXType without_elaboration(CXType t) {
  while (t.kind == CXType_Elaborated) t = clang_Type_getNamedType(t);
  return t;
}

// N when `t` is spelled through a typedef named packed_<scalar>N.
std::optional<int> packed_components(CXType t) {
  static const std::regex kPacked(R"(packed_[a-z]+([234]))");
  for (int hops = 0; hops < 16; ++hops) {
    t = without_elaboration(t);
    if (t.kind != CXType_Typedef) return std::nullopt;
    CXCursor decl = clang_getTypeDeclaration(t);
    std::smatch m;
    std::string name = spelling(decl);
    if (std::regex_match(name, m, kPacked)) return std::stoi(m[1]);
    t = clang_getTypedefDeclUnderlyingType(decl);
  }
  return std::nullopt;
}

SizeAlign clang_size_align(CXType t) {
  long long size = clang_Type_getSizeOf(t), align = clang_Type_getAlignOf(t);
  return {size > 0 ? static_cast<uint64_t>(size) : 0, align > 0 ? static_cast<uint64_t>(align) : 1};
}

std::vector<FieldLayout> layout_fields(CXType record, SizeAlign& total);

SizeAlign metal_size_align(CXType t) {
  if (auto n = packed_components(t)) {
    CXType element = clang_Type_getTemplateArgumentAsType(clang_getCanonicalType(t), 0);
    SizeAlign e = clang_size_align(element);
    return {e.size * static_cast<uint64_t>(*n), e.size};
  }
  CXType canonical = clang_getCanonicalType(t);
  if (canonical.kind == CXType_ConstantArray) {
    SizeAlign e = metal_size_align(clang_getArrayElementType(t));
    return {e.size * static_cast<uint64_t>(clang_getArraySize(t)), e.align};
  }
  if (is_user_record(t)) {
    SizeAlign total;
    layout_fields(t, total);
    return total;
  }
  return clang_size_align(t);
}

FieldLayout layout_field(CXCursor field, uint64_t& end, uint64_t& max_align) {
  CXType type = clang_getCursorType(field);
  FieldLayout f;
  f.name = spelling(field);
  SizeAlign sa = metal_size_align(type);
  f.offset = align_up(end, sa.align);
  f.size = sa.size;
  f.align = sa.align;
  CXType element = type;
  while (clang_getCanonicalType(element).kind == CXType_ConstantArray) {
    long long n = clang_getArraySize(element);
    f.array_count = (f.array_count ? f.array_count : 1) * static_cast<uint64_t>(n > 0 ? n : 0);
    element = clang_getArrayElementType(element);
  }
  f.type = msl_type_name(spelling(element));
  if (is_user_record(element)) {
    SizeAlign unused;
    f.fields = layout_fields(element, unused);
  }
  end = f.offset + f.size;
  max_align = std::max(max_align, sa.align);
  return f;
}

std::vector<FieldLayout> layout_fields(CXType record, SizeAlign& total) {
  std::vector<CXCursor> cursors;
  clang_Type_visitFields(
      clang_getCanonicalType(record),
      [](CXCursor c, CXClientData data) {
        static_cast<std::vector<CXCursor>*>(data)->push_back(c);
        return CXVisit_Continue;
      },
      &cursors);
  std::vector<FieldLayout> fields;
  uint64_t end = 0, max_align = 1;
  for (CXCursor c : cursors) fields.push_back(layout_field(c, end, max_align));
  total = {align_up(end, max_align), max_align};
  return fields;
}

}  // namespace

bool is_user_record(CXType t) {
  CXType canonical = clang_getCanonicalType(t);
  if (canonical.kind != CXType_Record) return false;
  CXCursor decl = clang_getTypeDeclaration(canonical);
  CXSourceLocation at = clang_getCursorLocation(decl);
  CXFile file = nullptr;
  clang_getExpansionLocation(at, &file, nullptr, nullptr, nullptr);
  return file && !clang_Location_isInSystemHeader(at) && str(clang_getFileName(file)).rfind(kShimDir, 0) != 0;
}

std::optional<StructLayout> metal_struct_layout(CXType record) {
  if (!is_user_record(record)) return std::nullopt;
  StructLayout layout;
  SizeAlign total;
  layout.name = msl_type_name(spelling(clang_getCanonicalType(record)));
  layout.fields = layout_fields(record, total);
  layout.size = total.size;
  layout.align = total.align;
  return layout;
}

// clang's spelling of an instantiated type, as MSL users write it.
std::string msl_type_name(std::string s) {
  static const std::vector<std::pair<std::regex, std::string>> kRewrites = {
      {std::regex(R"(\b(struct|class|union) )"), ""},
      {std::regex(R"(\bmetal::)"), ""},
      {std::regex(R"(\b__fp16\b)"), "half"},
      {std::regex(R"(\bunsigned int\b)"), "uint"},
      {std::regex(R"(\bunsigned short\b)"), "ushort"},
      {std::regex(R"(\bunsigned char\b)"), "uchar"},
      {std::regex(R"(\bunsigned long\b)"), "ulong"},
      {std::regex(R"(\bsigned char\b)"), "char"},
      {std::regex(R"(\bvec<(\w+), ([234])>)"), "$1$2"},
  };
  for (const auto& [pattern, replacement] : kRewrites) s = std::regex_replace(s, pattern, replacement);
  return s;
}

}  // namespace mtlgen::msl
