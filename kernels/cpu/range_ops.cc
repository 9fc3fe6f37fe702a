// LinSpace and RaggedRange (Range itself is in shape_ops.cc).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// The most elements one op's range may make (as Range: 2^40).
constexpr int64_t kMaxRangeElements = int64_t{1} << 40;

// LinSpace(start, stop, num): start + i * (stop - start) / (num - 1), the
// step and the sums in T, the last value stop itself (TF's).
template <typename T>
class LinSpaceOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    static constexpr const char* kNames[] = {"start", "stop", "num"};
    for (int i = 0; i < 3; ++i) {
      if (ctx->input(i).dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(kNames[i], " must be a scalar, not shape ",
                                                       ctx->input(i).shape().DebugString()));
      }
    }
    const T start = *ctx->input(0).data<T>(), stop = *ctx->input(1).data<T>();
    const int64_t num = IntAt(ctx->input(2), 0);
    if (num <= 0) return absl::InvalidArgumentError(absl::StrCat("Requires num > 0: ", num));
    if (num > kMaxRangeElements) {
      return absl::InvalidArgumentError(absl::StrCat("LinSpace of ", num, " values is too large"));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({num})));
    T* o = out->data<T>();
    if (num == 1) {
      o[0] = start;
      return absl::OkStatus();
    }
    const T step = (stop - start) / static_cast<T>(num - 1);
    for (int64_t i = 0; i < num - 1; ++i) o[i] = start + step * static_cast<T>(i);
    o[num - 1] = stop;
    return absl::OkStatus();
  }
};

// RaggedRange(starts, limits, deltas): row i is Range(starts[i], limits[i],
// deltas[i]) (scalars broadcast), empty where the range runs the other way;
// the rows' splits and their values. Values accumulate in T, as TF's.
template <typename T, typename Splits>
class RaggedRangeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    static constexpr const char* kNames[] = {"starts", "limits", "deltas"};
    int64_t rows = 1;
    bool any_vector = false;
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(kNames[i], " must be a scalar or vector"));
      }
      if (t.dims() == 1) {
        if (any_vector && t.NumElements() != rows) {
          return absl::InvalidArgumentError("starts, limits, and deltas must have the same shape");
        }
        rows = t.NumElements();
        any_vector = true;
      }
    }
    const auto at = [&](int i, int64_t row) {
      const Tensor& t = ctx->input(i);
      return t.data<T>()[t.dims() == 0 ? 0 : row];
    };
    std::vector<int64_t> splits(rows + 1, 0);
    for (int64_t r = 0; r < rows; ++r) {
      const T start = at(0, r), limit = at(1, r), delta = at(2, r);
      if (delta == T(0)) return absl::InvalidArgumentError("Requires delta != 0");
      int64_t size = 0;
      if ((delta > T(0) && limit > start) || (delta < T(0) && limit < start)) {
        if constexpr (std::is_integral_v<T>) {
          const __int128 span = static_cast<__int128>(limit) - start;
          const __int128 step = delta < 0 ? -static_cast<__int128>(delta) : delta;
          size = static_cast<int64_t>(((span < 0 ? -span : span) + step - 1) / step);
        } else {
          const double count = std::ceil(std::abs(static_cast<double>((limit - start) / delta)));
          if (!(count <= static_cast<double>(std::numeric_limits<int64_t>::max()))) {
            return absl::InvalidArgumentError(absl::StrCat("Requires ((limit - start) / delta) <= ",
                                                           std::numeric_limits<int64_t>::max()));
          }
          size = static_cast<int64_t>(count);
        }
      }
      splits[r + 1] = splits[r] + size;
      if (splits[r + 1] > kMaxRangeElements ||
          splits[r + 1] > static_cast<int64_t>(std::numeric_limits<Splits>::max())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "RaggedRange's rows hold more than ",
            std::min<int64_t>(kMaxRangeElements, std::numeric_limits<Splits>::max()), " values"));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * splits_out, ctx->allocate_output(0, TensorShape({rows + 1})));
    TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(1, TensorShape({splits[rows]})));
    Splits* s = splits_out->data<Splits>();
    for (int64_t r = 0; r <= rows; ++r) s[r] = static_cast<Splits>(splits[r]);
    T* v = values->data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      T value = at(0, r);
      const T delta = at(2, r);
      for (int64_t j = splits[r]; j < splits[r + 1]; ++j) {
        v[j] = value;
        value += delta;
      }
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterRaggedRange() {
  const auto def = [] {
    return KernelDefBuilder("RaggedRange").Device(kDeviceCpu).TypeConstraint<T>("T");
  };
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int32_t>("Tsplits"),
                 MakeFactory<RaggedRangeOp<T, int32_t>>());
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int64_t>("Tsplits"),
                 MakeFactory<RaggedRangeOp<T, int64_t>>());
}

TW_REGISTER_KERNELS(range_ops) {
  RegisterTypedKernels<LinSpaceOp, float, double>(KernelDefBuilder("LinSpace").Device(kDeviceCpu),
                                                  "T");
  RegisterRaggedRange<float>();
  RegisterRaggedRange<double>();
  RegisterRaggedRange<int32_t>();
  RegisterRaggedRange<int64_t>();
}

}  // namespace
}  // namespace towerflow
