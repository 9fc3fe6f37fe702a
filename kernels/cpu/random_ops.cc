// Seeded random kernels: RandomUniform, RandomStandardNormal,
// TruncatedNormal, RandomUniformInt and RandomShuffle.
//
// Note [Random streams]
// Numbers come from Philox4x32-10 (kernels/philox.h, shared with the GPU
// kernels, which draw the same numbers), a counter-based generator: output = Philox(key,
// counter). The key is the node's (seed, seed2) attrs — set from the graph
// seed and the op seed when the graph is built (graph/random_seed.h) — or,
// when both are 0, random bits from the OS, as TF. Each call reserves a
// range of counters under a lock, so successive Session::Run calls draw
// fresh numbers while a graph with fixed seeds replays the same sequence;
// element i of a call uses counter (base + i, attempt), so shards of the
// output are filled in parallel, independent of the thread count, and the
// rejection loop of TruncatedNormal (|x| > 2 is redrawn) only advances
// `attempt` for that element. The streams are not bit-identical to TF's.
#include <cstring>

#include "kernels/kernel_util.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "core/philox.h"
#include "kernels/random_op_base.h"
#include "framework/device.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace {

// The CPU's draws: element i of a call from PhiloxDraw(key, base + i, ...).
class RandomKernel : public RandomOpBase {
 protected:
  PhiloxBlock Draw(uint64_t index, uint32_t attempt) const {
    return PhiloxDraw(key(), index, attempt);
  }

  absl::StatusOr<Tensor*> AllocateFromShapeInput(KernelContext* ctx) {
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    return ctx->allocate_output(0, shape);
  }

  // Fills out[i] = f(i) over the intra-op pool.
  template <typename T, typename F>
  static void Fill(KernelContext* ctx, Tensor* out, F f) {
    T* o = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(out->NumElements(), 100, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = f(i);
    });
  }
};

template <typename T>
class RandomUniformOp : public RandomKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateFromShapeInput(ctx));
    const uint64_t base = Reserve(out->NumElements());
    Fill<T>(ctx, out,
            [&](int64_t i) { return static_cast<T>(PhiloxUniform01(Draw(base + i, 0).v[0])); });
    return absl::OkStatus();
  }
};

template <typename T, bool kTruncated>
class RandomNormalOp : public RandomKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateFromShapeInput(ctx));
    const uint64_t base = Reserve(out->NumElements());
    Fill<T>(ctx, out,
            [&](int64_t i) { return static_cast<T>(PhiloxNormalAt(key(), base + i, kTruncated)); });
    return absl::OkStatus();
  }
};

// RandomUniformInt(shape, minval, maxval): uniform in [minval, maxval).
template <typename T>
class RandomUniformIntOp : public RandomKernel {
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
    if (out->NumElements() == 0) return absl::OkStatus();
    if (!(lo < hi)) {
      return absl::InvalidArgumentError(absl::StrCat("Need minval < maxval, got ", lo, " >= ", hi));
    }
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    const uint64_t base = Reserve(out->NumElements());
    Fill<T>(ctx, out, [&](int64_t i) {
      const PhiloxBlock b = Draw(base + i, 0);
      const uint64_t bits = (uint64_t{b.v[0]} << 32) | b.v[1];
      return static_cast<T>(static_cast<uint64_t>(lo) + bits % range);
    });
    return absl::OkStatus();
  }
};

// RandomShuffle(value): a permutation of value's first dimension.
class RandomShuffleOp : public RandomKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dims() == 0 || in.dim_size(0) <= 1) return ctx->set_output(0, in);
    if (in.dtype() == DT_STRING || in.dtype() == DT_RESOURCE) {
      return UnsupportedDtype("RandomShuffle", in.dtype());
    }
    const int64_t n = in.dim_size(0);
    const size_t row = TensorElementSize(in.dtype()) * (in.NumElements() / n);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    std::vector<int64_t> perm(n);
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    const uint64_t base = Reserve(n);
    for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
      const PhiloxBlock b = Draw(base + i, 0);
      const uint64_t bits = (uint64_t{b.v[0]} << 32) | b.v[1];
      std::swap(perm[i], perm[bits % static_cast<uint64_t>(i + 1)]);
    }
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * row, src + perm[i] * row, row);
    return absl::OkStatus();
  }
};

template <typename T>
using RandomStandardNormalOp = RandomNormalOp<T, false>;
template <typename T>
using TruncatedNormalOp = RandomNormalOp<T, true>;

TW_REGISTER_KERNELS(random_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<RandomUniformOp, float, double>(cpu("RandomUniform"), "dtype");
  RegisterTypedKernels<RandomStandardNormalOp, float, double>(cpu("RandomStandardNormal"), "dtype");
  RegisterTypedKernels<TruncatedNormalOp, float, double>(cpu("TruncatedNormal"), "dtype");
  RegisterTypedKernels<RandomUniformIntOp, int32_t, int64_t>(cpu("RandomUniformInt"), "Tout");
  RegisterKernel(cpu("RandomShuffle"), MakeFactory<RandomShuffleOp>());
}

}  // namespace
}  // namespace towerflow
