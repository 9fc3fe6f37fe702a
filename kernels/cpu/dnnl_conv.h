// Float 2-D convolutions (forward, backward data, backward filter) on
// oneDNN (Debian's libdnnl), the fast path of the Conv2D kernels; the
// im2col + OpenBLAS path in conv_ops.cc remains for double and for
// configurations oneDNN declines.
//
// Tensors are NHWC, filters HWIO (TF's layouts); oneDNN is told so and
// picks its own weight layout, reordering filters in and filter gradients
// out. Primitives are made per call (oneDNN caches them by descriptor).
// oneDNN runs on its own OpenMP threads.
//
// Note [Winograd convolutions]
// A 3x3 stride-1 convolution of at least 32 channels (in multiples of 16)
// runs as Winograd's F(4x4, 3x3) (oneDNN's jit_wino_4x3, AVX-512), all three
// passes: 4x fewer multiplications (less the transforms), for results that differ from the
// direct convolution's in the sixth digit (cuDNN makes the same trade under
// TF on GPUs). It works in oneDNN's blocked layout, so the activations are
// reordered in and out, through temporaries from the kernel's allocator.
// Per pass with those reorders, batch 128, on the 2-core AVX-512 VM (two
// runs, ms, direct against Winograd): 32 channels at 16x16, 3.0-4.5 against
// 2.2-3.6; 64 channels at 8x8, 2.4-4.1 against 1.5-2.7; 16 channels at
// 32x32, 3.3-5.2 against 5.5-28, so those stay direct. Where oneDNN has no
// Winograd kernel (CPUs before AVX-512) the direct one runs.
// UseWinogradConvolutions() turns it off.
#ifndef TOWERFLOW_KERNELS_CPU_DNNL_CONV_H_
#define TOWERFLOW_KERNELS_CPU_DNNL_CONV_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
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

// A float tensor of `floats` elements for oneDNN's own layouts, alive while
// the caller holds it (the kernels give their KernelContext's
// allocate_temp).
using DnnlTemp = std::function<absl::StatusOr<Tensor>(int64_t floats)>;

// Runs `pass` for geometry `w` with `out_channels` filters:
//   kForward:        y [N,OH,OW,OC]   from x [N,H,W,C] and filter [KH,KW,C,OC]
//   kBackwardInput:  dx [N,H,W,C]     from filter and dy [N,OH,OW,OC]
//   kBackwardFilter: df [KH,KW,C,OC]  from x and dy
// With `groups` G > 1 (a grouped convolution, G dividing C and OC), the
// filter is [KH,KW,C/G,OC] and group g maps input channels
// [g*C/G, (g+1)*C/G) to output channels [g*OC/G, (g+1)*OC/G); G = C is
// DepthwiseConv2dNative with its [KH,KW,C,M] filter read as [KH,KW,1,C*M].
// (the unused input pointer may be null). `post` applies to kForward only.
// With `temp`, a case for Winograd (Note [Winograd convolutions]) runs as
// Winograd; without, always direct. Returns false, having written
// nothing, when oneDNN has no implementation for the case or rejects its
// parameters; Internal for other oneDNN failures, and temp's errors.
absl::StatusOr<bool> DnnlConv2D(ConvPass pass, const Window2D& w, int64_t out_channels,
                                const float* x, const float* filter, const float* dy, float* out,
                                int64_t groups = 1, const ConvPostOps& post = {},
                                const DnnlTemp* temp = nullptr);

// Whether the Conv2D kernels use oneDNN for float (default true); tests
// turn it off to compare against the im2col path.
std::atomic<bool>& UseDnnlConvolutions();

// Whether DnnlConv2D may choose Winograd (default true); tests turn it off
// to compare against the direct convolution.
std::atomic<bool>& UseWinogradConvolutions();

// How many passes have run as Winograd in this process (tests check that
// the path they mean to test ran).
int64_t WinogradPassesRun();

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_DNNL_CONV_H_
