// Multinomial and StatelessMultinomial (tf.random.categorical), with TF's
// numbers for the same seeds: TF's Philox stream (core/philox.h), a row's
// cumulative sums of exp(logit - max) in double over the finite logits, and
// for each sample the first class whose sum exceeds u * total, u a double
// from two 32-bit words (TF's Uint64ToDouble). Row b draws the words from
// 2 * num_samples * b on, as TF's kernel does when one thread takes every
// row (TF starts each thread's rows elsewhere, so its numbers for large
// inputs depend on its thread count; these do not). A row whose logits are
// all -inf (or NaN) gives num_classes, as TF's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"
#include "kernels/random_op_base.h"

namespace towerflow {
namespace {

template <typename T, typename Out>
void Sample(KernelContext* ctx, const Tensor& logits, int64_t samples, const PhiloxStream& base,
            Tensor* out) {
  const int64_t rows = logits.dim_size(0), classes = logits.dim_size(1);
  const T* x = logits.data<T>();
  Out* o = out->data<Out>();
  ctx->intra_op_pool()->ParallelFor(
      rows, 50 * (samples * 8 + classes), [&](int64_t r0, int64_t r1) {
        std::vector<double> cdf(classes);
        for (int64_t b = r0; b < r1; ++b) {
          const T* row = x + b * classes;
          double max = std::numeric_limits<double>::lowest();
          for (int64_t j = 0; j < classes; ++j) {
            const double v = static_cast<double>(row[j]);
            if (std::isfinite(v)) max = std::max(max, v);
          }
          double total = 0;
          for (int64_t j = 0; j < classes; ++j) {
            const double v = static_cast<double>(row[j]);
            if (std::isfinite(v)) total += std::exp(v - max);
            cdf[j] = total;
          }
          // The row's words: 2 * samples of them from 2 * samples * b on.
          const uint64_t first = static_cast<uint64_t>(2 * samples * b);
          PhiloxStream stream = base;
          stream.Skip(first / 4);
          PhiloxWords words(&stream);
          for (uint64_t k = 0; k < first % 4; ++k) words.Next();
          for (int64_t s = 0; s < samples; ++s) {
            const double find = words.UniformDouble() * total;
            o[b * samples + s] =
                static_cast<Out>(std::upper_bound(cdf.begin(), cdf.end(), find) - cdf.begin());
          }
        }
      });
}

// The checks (TF's messages) and the draw from `base`.
absl::Status Draw(KernelContext* ctx, const PhiloxStream& base) {
  const Tensor& logits = ctx->input(0);
  const Tensor& count = ctx->input(1);
  if (logits.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("logits should be a matrix, got shape ", logits.shape().DebugString()));
  }
  if (count.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_samples should be a scalar, got shape ", count.shape().DebugString()));
  }
  const int64_t samples = *count.data<int32_t>();
  if (samples < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_samples should be non-negative, got ", samples));
  }
  if (logits.dim_size(0) > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError("batch_size cannot exceed max int");
  }
  if (logits.dim_size(1) > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError("num_classes cannot exceed max int");
  }
  if (logits.dim_size(1) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_classes should be positive, got ", logits.dim_size(1)));
  }
  TW_ASSIGN_OR_RETURN(Tensor * out,
                      ctx->allocate_output(0, TensorShape({logits.dim_size(0), samples})));
  if (out->NumElements() == 0) return absl::OkStatus();
  bool done = false;
  VisitNumberType(logits.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!kIsComplex<T>) {
      if (out->dtype() == DT_INT32) {
        Sample<T, int32_t>(ctx, logits, samples, base, out);
      } else {
        Sample<T, int64_t>(ctx, logits, samples, base, out);
      }
      done = true;
    }
  });
  if (!done) return UnsupportedDtype("Multinomial", logits.dtype());
  return absl::OkStatus();
}

// Blocks TF reserves per call: 256 per word its CPU kernel may take.
uint64_t ReservedBlocks(const KernelContext& ctx) {
  const int64_t rows = ctx.input(0).dims() == 2 ? ctx.input(0).dim_size(0) : 0;
  const int64_t samples = ctx.input(1).dims() == 0 ? *ctx.input(1).data<int32_t>() : 0;
  if (rows <= 0 || samples <= 0) return 0;
  return static_cast<uint64_t>(rows) * static_cast<uint64_t>((samples + 3) / 4 * 4 * 2) * 256;
}

class MultinomialOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return generator_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    return Draw(ctx, generator_.Reserve(ReservedBlocks(*ctx)));
  }

 private:
  GuardedPhilox generator_;
};

class StatelessMultinomialOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& seed = ctx->input(2);
    if (seed.dims() != 1 || seed.dim_size(0) != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("seed must have shape [2], not ", seed.shape().DebugString()));
    }
    PhiloxKey key;
    PhiloxBlock counter;
    StatelessKeyCounter(static_cast<uint64_t>(IntAt(seed, 0)),
                        static_cast<uint64_t>(IntAt(seed, 1)), &key, &counter);
    return Draw(ctx, PhiloxStream(counter, key));
  }
};

}  // namespace

TW_REGISTER_KERNELS(multinomial_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  for (const DataType t : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    RegisterKernel(cpu("Multinomial").TypeConstraint("T", t), MakeFactory<MultinomialOp>());
    RegisterKernel(cpu("StatelessMultinomial").TypeConstraint("T", t),
                   MakeFactory<StatelessMultinomialOp>());
  }
}

}  // namespace towerflow
