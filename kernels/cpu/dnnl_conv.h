// Float 2-D convolutions (forward, backward data, backward filter) on
// oneDNN (Debian's libdnnl), the fast path of the Conv2D kernels; the
// im2col + OpenBLAS path in conv_ops.cc remains for double and for
// configurations oneDNN declines.
//
// Tensors are NHWC, filters HWIO (TF's layouts); oneDNN is told so and
// picks its own weight layout, reordering filters in and filter gradients
// out. Primitives are made per call (oneDNN caches them by descriptor).
// oneDNN runs on its own OpenMP threads.
#ifndef TOWERFLOW_KERNELS_CPU_DNNL_CONV_H_
#define TOWERFLOW_KERNELS_CPU_DNNL_CONV_H_

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels/cpu/fused_ops.h"
#include "kernels/window.h"

namespace towerflow {

enum class ConvPass { kForward, kBackwardInput, kBackwardFilter };

// What a forward pass adds to its output in the same primitive (oneDNN's
// bias and eltwise post-op): y = activation(conv + bias[oc]).
struct ConvPostOps {
  const float* bias = nullptr;  // [out_channels], or none
  FusedActivation activation = FusedActivation::kNone;
};

// Runs `pass` for geometry `w` with `out_channels` filters:
//   kForward:        y [N,OH,OW,OC]   from x [N,H,W,C] and filter [KH,KW,C,OC]
//   kBackwardInput:  dx [N,H,W,C]     from filter and dy [N,OH,OW,OC]
//   kBackwardFilter: df [KH,KW,C,OC]  from x and dy
// With `groups` G > 1 (a grouped convolution, G dividing C and OC), the
// filter is [KH,KW,C/G,OC] and group g maps input channels
// [g*C/G, (g+1)*C/G) to output channels [g*OC/G, (g+1)*OC/G); G = C is
// DepthwiseConv2dNative with its [KH,KW,C,M] filter read as [KH,KW,1,C*M].
// (the unused input pointer may be null). `post` applies to kForward only.
// Returns false, having written
// nothing, when oneDNN has no implementation for the case or rejects its
// parameters; Internal for other oneDNN failures.
absl::StatusOr<bool> DnnlConv2D(ConvPass pass, const Window2D& w, int64_t out_channels,
                                const float* x, const float* filter, const float* dy, float* out,
                                int64_t groups = 1, const ConvPostOps& post = {});

// Whether the Conv2D kernels use oneDNN for float (default true); tests
// turn it off to compare against the im2col path.
std::atomic<bool>& UseDnnlConvolutions();

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_DNNL_CONV_H_
