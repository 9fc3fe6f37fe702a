// The segment reductions over data rows:
//   UnsortedSegment{Sum,Max,Min,Prod}(data, ids, num_segments):
//     output[ids[i], ...] (+)= data[i, ...]; negative ids are dropped; a
//     segment nobody names keeps the reduction's identity (0, the type's
//     lowest, its highest, 1), as TF. UnsortedSegmentSum also densifies
//     IndexedSlices gradients (ops/gradients.h).
//   Segment{Sum,Mean,Max,Min,Prod}(data, ids): ids a vector of sorted
//     segment numbers, one per row; output has ids[N-1] + 1 rows, and a
//     segment no row names is 0 (1 for Prod), as TF.
//
// Shapes: data [I..., R...] with ids [I...] (sorted: I is one dim); output
// [segments, R...]. Rows combine through Eigen maps of R elements; sorted
// segments are reduced in parallel (each writes its own output row),
// unsorted ones in one pass.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/tensor_views.h"
#include "framework/threadpool.h"
#include "kernels/cpu/cwise_ops.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

enum class Reduce { kSum, kMean, kProd, kMax, kMin };

template <typename T>
using Row = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutableRow = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T, Reduce R>
struct Reducer {
  // The value a segment starts from.
  static T Identity() {
    if constexpr (R == Reduce::kProd) return T(1);
    if constexpr (R == Reduce::kMax) return std::numeric_limits<T>::lowest();
    if constexpr (R == Reduce::kMin) return std::numeric_limits<T>::max();
    return T(0);
  }
  static void Combine(MutableRow<T> dst, const Row<T>& src) {
    if constexpr (R == Reduce::kSum || R == Reduce::kMean) dst += src;
    if constexpr (R == Reduce::kProd) dst *= src;
    if constexpr (R == Reduce::kMax) dst = dst.max(src);
    if constexpr (R == Reduce::kMin) dst = dst.min(src);
  }
};

// The shape checks both kinds share: ids a prefix of data's shape.
absl::Status CheckIds(const Tensor& data, const Tensor& ids) {
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
  return absl::OkStatus();
}

// [segments] followed by data's dims after ids'.
absl::StatusOr<TensorShape> OutputShape(const Tensor& data, int ids_rank, int64_t segments) {
  std::vector<int64_t> dims = {segments};
  for (int i = ids_rank; i < data.dims(); ++i) dims.push_back(data.shape().dim_size(i));
  return TensorShape::FromDims(dims);
}

template <typename T, Reduce R>
class UnsortedSegmentOp : public OpKernel {
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
      return absl::UnimplementedError(absl::StrCat(ctx->op(),
                                                   " on CPU takes int32 or int64 segment_ids, got ",
                                                   DataTypeString(ids.dtype())));
    }
    TW_RETURN_IF_ERROR(CheckIds(data, ids));
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, OutputShape(data, ids.dims(), num_segments));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    T* dst = RawData<T>(*out);
    std::fill_n(dst, out->NumElements(), Reducer<T, R>::Identity());
    const int64_t n = ids.NumElements();
    const int64_t row = n == 0 ? 0 : data.NumElements() / n;
    const T* in = RawData<T>(data);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = IntAt(ids, i);
      if (id < 0) continue;  // dropped, as TensorFlow
      if (id >= num_segments) {
        return absl::InvalidArgumentError(absl::StrCat("segment_ids[", i, "] = ", id,
                                                       " is out of range [0, ", num_segments, ")"));
      }
      Reducer<T, R>::Combine(MutableRow<T>(dst + id * row, row), Row<T>(in + i * row, row));
    }
    return absl::OkStatus();
  }
};

template <typename T, Reduce R>
class SortedSegmentOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    if (ids.dims() != 1) return absl::InvalidArgumentError("segment_ids should be a vector.");
    if (data.dims() < 1 || ids.NumElements() != data.shape().dim_size(0)) {
      return absl::InvalidArgumentError(
          "segment_ids should be the same size as dimension 0 of input.");
    }
    const int64_t n = ids.NumElements();
    const int64_t last = n == 0 ? -1 : IntAt(ids, n - 1);
    if (last == std::numeric_limits<int64_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat("Segment id ", last, " is too large"));
    }
    const int64_t segments = std::max<int64_t>(last + 1, 0);
    // Where each run of equal ids starts, checked sorted and in range.
    std::vector<int64_t> starts;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = IntAt(ids, i);
      if (id < 0 || id >= segments) {
        return absl::InvalidArgumentError(
            absl::StrCat("Segment id ", id, " out of range [0, ", segments,
                         "), possibly because 'segment_ids' input is not sorted."));
      }
      if (i > 0 && id < IntAt(ids, i - 1)) {
        return absl::InvalidArgumentError("segment ids are not increasing");
      }
      if (i == 0 || id != IntAt(ids, i - 1)) starts.push_back(i);
    }
    starts.push_back(n);
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, OutputShape(data, 1, segments));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    T* dst = RawData<T>(*out);
    // Segments no row names.
    std::fill_n(dst, out->NumElements(), R == Reduce::kProd ? T(1) : T(0));
    const int64_t row = n == 0 ? 0 : data.NumElements() / n;
    const T* in = RawData<T>(data);
    const int64_t runs = static_cast<int64_t>(starts.size()) - 1;
    ctx->intra_op_pool()->ParallelFor(runs, (n / std::max<int64_t>(runs, 1) + 1) * row,
                                      [&](int64_t begin, int64_t end) {
                                        for (int64_t r = begin; r < end; ++r) {
                                          const int64_t first = starts[r], last = starts[r + 1];
                                          MutableRow<T> acc(dst + IntAt(ids, first) * row, row);
                                          acc.setConstant(Reducer<T, R>::Identity());
                                          for (int64_t i = first; i < last; ++i) {
                                            Reducer<T, R>::Combine(acc, Row<T>(in + i * row, row));
                                          }
                                          if constexpr (R == Reduce::kMean)
                                            acc /= static_cast<T>(last - first);
                                        }
                                      });
    return absl::OkStatus();
  }
};

#define TW_SEGMENT_ALIASES(Name, R)                \
  template <typename T>                            \
  using Segment##Name##Op = SortedSegmentOp<T, R>; \
  template <typename T>                            \
  using UnsortedSegment##Name##Op = UnsortedSegmentOp<T, R>;
TW_SEGMENT_ALIASES(Sum, Reduce::kSum)
TW_SEGMENT_ALIASES(Mean, Reduce::kMean)
TW_SEGMENT_ALIASES(Prod, Reduce::kProd)
TW_SEGMENT_ALIASES(Max, Reduce::kMax)
TW_SEGMENT_ALIASES(Min, Reduce::kMin)
#undef TW_SEGMENT_ALIASES

TW_REGISTER_KERNELS(segment_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<UnsortedSegmentSumOp, float, double, int32_t, int64_t>(
      cpu("UnsortedSegmentSum"), "T");
#define TW_REGISTER_SEGMENT(Name)                                                    \
  RegisterTypedKernels<Segment##Name##Op, float, double, int32_t, int64_t, uint8_t>( \
      cpu("Segment" #Name), "T");
  TW_REGISTER_SEGMENT(Sum)
  TW_REGISTER_SEGMENT(Mean)
  TW_REGISTER_SEGMENT(Prod)
  TW_REGISTER_SEGMENT(Max)
  TW_REGISTER_SEGMENT(Min)
#undef TW_REGISTER_SEGMENT
#define TW_REGISTER_UNSORTED(Name)                                                           \
  RegisterTypedKernels<UnsortedSegment##Name##Op, float, double, int32_t, int64_t, uint8_t>( \
      cpu("UnsortedSegment" #Name), "T");
  TW_REGISTER_UNSORTED(Prod)
  TW_REGISTER_UNSORTED(Max)
  TW_REGISTER_UNSORTED(Min)
#undef TW_REGISTER_UNSORTED
}

}  // namespace
}  // namespace towerflow
