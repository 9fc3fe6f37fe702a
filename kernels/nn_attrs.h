// The attrs of BiasAdd, BiasAddV1 and BiasAddGrad, read and checked the same
// way by the CPU and GPU kernels.
#ifndef TOWERFLOW_KERNELS_NN_ATTRS_H_
#define TOWERFLOW_KERNELS_NN_ATTRS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel.h"

namespace towerflow {

// Whether the bias goes to dimension 1 (data_format NCHW) rather than the
// last (NHWC; BiasAddV1 has no data_format and is always so).
// InvalidArgument for any other data_format, with TF's message.
inline absl::StatusOr<bool> BiasIsNchw(const KernelConstruction& c) {
  if (c.def().op() == "BiasAddV1") return false;
  std::string format;
  TW_RETURN_IF_ERROR(c.GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW") {
    return absl::InvalidArgumentError(absl::StrCat("Unknown data_format: ", format));
  }
  return format == "NCHW";
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_NN_ATTRS_H_
