// The 16-bit floating-point element types: `half` (IEEE binary16, DT_HALF)
// and `bfloat16` (DT_BFLOAT16), as Eigen's types, which TensorFlow uses too.
// Both convert to and from float with round-to-nearest-even; their
// arithmetic computes in float and rounds once, so a + b is the correctly
// rounded sum.
//
//   half h(1.5f);
//   float f = static_cast<float>(h);
//   uint16_t bits = Float16Bits(h);   // 0x3e00
//
// Kept out of core/types.h so that only code which handles 16-bit values
// parses Eigen/Core. Thread-safe (values only).
#ifndef TOWERFLOW_CORE_FLOAT16_H_
#define TOWERFLOW_CORE_FLOAT16_H_

#include <cstdint>
#include <type_traits>

#include "Eigen/Core"
#include "core/types.h"

namespace towerflow {

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;

template <>
struct DataTypeToEnum<half> {
  static constexpr DataType value = DT_HALF;
};
template <>
struct DataTypeToEnum<bfloat16> {
  static constexpr DataType value = DT_BFLOAT16;
};

// half or bfloat16.
template <typename T>
inline constexpr bool kIsFloat16 = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// Floating point of any width: float, double, half, bfloat16.
template <typename T>
inline constexpr bool kIsFloatingPoint = std::is_floating_point_v<T> || kIsFloat16<T>;

// The bit pattern, as TensorProto's half_val carries both types.
template <typename T, typename = std::enable_if_t<kIsFloat16<T>>>
inline uint16_t Float16Bits(T value) {
  return Eigen::numext::bit_cast<uint16_t>(value);
}
template <typename T, typename = std::enable_if_t<kIsFloat16<T>>>
inline T Float16FromBits(uint16_t bits) {
  return Eigen::numext::bit_cast<T>(bits);
}

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_FLOAT16_H_
