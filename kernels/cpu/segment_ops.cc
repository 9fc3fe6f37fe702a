// UnsortedSegmentSum: output[ids[i], ...] += data[i, ...]. What densifies an
// IndexedSlices gradient (ops/gradients.h).
//
// Shapes: data [I..., R...] with ids [I...]; output [num_segments, R...].
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/tensor_views.h"
#include "kernels/cpu/cwise_ops.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

template <typename T>
class UnsortedSegmentSumOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    TW_ASSIGN_OR_RETURN(int64_t num_segments, IntScalar(ctx->input(2), "num_segments"));
    if (num_segments < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_segments must be non-negative, got ", num_segments));
    }
    if (ids.dtype() != DT_INT32 && ids.dtype() != DT_INT64) {
      return absl::UnimplementedError(
          absl::StrCat("UnsortedSegmentSum on CPU takes int32 or int64 "
                       "segment_ids, got ",
                       DataTypeString(ids.dtype())));
    }
    if (ids.dims() > data.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("segment_ids of shape ", ids.shape().DebugString(),
                       " has more dimensions than data ", data.shape().DebugString()));
    }
    for (int i = 0; i < ids.dims(); ++i) {
      if (ids.shape().dim_size(i) != data.shape().dim_size(i)) {
        return absl::InvalidArgumentError(
            absl::StrCat("data.shape = ", data.shape().DebugString(),
                         " does not start with segment_ids.shape = ", ids.shape().DebugString()));
      }
    }
    std::vector<int64_t> out_dims = {num_segments};
    for (int i = ids.dims(); i < data.dims(); ++i) out_dims.push_back(data.shape().dim_size(i));
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
    const int64_t n = ids.NumElements();
    const int64_t row = n == 0 ? 0 : data.NumElements() / n;
    const T* in = RawData<T>(data);
    T* dst = RawData<T>(*out);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = IntAt(ids, i);
      if (id < 0) continue;  // dropped, as TensorFlow
      if (id >= num_segments) {
        return absl::InvalidArgumentError(absl::StrCat("segment_ids[", i, "] = ", id,
                                                       " is out of range [0, ", num_segments, ")"));
      }
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(dst + id * row, row) +=
          Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(in + i * row, row);
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(segment_ops) {
  RegisterTypedKernels<UnsortedSegmentSumOp, float, double, int32_t, int64_t>(
      KernelDefBuilder("UnsortedSegmentSum").Device(kDeviceCpu), "T");
}

}  // namespace
}  // namespace towerflow
