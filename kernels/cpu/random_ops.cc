// Seeded random kernels: RandomUniform, RandomStandardNormal,
// TruncatedNormal, RandomUniformInt and RandomShuffle.
//
// Note [Random streams]
// Numbers come from Philox4x32-10 (Salmon et al., "Parallel random numbers:
// as easy as 1, 2, 3"), a counter-based generator: output = Philox(key,
// counter). The key is the node's (seed, seed2) attrs — set from the graph
// seed and the op seed when the graph is built (graph/random_seed.h) — or,
// when both are 0, random bits from the OS, as TF. Each call reserves a
// range of counters under a lock, so successive Session::Run calls draw
// fresh numbers while a graph with fixed seeds replays the same sequence;
// element i of a call uses counter (base + i, attempt), so shards of the
// output are filled in parallel, independent of the thread count, and the
// rejection loop of TruncatedNormal (|x| > 2 is redrawn) only advances
// `attempt` for that element. The streams are not bit-identical to TF's.
#include <cmath>
#include <cstring>
#include <random>

#include "absl/synchronization/mutex.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "runtime/device.h"
#include "runtime/threadpool.h"

namespace towerflow {
namespace {

using Block = std::array<uint32_t, 4>;

Block Philox(Block ctr, std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kM0} * ctr[0], p1 = uint64_t{kM1} * ctr[2];
    ctr = {static_cast<uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += kW0;
    key[1] += kW1;
  }
  return ctr;
}

// A uniform float in [0, 1) from 32 random bits (24 significant).
inline double Uniform01(uint32_t bits) { return (bits >> 8) * (1.0 / 16777216.0); }

class RandomKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    int64_t seed = 0, seed2 = 0;
    TW_RETURN_IF_ERROR(c.GetAttr("seed", &seed));
    TW_RETURN_IF_ERROR(c.GetAttr("seed2", &seed2));
    if (seed == 0 && seed2 == 0) {
      std::random_device rd;
      seed = rd();
      seed2 = rd();
    }
    // Mix both seeds into the 64-bit key.
    const Block k = Philox({static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                            static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)},
                           {0x5EEDu, 0xC0FFEEu});
    key_ = {k[0], k[1]};
    return absl::OkStatus();
  }

 protected:
  // The first counter of `n` fresh ones.
  uint64_t Reserve(uint64_t n) {
    absl::MutexLock lock(&mu_);
    const uint64_t base = next_;
    next_ += n;
    return base;
  }
  Block Draw(uint64_t index, uint32_t attempt) const {
    return Philox({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), attempt, 0},
                  key_);
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

 private:
  std::array<uint32_t, 2> key_{};
  absl::Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

// A standard normal from one draw (Box-Muller on its first two words).
inline double Normal(const Block& b) {
  const double u1 = (static_cast<double>(b[0]) + 1.0) / 4294967296.0;  // (0, 1]
  const double u2 = Uniform01(b[1]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

template <typename T>
class RandomUniformOp : public RandomKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateFromShapeInput(ctx));
    const uint64_t base = Reserve(out->NumElements());
    Fill<T>(ctx, out, [&](int64_t i) { return static_cast<T>(Uniform01(Draw(base + i, 0)[0])); });
    return absl::OkStatus();
  }
};

template <typename T, bool kTruncated>
class RandomNormalOp : public RandomKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, AllocateFromShapeInput(ctx));
    const uint64_t base = Reserve(out->NumElements());
    Fill<T>(ctx, out, [&](int64_t i) {
      double x = Normal(Draw(base + i, 0));
      if constexpr (kTruncated) {
        for (uint32_t attempt = 1; std::abs(x) > 2.0; ++attempt)
          x = Normal(Draw(base + i, attempt));
      }
      return static_cast<T>(x);
    });
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
      const Block b = Draw(base + i, 0);
      const uint64_t bits = (uint64_t{b[0]} << 32) | b[1];
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
      const Block b = Draw(base + i, 0);
      const uint64_t bits = (uint64_t{b[0]} << 32) | b[1];
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
