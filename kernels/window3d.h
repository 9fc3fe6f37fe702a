// Shared geometry of the 3-D windowed ops (Conv3D, MaxPool3D, AvgPool3D and
// their gradients): attrs parsed and checked once, per-call output sizes
// and paddings by TensorFlow's GetWindowedOutputSize rules. The kernels
// compute in NDHWC ([batch, planes, rows, cols, channels]); NCDHW tensors
// are transposed in and out.
#ifndef TOWERFLOW_KERNELS_WINDOW3D_H_
#define TOWERFLOW_KERNELS_WINDOW3D_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/window_util.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/tensor.h"

namespace towerflow {

// Spatial arrays are in (planes, rows, cols) order; `pad` is the padding
// before each (SAME puts any odd pixel after).
struct Window3D {
  int64_t batch = 0, channels = 0;
  std::array<int64_t, 3> in{}, k{}, stride{1, 1, 1}, dilation{1, 1, 1}, out{}, pad{};

  int64_t InPixels() const { return in[0] * in[1] * in[2]; }
  int64_t OutPixels() const { return out[0] * out[1] * out[2]; }
  int64_t Taps() const { return k[0] * k[1] * k[2]; }
  // Output pixel p's window start along spatial dim d (may be negative).
  int64_t Start(int d, int64_t o) const { return o * stride[d] - pad[d]; }
};

// The attrs a 3-D windowed op shares: strides, dilations (convolutions),
// ksize (pooling), padding (SAME or VALID), data_format (absent in the
// deprecated Conv3DBackpropInput/Filter: NDHWC).
struct Window3DAttrs {
  bool ncdhw = false;
  Padding padding = Padding::kValid;
  std::array<int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1}, k{1, 1, 1};

  // Reads and checks the attrs: 5 entries each, 1 in the batch and depth
  // dims, positive spatial values.
  absl::Status Init(const KernelConstruction& c, bool has_dilations, bool has_ksize);

  // The geometry for NDHWC dims `in` and a window `k`; InvalidArgument for
  // a rank other than 5 or negative sizes.
  absl::StatusOr<Window3D> Compute(absl::Span<const int64_t> ndhwc,
                                   const std::array<int64_t, 3>& k) const;

  // A tensor's or shape's dims in NDHWC (as given for NDHWC).
  std::vector<int64_t> Ndhwc(absl::Span<const int64_t> dims) const;
  // NDHWC dims in the op's format.
  std::vector<int64_t> InFormat(absl::Span<const int64_t> ndhwc) const;
};

// Conv3D's geometry for NDHWC input dims and a [KD,KH,KW,C,OC] filter:
// both 5-D, depths equal, a non-empty window.
absl::StatusOr<Window3D> Conv3DGeometry(const Window3DAttrs& attrs, absl::Span<const int64_t> in,
                                        absl::Span<const int64_t> f);

// NCDHW <-> NDHWC copies of float or double tensors; ToNdhwc's from
// `allocator`.
absl::StatusOr<Tensor> ToNdhwc(const Eigen::ThreadPoolDevice& d, Allocator* allocator,
                               const Tensor& ncdhw);
absl::Status FromNdhwc(const Eigen::ThreadPoolDevice& d, const Tensor& ndhwc, Tensor* ncdhw);

// A kernel's 5-D input in NDHWC (a transposed copy for NCDHW);
// InvalidArgument naming `what` for another rank.
absl::StatusOr<Tensor> NdhwcInput(KernelContext* ctx, const Window3DAttrs& attrs, const Tensor& t,
                                  const char* what);
// Allocates output 0 with NDHWC dims `ndhwc` in the op's format; returns it
// with the NDHWC buffer to write (itself, or scratch for NCDHW), which
// FinishNdhwcOutput transposes into it.
absl::StatusOr<std::pair<Tensor*, Tensor>> NdhwcOutput(KernelContext* ctx,
                                                       const Window3DAttrs& attrs,
                                                       const std::vector<int64_t>& ndhwc,
                                                       DataType dtype);
absl::Status FinishNdhwcOutput(KernelContext* ctx, const Window3DAttrs& attrs, const Tensor& ndhwc,
                               Tensor* out);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_WINDOW3D_H_
