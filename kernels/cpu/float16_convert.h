// Conversions between float and the 16-bit float types over the intra-op
// pool, for the 16-bit kernels (float16_kernels.cc) and Cast. half goes
// through F16C's eight-lane instructions where the CPU has them (Eigen's
// tensor conversion of half is one element at a time: it took 60% of a
// mixed_float16 ResNet-20 step); bfloat16 through Eigen's. Both round to
// nearest even, bit for bit as Eigen's scalar conversions. Thread-safe.
#ifndef TOWERFLOW_KERNELS_CPU_FLOAT16_CONVERT_H_
#define TOWERFLOW_KERNELS_CPU_FLOAT16_CONVERT_H_

#include "framework/tensor_views.h"

namespace towerflow {

// REQUIRES: `from` is half or bfloat16 and `to` float, or `from` float and
// `to` half or bfloat16; equal element counts.
void ConvertFloat16(const Eigen::ThreadPoolDevice& d, const Tensor& from, Tensor* to);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_FLOAT16_CONVERT_H_
