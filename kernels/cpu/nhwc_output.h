// Output 0 of a CPU kernel that computes in NHWC whatever its data_format:
// NCHW outputs are written to an NHWC scratch tensor and transposed at the
// end (convolution, depthwise convolution, pooling).
#ifndef TOWERFLOW_KERNELS_CPU_NHWC_OUTPUT_H_
#define TOWERFLOW_KERNELS_CPU_NHWC_OUTPUT_H_

#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "kernels/window.h"

namespace towerflow {

// Allocates output 0 with the NHWC dims `nhwc` in the op's format and
// returns it with the NHWC buffer to write: the output itself, or scratch
// for NCHW.
inline absl::StatusOr<std::pair<Tensor*, Tensor>> NhwcOutput(KernelContext* ctx, bool nchw,
                                                             const std::vector<int64_t>& nhwc,
                                                             DataType dtype) {
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(nchw ? NhwcToNchwDims(nhwc) : nhwc));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
  if (!nchw) return std::make_pair(out, *out);
  TW_ASSIGN_OR_RETURN(Tensor scratch, ctx->allocate_temp(dtype, TensorShape(nhwc)));
  return std::make_pair(out, scratch);
}

// Transposes the NHWC buffer into the NCHW output (nothing for NHWC).
inline absl::Status FinishNhwcOutput(KernelContext* ctx, bool nchw, const Tensor& nhwc,
                                     Tensor* out) {
  if (!nchw) return absl::OkStatus();
  return FromNhwc(ctx->eigen_cpu_device(), nhwc, out);
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_NHWC_OUTPUT_H_
