// What _FusedConv2D and _FusedMatMul do after their product (the nodes the
// session's remapper makes, runtime/graph_optimizer.h; TF's names and
// attrs). `fused_ops` lists the steps:
//   "BiasAdd"        args: bias [C]                  y + bias
//   "FusedBatchNorm" args: scale, offset, mean,      scale * (y - mean)
//                    variance [C] (inference only)   * rsqrt(variance + epsilon) + offset
// then optionally "Relu" or "Relu6" (the Relu and Relu6 kernels' functors). Both steps are per
// channel (the last dimension of the NHWC or [M, N] result), so they become a scale folded into the
// filter's output channels and a shift added with the activation in one pass over the result (or by
// oneDNN itself).
#ifndef TOWERFLOW_KERNELS_CPU_FUSED_OPS_H_
#define TOWERFLOW_KERNELS_CPU_FUSED_OPS_H_

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/tensor.h"
#include "framework/threadpool.h"
#include "kernels/cwise_functors.h"

namespace towerflow {

enum class FusedActivation { kNone, kRelu, kRelu6 };

struct FusedOps {
  bool batch_norm = false;  // else BiasAdd
  FusedActivation activation = FusedActivation::kNone;
  float epsilon = 1e-4f;
  int num_args = 1;
};

// Reads fused_ops, num_args and epsilon. InvalidArgument for a list this
// kernel does not compute (FusedBatchNorm only with `allow_batch_norm`) or
// num_args not matching it.
inline absl::StatusOr<FusedOps> ReadFusedOps(const KernelConstruction& c, bool allow_batch_norm) {
  std::vector<std::string> ops;
  FusedOps f;
  int64_t num_args = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("fused_ops", &ops));
  TW_RETURN_IF_ERROR(c.GetAttr("num_args", &num_args));
  TW_RETURN_IF_ERROR(c.GetAttr("epsilon", &f.epsilon));
  const auto unsupported = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "fused_ops [", absl::StrJoin(ops, ", "), "] is not supported: expected BiasAdd",
        allow_batch_norm ? " or FusedBatchNorm" : "", ", then optionally Relu or Relu6"));
  };
  if (ops.empty() || ops.size() > 2) return unsupported();
  if (ops[0] == "FusedBatchNorm" && allow_batch_norm) {
    f.batch_norm = true;
    f.num_args = 4;
  } else if (ops[0] != "BiasAdd") {
    return unsupported();
  }
  if (ops.size() == 2) {
    if (ops[1] == "Relu") {
      f.activation = FusedActivation::kRelu;
    } else if (ops[1] == "Relu6") {
      f.activation = FusedActivation::kRelu6;
    } else {
      return unsupported();
    }
  }
  if (num_args != f.num_args) {
    return absl::InvalidArgumentError(absl::StrCat("fused_ops [", absl::StrJoin(ops, ", "),
                                                   "] takes ", f.num_args, " args, got num_args ",
                                                   num_args));
  }
  if (f.batch_norm && !(f.epsilon >= 0.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("epsilon must be >= 0, got ", f.epsilon));
  }
  return f;
}

// A per-channel y * scale + shift; `scale` empty for BiasAdd.
template <typename T>
struct ChannelAffine {
  std::vector<T> scale;
  std::vector<T> shift;
};

// The ChannelAffine of `f` over `channels` channels, from the kernel's
// inputs [first_arg, first_arg + num_args). InvalidArgument for an arg that
// is not a vector of `channels`.
template <typename T>
absl::StatusOr<ChannelAffine<T>> FusedChannelAffine(KernelContext* ctx, const FusedOps& f,
                                                    int first_arg, int64_t channels) {
  static constexpr const char* kBatchNormArgs[] = {"scale", "offset", "mean", "variance"};
  for (int i = 0; i < f.num_args; ++i) {
    const Tensor& t = ctx->input(first_arg + i);
    if (t.dims() != 1 || t.dim_size(0) != channels) {
      return absl::InvalidArgumentError(
          absl::StrCat(f.batch_norm ? kBatchNormArgs[i] : "bias", " must be a vector of the ",
                       channels, " output channels, got shape ", t.shape().DebugString()));
    }
  }
  ChannelAffine<T> a;
  const T* first = ctx->input(first_arg).data<T>();
  if (!f.batch_norm) {
    a.shift.assign(first, first + channels);
    return a;
  }
  const T* offset = ctx->input(first_arg + 1).data<T>();
  const T* mean = ctx->input(first_arg + 2).data<T>();
  const T* variance = ctx->input(first_arg + 3).data<T>();
  a.scale.resize(channels);
  a.shift.resize(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a.scale[c] = first[c] / std::sqrt(variance[c] + static_cast<T>(f.epsilon));
    a.shift[c] = offset[c] - mean[c] * a.scale[c];
  }
  return a;
}

// y[r, c] = act(y[r, c] + shift[c]) over `rows` rows of `channels`.
template <typename T>
void AddShiftAndActivate(ThreadPool* pool, T* y, int64_t rows, int64_t channels, const T* shift,
                         FusedActivation act) {
  const auto run = [&](auto activate) {
    pool->ParallelFor(rows, 2 * channels, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        T* row = y + r * channels;
        for (int64_t c = 0; c < channels; ++c) row[c] = activate(row[c] + shift[c]);
      }
    });
  };
  switch (act) {
    case FusedActivation::kNone:
      return run([](T v) { return v; });
    case FusedActivation::kRelu:
      return run(functor::Relu<T>());
    case FusedActivation::kRelu6:
      return run(functor::Relu6<T>());
  }
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_FUSED_OPS_H_
