#ifndef TOWERFLOW_FRAMEWORK_TENSOR_PRINT_H_
#define TOWERFLOW_FRAMEWORK_TENSOR_PRINT_H_

#include <cstdint>
#include <string>

#include "framework/tensor.h"

namespace towerflow {

// A tensor's values as tf.print and StringFormat show them (TF's
// SummarizeValue with print_v2): nested brackets, rows on their own lines,
// the first and last `max_entries` of each dimension around "...", floats
// in the fewest of 6 or 9 digits (15 or 17 for doubles) that read back
// exactly, strings quoted and C-escaped, bools as 1 and 0; a negative
// count shows every value. "[[1 2 3]\n [4 5 6]]".
std::string SummarizeForPrint(const Tensor& t, int64_t max_entries);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_TENSOR_PRINT_H_
