#include "core/types.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace towerflow {
namespace {

struct TypeInfo {
  DataType dtype;
  const char* name;  // TensorFlow's C++ name
  int size;          // bytes per element, 0 when not fixed-size
};

// One row per concrete type; ref types are derived from these.
constexpr TypeInfo kTypes[] = {
    {DT_FLOAT, "float", 4},
    {DT_DOUBLE, "double", 8},
    {DT_INT32, "int32", 4},
    {DT_UINT8, "uint8", 1},
    {DT_INT16, "int16", 2},
    {DT_INT8, "int8", 1},
    {DT_STRING, "string", 0},
    {DT_COMPLEX64, "complex64", 8},
    {DT_INT64, "int64", 8},
    {DT_BOOL, "bool", 1},
    {DT_QINT8, "qint8", 1},
    {DT_QUINT8, "quint8", 1},
    {DT_QINT32, "qint32", 4},
    {DT_BFLOAT16, "bfloat16", 2},
    {DT_QINT16, "qint16", 2},
    {DT_QUINT16, "quint16", 2},
    {DT_UINT16, "uint16", 2},
    {DT_COMPLEX128, "complex128", 16},
    {DT_HALF, "half", 2},
    {DT_RESOURCE, "resource", 0},
    {DT_VARIANT, "variant", 0},
    {DT_UINT32, "uint32", 4},
    {DT_UINT64, "uint64", 8},
    {DT_FLOAT8_E5M2, "float8_e5m2", 1},
    {DT_FLOAT8_E4M3FN, "float8_e4m3fn", 1},
    {DT_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", 1},
    {DT_FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz", 1},
    {DT_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", 1},
    {DT_INT4, "int4", 0},
    {DT_UINT4, "uint4", 0},
    {DT_INT2, "int2", 0},
    {DT_UINT2, "uint2", 0},
    {DT_FLOAT4_E2M1FN, "float4_e2m1fn", 0},
};

const TypeInfo* FindInfo(DataType dtype) {
  const DataType base = BaseType(dtype);
  for (const TypeInfo& info : kTypes) {
    if (info.dtype == base) return &info;
  }
  return nullptr;
}

}  // namespace

bool IsValidDataType(int value) {
  if (value == DT_INVALID || value == kDataTypeRefOffset) return false;
  const int base = value > kDataTypeRefOffset ? value - kDataTypeRefOffset : value;
  // The enum lists the _REF values themselves (DT_INT64_REF = 109): a ref
  // of one (209, found by fuzz/tensor_proto) is not a type.
  return DataType_IsValid(base) && base != DT_INVALID && base < kDataTypeRefOffset;
}

std::string DataTypeString(DataType dtype) {
  if (!IsValidDataType(dtype)) {
    return absl::StrCat("unknown dtype enum (", static_cast<int>(dtype), ")");
  }
  const TypeInfo* info = FindInfo(dtype);
  if (info == nullptr) return absl::StrCat("unknown dtype enum (", static_cast<int>(dtype), ")");
  return IsRefType(dtype) ? absl::StrCat(info->name, "_ref") : info->name;
}

bool DataTypeFromString(absl::string_view name, DataType* dtype) {
  bool ref = false;
  if (absl::EndsWith(name, "_ref")) {
    ref = true;
    name.remove_suffix(4);
  } else if (absl::EndsWith(name, "_REF") && absl::StartsWith(name, "DT_")) {
    ref = true;
    name.remove_suffix(4);
  }
  std::string lower = absl::AsciiStrToLower(name);
  if (absl::StartsWith(lower, "dt_")) lower = lower.substr(3);
  // Python spellings.
  if (lower == "float32") lower = "float";
  if (lower == "float64") lower = "double";
  if (lower == "float16") lower = "half";
  for (const TypeInfo& info : kTypes) {
    if (lower == info.name) {
      *dtype = ref ? MakeRefType(info.dtype) : info.dtype;
      return true;
    }
  }
  return false;
}

std::string DataTypeSliceString(DataTypeSlice types) {
  return absl::StrJoin(types, ", ",
                       [](std::string* out, DataType dt) { out->append(DataTypeString(dt)); });
}

int DataTypeSize(DataType dtype) {
  const TypeInfo* info = FindInfo(dtype);
  return info == nullptr ? 0 : info->size;
}

bool DataTypeIsFloating(DataType dtype) {
  switch (BaseType(dtype)) {
    case DT_HALF:
    case DT_BFLOAT16:
    case DT_FLOAT:
    case DT_DOUBLE:
      return true;
    default:
      return false;
  }
}

bool DataTypeIsUnsigned(DataType dtype) {
  switch (BaseType(dtype)) {
    case DT_UINT8:
    case DT_UINT16:
    case DT_UINT32:
    case DT_UINT64:
      return true;
    default:
      return false;
  }
}

bool DataTypeIsInteger(DataType dtype) {
  switch (BaseType(dtype)) {
    case DT_INT8:
    case DT_INT16:
    case DT_INT32:
    case DT_INT64:
      return true;
    default:
      return DataTypeIsUnsigned(dtype);
  }
}

bool DataTypeIsComplex(DataType dtype) {
  const DataType base = BaseType(dtype);
  return base == DT_COMPLEX64 || base == DT_COMPLEX128;
}

bool DataTypeIsQuantized(DataType dtype) {
  switch (BaseType(dtype)) {
    case DT_QINT8:
    case DT_QUINT8:
    case DT_QINT16:
    case DT_QUINT16:
    case DT_QINT32:
      return true;
    default:
      return false;
  }
}

const DataTypeVector& RealNumberTypes() {
  static const DataTypeVector* const kTypesList =
      new DataTypeVector{DT_FLOAT, DT_DOUBLE,   DT_INT32,  DT_UINT8, DT_INT16,  DT_INT8,
                         DT_INT64, DT_BFLOAT16, DT_UINT16, DT_HALF,  DT_UINT32, DT_UINT64};
  return *kTypesList;
}

const DataTypeVector& QuantizedTypes() {
  static const DataTypeVector* const kTypesList =
      new DataTypeVector{DT_QINT8, DT_QUINT8, DT_QINT16, DT_QUINT16, DT_QINT32};
  return *kTypesList;
}

const DataTypeVector& NumberTypes() {
  static const DataTypeVector* const kTypesList = [] {
    auto* types = new DataTypeVector(RealNumberTypes());
    types->push_back(DT_COMPLEX64);
    types->push_back(DT_COMPLEX128);
    for (DataType q : QuantizedTypes()) types->push_back(q);
    return types;
  }();
  return *kTypesList;
}

const DataTypeVector& AllTypes() {
  static const DataTypeVector* const kTypesList = [] {
    auto* types = new DataTypeVector;
    for (const TypeInfo& info : kTypes) types->push_back(info.dtype);
    return types;
  }();
  return *kTypesList;
}

}  // namespace towerflow
