// Element types: names, sizes, ref types, and the type sets op schemas use.
//
// `DataType` is the protobuf enum from proto/types.proto (TensorFlow's
// numbers). Names follow TensorFlow's C++ spelling: DataTypeString(DT_FLOAT)
// is "float", DataTypeString(DT_FLOAT_REF) is "float_ref".
//
//   DataType dt;
//   if (!DataTypeFromString("int64", &dt)) ...;
//   int bytes = DataTypeSize(dt);   // 8
//
// Everything here is a pure function; thread-safe.
#ifndef TOWERFLOW_CORE_TYPES_H_
#define TOWERFLOW_CORE_TYPES_H_

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/types.pb.h"

namespace towerflow {

using DataTypeVector = absl::InlinedVector<DataType, 4>;
using DataTypeSlice = absl::Span<const DataType>;

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;
template <typename T>
inline constexpr bool kIsComplex = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

// The offset between a type and its reference type (DT_FLOAT_REF - DT_FLOAT).
inline constexpr int kDataTypeRefOffset = 100;

// True for values the enum names (DT_INVALID excluded), ref types included.
bool IsValidDataType(int value);

// TensorFlow's C++ name: "float", "int32", "float_ref"; for a value outside
// the enum, "unknown dtype enum (N)".
std::string DataTypeString(DataType dtype);

// Parses "float", "float32", "int64", "float_ref", or the enum name
// "DT_FLOAT". Returns false for anything else.
bool DataTypeFromString(absl::string_view name, DataType* dtype);

// "float, int32" for a list of types.
std::string DataTypeSliceString(DataTypeSlice types);

inline bool IsRefType(DataType dtype) { return static_cast<int>(dtype) > kDataTypeRefOffset; }
inline DataType BaseType(DataType dtype) {
  return IsRefType(dtype) ? static_cast<DataType>(static_cast<int>(dtype) - kDataTypeRefOffset)
                          : dtype;
}
// REQUIRES: !IsRefType(dtype) and dtype != DT_INVALID.
inline DataType MakeRefType(DataType dtype) {
  return static_cast<DataType>(static_cast<int>(BaseType(dtype)) + kDataTypeRefOffset);
}

// Bytes per element of a fixed-size type (float 4, bool 1, complex64 8, ...);
// 0 for string, resource, variant, sub-byte types and DT_INVALID. Ref types
// have the size of their base type.
int DataTypeSize(DataType dtype);

bool DataTypeIsFloating(DataType dtype);  // half, bfloat16, float, double
bool DataTypeIsInteger(DataType dtype);   // signed and unsigned ints
bool DataTypeIsUnsigned(DataType dtype);
bool DataTypeIsComplex(DataType dtype);
bool DataTypeIsQuantized(DataType dtype);

// The type sets TensorFlow's op schemas name (`T: numbertype`).
// numbertype: real, complex and quantized numbers.
const DataTypeVector& NumberTypes();
// realnumbertype: numbertype without complex and quantized types.
const DataTypeVector& RealNumberTypes();
const DataTypeVector& QuantizedTypes();
// Every concrete type (no refs, no DT_INVALID).
const DataTypeVector& AllTypes();

// Maps a C++ element type to its DataType: DataTypeToEnum<float>::value is
// DT_FLOAT. Defined for the types Towerflow stores in host memory.
template <typename T>
struct DataTypeToEnum;

#define TW_MATCH_TYPE_AND_ENUM_(TYPE, ENUM) \
  template <>                               \
  struct DataTypeToEnum<TYPE> {             \
    static constexpr DataType value = ENUM; \
  }
TW_MATCH_TYPE_AND_ENUM_(float, DT_FLOAT);
TW_MATCH_TYPE_AND_ENUM_(double, DT_DOUBLE);
TW_MATCH_TYPE_AND_ENUM_(int32_t, DT_INT32);
TW_MATCH_TYPE_AND_ENUM_(int64_t, DT_INT64);
TW_MATCH_TYPE_AND_ENUM_(uint8_t, DT_UINT8);
TW_MATCH_TYPE_AND_ENUM_(uint16_t, DT_UINT16);
TW_MATCH_TYPE_AND_ENUM_(uint32_t, DT_UINT32);
TW_MATCH_TYPE_AND_ENUM_(uint64_t, DT_UINT64);
TW_MATCH_TYPE_AND_ENUM_(int16_t, DT_INT16);
TW_MATCH_TYPE_AND_ENUM_(int8_t, DT_INT8);
TW_MATCH_TYPE_AND_ENUM_(bool, DT_BOOL);
TW_MATCH_TYPE_AND_ENUM_(std::string, DT_STRING);
TW_MATCH_TYPE_AND_ENUM_(complex64, DT_COMPLEX64);
TW_MATCH_TYPE_AND_ENUM_(complex128, DT_COMPLEX128);
#undef TW_MATCH_TYPE_AND_ENUM_

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_TYPES_H_
