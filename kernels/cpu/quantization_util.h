// What the quantisation kernels share (TF's quantization_utils.h
// constants): a quantized type's ends and steps, and the float-to-int32
// conversion and NaN-keeping clamp of TF's x86 build. Only the kernels of
// //kernels:unfused_kernels include it (kernels/BUILD).
#ifndef TOWERFLOW_KERNELS_CPU_QUANTIZATION_UTIL_H_
#define TOWERFLOW_KERNELS_CPU_QUANTIZATION_UTIL_H_

#include <cstdint>
#include <limits>

namespace towerflow {
namespace quantization {

// A quantized type's integers (stored as the C++ integer Q), as int64.
template <typename Q>
constexpr int64_t kLowest = std::numeric_limits<Q>::min();
template <typename Q>
constexpr int64_t kHighest = std::numeric_limits<Q>::max();
// 2^bits, as TF's FloatToQuantizedStruct / QuantizedToFloatStruct hold it.
template <typename Q>
constexpr double kSteps = static_cast<double>(int64_t{1} << (8 * sizeof(Q)));

// cvttss2si: what a float-to-int32 cast compiles to on x86, INT32_MIN where
// the value does not fit (in C++ such a cast is undefined).
inline int32_t TruncateToInt32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

// x clamped to [lo, hi], NaN staying NaN (Eigen's cwiseMin/cwiseMax, as
// TF's kernels use them).
inline float Clamp(float x, float lo, float hi) {
  const float below = hi < x ? hi : x;
  return below < lo ? lo : below;
}

}  // namespace quantization
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_QUANTIZATION_UTIL_H_
