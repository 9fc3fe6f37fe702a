// Seeded random kernels: RandomUniform, RandomStandardNormal,
// TruncatedNormal, RandomUniformInt and RandomShuffle, TF's numbers.
//
// Note [Random streams]
// Numbers come from Philox4x32-10 (core/philox.h, shared with the GPU
// kernels, which draw the same numbers), a counter-based generator: block =
// Philox(key, counter). The key is the node's seed attr and the counter's
// high half its seed2 — set from the graph seed and the op seed when the
// graph is built (graph/random_seed.h) — or, when both are 0, random bits
// from the OS, as TF. Each call reserves 256 blocks per output under a lock
// (TF's GuardedPhiloxRandom), so successive Session::Run calls draw fresh
// numbers while a graph with fixed seeds replays the same sequence; the
// output is laid out in TF's groups (core/philox.h's PhiloxGroup), each
// computed from its own blocks, so groups fill in parallel, independent of
// the thread count, and a TF graph's seeded initialisers and dropout masks
// draw TF's numbers.
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/philox.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/cpu/philox_fill.h"
#include "kernels/kernel_util.h"
#include "kernels/random_op_base.h"

namespace towerflow {
namespace {

absl::StatusOr<Tensor*> AllocateFromShapeInput(KernelContext* ctx) {
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "shape"));
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  return ctx->allocate_output(0, shape);
}

// RandomUniform, RandomStandardNormal, TruncatedNormal.
template <PhiloxDist kDist>
struct RealOps {
  template <typename T>
  class Op : public RandomOpBase {
   public:
    absl::Status Compute(KernelContext* ctx) override {
      TW_ASSIGN_OR_RETURN(Tensor * out, AllocateFromShapeInput(ctx));
      const int64_t n = out->NumElements();
      FillPhilox(kDist, generator().ReserveOutputs(n), out->data<T>(), n, ctx->intra_op_pool());
      return absl::OkStatus();
    }
  };
};

// RandomUniformInt(shape, minval, maxval): uniform in [minval, maxval), a
// word (two, low first, for int64) modulo the range, as TF's.
template <typename T>
class RandomUniformIntOp : public RandomOpBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& lo_t = ctx->input(1);
    const Tensor& hi_t = ctx->input(2);
    if (lo_t.dims() != 0 || hi_t.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("minval and maxval must be 0-D, got shapes ",
                                                     lo_t.shape().DebugString(), " and ",
                                                     hi_t.shape().DebugString()));
    }
    const T lo = *lo_t.data<T>(), hi = *hi_t.data<T>();
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateFromShapeInput(ctx));
    const int64_t n = out->NumElements();
    if (n == 0) return absl::OkStatus();
    if (!(lo < hi)) {
      return absl::InvalidArgumentError(absl::StrCat("Need minval < maxval, got ", lo, " >= ", hi));
    }
    PhiloxStream stream = generator().ReserveOutputs(n);
    using U = std::make_unsigned_t<T>;
    const U range = static_cast<U>(hi) - static_cast<U>(lo);
    PhiloxWords words(&stream);
    T* y = out->data<T>();
    for (int64_t i = 0; i < n; ++i) {
      U bits = words.Next();
      if constexpr (sizeof(T) == 8) bits |= uint64_t{words.Next()} << 32;
      y[i] = static_cast<T>(static_cast<U>(lo) + bits % range);
    }
    return absl::OkStatus();
  }
};

// RandomShuffle's permutation of value's first dimension, TF's: for i = 0
// .. n-2, swap i with i + word % (n - i), a word at a time (two, low first,
// past 2^32 rows). `stream` is what the draws come from: the stateful op
// reserves its n - 1 words from its generator, the stateless one starts
// at its key and counter.
absl::Status ShuffleRows(KernelContext* ctx, const char* op,
                         const std::function<PhiloxStream(uint64_t blocks)>& stream) {
  const Tensor& in = ctx->input(0);
  if (in.NumElements() <= 1 || in.dims() == 0 || in.dim_size(0) <= 1) {
    return ctx->set_output(0, in);
  }
  if (in.dtype() == DT_RESOURCE || in.dtype() == DT_VARIANT) {
    return UnsupportedDtype(op, in.dtype());
  }
  const int64_t n = in.dim_size(0);
  const bool wide = n >= std::numeric_limits<int32_t>::max();
  const uint64_t words = static_cast<uint64_t>(n - 1) * (wide ? 2 : 1);
  PhiloxStream philox = stream((words + 3) / 4);
  PhiloxWords draw(&philox);
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t i = 0; i + 1 < n; ++i) {
    uint64_t r = draw.Next();
    if (wide) r |= uint64_t{draw.Next()} << 32;
    std::swap(perm[i], perm[i + static_cast<int64_t>(r % static_cast<uint64_t>(n - i))]);
  }
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
  const int64_t row = in.NumElements() / n;
  if (in.dtype() == DT_STRING) {
    const std::string* src = in.data<std::string>();
    std::string* dst = out->data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      std::copy(src + perm[i] * row, src + (perm[i] + 1) * row, dst + i * row);
    }
    return absl::OkStatus();
  }
  const size_t bytes = TensorElementSize(in.dtype()) * row;
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out->raw_data());
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * bytes, src + perm[i] * bytes, bytes);
  return absl::OkStatus();
}

class RandomShuffleOp : public RandomOpBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    return ShuffleRows(ctx, "RandomShuffle",
                       [&](uint64_t blocks) { return generator().Reserve(blocks); });
  }
};

// StatelessShuffle(value, key, counter, alg).
class StatelessShuffleOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const PhiloxStream start, StatelessStream(ctx, /*v2=*/true, 1));
    return ShuffleRows(ctx, "StatelessShuffle", [&](uint64_t) { return start; });
  }
};

TW_REGISTER_KERNELS(random_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<RealOps<PhiloxDist::kUniform>::Op, half, bfloat16, float, double>(
      cpu("RandomUniform"), "dtype");
  RegisterTypedKernels<RealOps<PhiloxDist::kNormal>::Op, half, bfloat16, float, double>(
      cpu("RandomStandardNormal"), "dtype");
  RegisterTypedKernels<RealOps<PhiloxDist::kTruncatedNormal>::Op, half, bfloat16, float, double>(
      cpu("TruncatedNormal"), "dtype");
  RegisterTypedKernels<RandomUniformIntOp, int32_t, int64_t>(cpu("RandomUniformInt"), "Tout");
  RegisterKernel(cpu("RandomShuffle"), MakeFactory<RandomShuffleOp>());
  RegisterKernel(KernelDefBuilder("StatelessShuffle")
                     .Device(kDeviceCpu)
                     .HostMemory("key")
                     .HostMemory("counter")
                     .HostMemory("alg"),
                 MakeFactory<StatelessShuffleOp>());
}

}  // namespace
}  // namespace towerflow
