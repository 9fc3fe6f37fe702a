// The sparse segment reductions (tf.nn.embedding_lookup_sparse's):
//   SparseSegment{Sum,Mean,SqrtN}(data, indices, segment_ids): output row s
//     combines the data rows indices[i] of every i with segment_ids[i] == s
//     (sum, the sum over the count, or over its square root); segment_ids
//     sorted; output has segment_ids[N-1] + 1 rows (num_segments for the
//     *WithNumSegments forms), a segment no i names all zeros, as TF.
//   SparseSegment{Sum,Mean,SqrtN}Grad(grad, indices, segment_ids,
//     output_dim0): their gradient, grad's row segment_ids[i], scaled as the
//     forward scaled it, added to output row indices[i].
// TF's checks and messages throughout; each index is checked before
// anything is written.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

enum class Scale { kSum, kMean, kSqrtN };

template <typename T>
using Row = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutableRow = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// What a segment of `count` rows is divided by.
double Divisor(Scale scale, int64_t count) {
  switch (scale) {
    case Scale::kMean:
      return static_cast<double>(count);
    case Scale::kSqrtN:
      return std::sqrt(static_cast<double>(count));
    default:
      return 1;
  }
}

// indices and segment_ids: vectors of one length.
absl::Status CheckIndexVectors(const Tensor& indices, const Tensor& ids) {
  if (indices.dims() != 1) return absl::InvalidArgumentError("indices should be a vector.");
  if (ids.dims() != 1) return absl::InvalidArgumentError("segment_ids should be a vector.");
  if (indices.NumElements() != ids.NumElements()) {
    return absl::InvalidArgumentError("segment_ids and indices should have same size.");
  }
  return absl::OkStatus();
}

template <typename T, Scale kScale, bool kCounted>
class SparseSegmentOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& ids = ctx->input(2);
    TW_RETURN_IF_ERROR(CheckIndexVectors(indices, ids));
    if (data.dims() < 1) return absl::InvalidArgumentError("data must be at least 1-D");
    const int64_t n = ids.NumElements(), data_rows = data.dim_size(0);
    int64_t segments = n == 0 ? 0 : IntAt(ids, n - 1) + 1;
    if (kCounted) {
      TW_ASSIGN_OR_RETURN(segments, IntScalar(ctx->input(3), "num_segments"));
      if (segments < 0) return absl::InvalidArgumentError("num_segments must be non-negative");
    }
    // Checked as TF: the ids sorted, then each in range and each index a
    // row of data.
    for (int64_t i = 1; i < n; ++i) {
      if (IntAt(ids, i) < IntAt(ids, i - 1)) {
        return absl::InvalidArgumentError("segment ids are not increasing");
      }
    }
    std::vector<int64_t> starts;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = IntAt(ids, i);
      if (kCounted && id >= segments) {
        return absl::InvalidArgumentError("segment ids must be < num_segments");
      }
      if (id < 0 || id >= segments) {
        return absl::InvalidArgumentError(
            absl::StrCat("Segment id ", id, " out of range [0, ", segments,
                         "), possibly because 'segment_ids' input is not sorted."));
      }
      const int64_t index = IntAt(indices, i);
      if (index < 0 || index >= data_rows) {
        return absl::InvalidArgumentError(
            absl::StrCat("Bad: indices[", i, "] == ", index, " out of range [0, ", data_rows, ")"));
      }
      if (i == 0 || id != IntAt(ids, i - 1)) starts.push_back(i);
    }
    starts.push_back(n);
    std::vector<int64_t> dims(data.shape().dim_sizes().begin(), data.shape().dim_sizes().end());
    dims[0] = segments;
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    T* dst = out->data<T>();
    std::fill_n(dst, out->NumElements(), T(0));
    const int64_t row = data_rows == 0 ? 0 : data.NumElements() / data_rows;
    if (row == 0) return absl::OkStatus();
    const T* in = data.data<T>();
    const int64_t runs = static_cast<int64_t>(starts.size()) - 1;
    // Each run writes its own output row.
    ctx->intra_op_pool()->ParallelFor(
        runs, (n / std::max<int64_t>(runs, 1) + 1) * row, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            Reduce(in, indices, ids, starts[r], starts[r + 1], row, dst);
          }
        });
    return absl::OkStatus();
  }

 private:
  static void Reduce(const T* in, const Tensor& indices, const Tensor& ids, int64_t first,
                     int64_t last, int64_t row, T* dst) {
    MutableRow<T> acc(dst + IntAt(ids, first) * row, row);
    for (int64_t i = first; i < last; ++i) acc += Row<T>(in + IntAt(indices, i) * row, row);
    if (kScale != Scale::kSum) acc /= static_cast<T>(Divisor(kScale, last - first));
  }
};

// SparseSegment*Grad(grad, indices, segment_ids, output_dim0): the dense
// gradient of the data, [output_dim0, ...]. The V2 forms (kCompact, TF 2's
// gradients) give only the rows indices picked, in the order of their
// sorted unique indices, which are the second output.
template <typename T, Scale kScale, bool kCompact>
class SparseSegmentGradOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& ids = ctx->input(2);
    TW_RETURN_IF_ERROR(CheckIndexVectors(indices, ids));
    TW_ASSIGN_OR_RETURN(const int64_t rows, IntScalar(ctx->input(3), "output_dim0"));
    if (grad.dims() < 1) return absl::InvalidArgumentError("grad must be at least 1-D");
    if (rows < 0) return absl::InvalidArgumentError("output_dim0 must be non-negative");
    const int64_t n = ids.NumElements(), segments = grad.dim_size(0);
    // The rows of each segment, for the scale.
    std::vector<int64_t> count(segments, 0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = IntAt(ids, i);
      if (id < 0 || id >= segments) return absl::InvalidArgumentError("Invalid number of segments");
      const int64_t index = IntAt(indices, i);
      if (index < 0 || index >= rows) {
        return absl::InvalidArgumentError(
            absl::StrCat("Index ", index, " out of range [0, ", rows, ")."));
      }
      ++count[id];
    }
    // The output row of each index: itself, or (kCompact) its place among
    // the sorted unique indices.
    std::vector<int64_t> unique;
    if constexpr (kCompact) {
      unique.resize(n);
      for (int64_t i = 0; i < n; ++i) unique[i] = IntAt(indices, i);
      std::sort(unique.begin(), unique.end());
      unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
      TW_ASSIGN_OR_RETURN(
          Tensor * sorted,
          ctx->allocate_output(1, TensorShape({static_cast<int64_t>(unique.size())})));
      TW_RETURN_IF_ERROR(WriteInts(unique, sorted));
    }
    const auto out_row = [&](int64_t index) {
      if constexpr (kCompact) {
        return static_cast<int64_t>(std::lower_bound(unique.begin(), unique.end(), index) -
                                    unique.begin());
      } else {
        return index;
      }
    };
    std::vector<int64_t> dims(grad.shape().dim_sizes().begin(), grad.shape().dim_sizes().end());
    dims[0] = kCompact ? static_cast<int64_t>(unique.size()) : rows;
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    T* dst = out->data<T>();
    std::fill_n(dst, out->NumElements(), T(0));
    const int64_t row = segments == 0 ? 0 : grad.NumElements() / segments;
    if (row == 0) return absl::OkStatus();
    // In index order: rows indices repeat add into one output row.
    const T* g = grad.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = IntAt(ids, i);
      MutableRow<T>(dst + out_row(IntAt(indices, i)) * row, row) +=
          Row<T>(g + id * row, row) / static_cast<T>(Divisor(kScale, count[id]));
    }
    return absl::OkStatus();
  }
};

template <Scale kScale>
struct Forward {
  template <typename T>
  using Op = SparseSegmentOp<T, kScale, false>;
  template <typename T>
  using Counted = SparseSegmentOp<T, kScale, true>;
  template <typename T>
  using Grad = SparseSegmentGradOp<T, kScale, false>;
  template <typename T>
  using GradV2 = SparseSegmentGradOp<T, kScale, true>;
};

TW_REGISTER_KERNELS(sparse_segment_ops) {
  const auto cpu = [](const std::string& op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<Forward<Scale::kSum>::Op, float, double, int32_t, int64_t, uint8_t>(
      cpu("SparseSegmentSum"), "T");
  RegisterTypedKernels<Forward<Scale::kSum>::Counted, float, double, int32_t, int64_t, uint8_t>(
      cpu("SparseSegmentSumWithNumSegments").HostMemory("num_segments"), "T");
  RegisterTypedKernels<Forward<Scale::kMean>::Op, float, double>(cpu("SparseSegmentMean"), "T");
  RegisterTypedKernels<Forward<Scale::kMean>::Counted, float, double>(
      cpu("SparseSegmentMeanWithNumSegments").HostMemory("num_segments"), "T");
  RegisterTypedKernels<Forward<Scale::kSqrtN>::Op, float, double>(cpu("SparseSegmentSqrtN"), "T");
  RegisterTypedKernels<Forward<Scale::kSqrtN>::Counted, float, double>(
      cpu("SparseSegmentSqrtNWithNumSegments").HostMemory("num_segments"), "T");
  RegisterTypedKernels<Forward<Scale::kSum>::Grad, float, double>(cpu("SparseSegmentSumGrad"), "T");
  RegisterTypedKernels<Forward<Scale::kMean>::Grad, float, double>(cpu("SparseSegmentMeanGrad"),
                                                                   "T");
  RegisterTypedKernels<Forward<Scale::kSqrtN>::Grad, float, double>(cpu("SparseSegmentSqrtNGrad"),
                                                                    "T");
  RegisterTypedKernels<Forward<Scale::kSum>::GradV2, float, double>(cpu("SparseSegmentSumGradV2"),
                                                                    "T");
  RegisterTypedKernels<Forward<Scale::kMean>::GradV2, float, double>(cpu("SparseSegmentMeanGradV2"),
                                                                     "T");
  RegisterTypedKernels<Forward<Scale::kSqrtN>::GradV2, float, double>(
      cpu("SparseSegmentSqrtNGradV2"), "T");
}

}  // namespace
}  // namespace towerflow
