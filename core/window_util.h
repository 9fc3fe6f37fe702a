// Output sizes of sliding-window ops (convolution, pooling), TensorFlow's
// GetWindowedOutputSize rules, shared by shape functions and kernels.
//
//   int64_t out, before, after;
//   TW_RETURN_IF_ERROR(GetWindowedOutputSize(28, 5, 1, 2, Padding::kSame,
//                                            &out, &before, &after));
//   // out == 14, before == 1, after == 2
//
// Pure functions; thread-safe.
#ifndef TOWERFLOW_CORE_WINDOW_UTIL_H_
#define TOWERFLOW_CORE_WINDOW_UTIL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {

enum class Padding { kValid, kSame, kExplicit };

// "VALID", "SAME" or "EXPLICIT"; InvalidArgument otherwise.
absl::StatusOr<Padding> ParsePadding(absl::string_view padding);

// Computes the output size along one dimension. `input` may be -1 (unknown),
// which gives -1. For kExplicit, *pad_before and *pad_after are read (and
// must be >= 0); otherwise they are written (SAME puts the odd pixel after).
// InvalidArgument when stride, dilation or filter is not positive, when
// the effective filter overflows, or when the output would be negative
// ("Computed output size would be negative: -2 [input_size: 3,
// effective_filter_size: 6, stride: 1]").
absl::Status GetWindowedOutputSize(int64_t input, int64_t filter, int64_t dilation, int64_t stride,
                                   Padding padding, int64_t* output, int64_t* pad_before,
                                   int64_t* pad_after);

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_WINDOW_UTIL_H_
