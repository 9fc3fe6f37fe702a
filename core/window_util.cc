#include "core/window_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/tensor_shape.h"

namespace towerflow {

absl::StatusOr<Padding> ParsePadding(absl::string_view padding) {
  if (padding == "VALID") return Padding::kValid;
  if (padding == "SAME") return Padding::kSame;
  if (padding == "EXPLICIT") return Padding::kExplicit;
  return absl::InvalidArgumentError(
      absl::StrCat("Unknown padding '", padding, "'; expected SAME, VALID or EXPLICIT"));
}

absl::Status GetWindowedOutputSize(int64_t input, int64_t filter, int64_t dilation, int64_t stride,
                                   Padding padding, int64_t* output, int64_t* pad_before,
                                   int64_t* pad_after) {
  if (stride <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("Stride must be > 0, got ", stride));
  }
  if (dilation <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("Dilation rate must be > 0, got ", dilation));
  }
  if (filter <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("Window size must be > 0, got ", filter));
  }
  // (filter - 1) * dilation + 1, checked.
  const int64_t spread = MultiplyWithoutOverflow(filter - 1, dilation);
  if (spread < 0 || spread == INT64_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("Window size ", filter, " with dilation ", dilation, " overflows"));
  }
  const int64_t effective = spread + 1;
  if (padding == Padding::kExplicit) {
    if (*pad_before < 0 || *pad_after < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Explicit paddings must be >= 0, got ", *pad_before, " and ", *pad_after));
    }
  }
  if (input < 0) {
    *output = -1;
    if (padding != Padding::kExplicit) *pad_before = *pad_after = -1;
    return absl::OkStatus();
  }
  const int64_t limit = INT64_MAX / 4;
  if (input > limit || effective > limit || stride > limit ||
      (padding == Padding::kExplicit && (*pad_before > limit || *pad_after > limit))) {
    return absl::InvalidArgumentError(absl::StrCat("Window arithmetic overflows: input ", input,
                                                   ", window ", effective, ", stride ", stride));
  }
  switch (padding) {
    case Padding::kValid:
      *output = (input - effective + stride) / stride;
      *pad_before = *pad_after = 0;
      break;
    case Padding::kSame: {
      *output = (input + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (*output - 1) * stride + effective - input);
      *pad_before = needed / 2;
      *pad_after = needed - *pad_before;
      break;
    }
    case Padding::kExplicit:
      *output = (input + *pad_before + *pad_after - effective + stride) / stride;
      break;
  }
  if (*output < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Computed output size would be negative: ", *output, " [input_size: ", input,
                     ", effective_filter_size: ", effective, ", stride: ", stride, "]"));
  }
  return absl::OkStatus();
}

}  // namespace towerflow
